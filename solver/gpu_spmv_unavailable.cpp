// Builds without CUDA: the GPU SpMV entry points exist and say why they cannot run.
#include "common/device.hpp"
#include "solver/gpu_spmv.hpp"

namespace amgsolve {

template <class Value>
void gpu_spmv(const EllpackR<Value>&, const Vector<Value>&, Vector<Value>&) {
  require_gpu("ELLPACK-R SpMV on the GPU");
}

template <class Value>
void gpu_spmv(const Pjds<Value>&, const Vector<Value>&, Vector<Value>&) {
  require_gpu("pJDS SpMV on the GPU");
}

template void gpu_spmv(const EllpackR<double>&, const Vector<double>&, Vector<double>&);
template void gpu_spmv(const EllpackR<float>&, const Vector<float>&, Vector<float>&);
template void gpu_spmv(const Pjds<double>&, const Vector<double>&, Vector<double>&);
template void gpu_spmv(const Pjds<float>&, const Vector<float>&, Vector<float>&);

}  // namespace amgsolve
