// gpu_spmv: the ELLPACK-R and pJDS SpMV kernels (M. Kreutzer et al., IPDPSW 2012,
// ../shared/papers/pjds-kreutzer-2011.txt, section II, Listings 1 and 2; written once in
// solver/cuda/spmv_kernels.cuh, which the device solve uses too) on a matrix and x copied to the device.
// CPU references: solver/ellpack_r.cpp and solver/pjds.cpp; tests: tests/test_gpu.cpp (label gpu).
#include "common/cuda/check.cuh"
#include "common/cuda/device_array.cuh"
#include "common/device.hpp"
#include "solver/cuda/spmv_kernels.cuh"
#include "solver/gpu_spmv.hpp"

namespace amgsolve {

template <class Value>
void gpu_spmv(const EllpackR<Value>& E, const Vector<Value>& x, Vector<Value>& y) {
  require_gpu("ELLPACK-R SpMV on the GPU");
  const auto length = upload(E.row_length);
  const auto col = upload(E.col);
  const auto val = upload(E.val);
  const auto dx = upload(x);
  DeviceArray<Value> dy(static_cast<std::size_t>(E.rows));
  const device::EllpackRView<Value> view{E.rows, E.padded_rows, raw_data(length), raw_data(col), raw_data(val)};
  device::launch_spmv(view, raw_data(dx), device::StoreProduct<Value>{raw_data(dy)}, cudaStream_t{}, nullptr);
  AMGSOLVE_CUDA_CHECK(cudaDeviceSynchronize());
  download(dy, y);
}

template <class Value>
void gpu_spmv(const Pjds<Value>& P, const Vector<Value>& x, Vector<Value>& y) {
  require_gpu("pJDS SpMV on the GPU");
  const auto length = upload(P.row_length);
  const auto start = upload(P.col_start);
  const auto col = upload(P.col);
  const auto val = upload(P.val);
  const auto dx = upload(x);
  DeviceArray<Value> dy(static_cast<std::size_t>(P.rows));
  // y in the sorted order, as the CPU reference (solver/pjds.cpp) returns it: no output permutation.
  const device::PjdsView<Value> view{P.rows, raw_data(length), raw_data(start), raw_data(col), raw_data(val), nullptr};
  device::launch_spmv(view, raw_data(dx), device::StoreProduct<Value>{raw_data(dy)}, cudaStream_t{}, nullptr);
  AMGSOLVE_CUDA_CHECK(cudaDeviceSynchronize());
  download(dy, y);
}

template void gpu_spmv(const EllpackR<double>&, const Vector<double>&, Vector<double>&);
template void gpu_spmv(const EllpackR<float>&, const Vector<float>&, Vector<float>&);
template void gpu_spmv(const Pjds<double>&, const Vector<double>&, Vector<double>&);
template void gpu_spmv(const Pjds<float>&, const Vector<float>&, Vector<float>&);

}  // namespace amgsolve
