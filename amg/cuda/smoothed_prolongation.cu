// The smoothed prolongator's last step on the cuda backend (amg/smoothed_prolongation.hpp): with P = A_f T
// from the SpGEMM, P <- T - omega D_f^-1 P, one thread per row, the arithmetic and order of the cpu backend's
// loop (amg/smoothed_prolongation.cpp): the row scaled by the Value nearest -omega / d_i, then T's entry
// added where a binary search finds its column (there by construction; never written past the row; a row
// without it is the cpu backend's internal error here too).
#include "amg/cuda/device_setup.hpp"
#include "backend/cuda/device_context.cuh"
#include "backend/cuda/vector_kernels.cuh"
#include "common/cuda/check.cuh"
#include "common/error.hpp"
#include "sparse/cuda/device_csr.cuh"

namespace amgsolve {
namespace {

template <class Value>
struct ScaleAndAddTentative {
  const Offset* p_row_ptr;
  const Index* p_col;
  Value* p_val;
  const Offset* f_row_ptr;
  const Index* f_col;
  const Value* f_val;
  const Offset* t_row_ptr;
  const Index* t_col;
  const Value* t_val;
  double omega;
  unsigned int* missing;  // set when a row lacks its aggregate's column (the cpu backend's internal error)
  __device__ void operator()(Index i) const {
    const double d = static_cast<double>(diagonal_entry(f_row_ptr, f_col, f_val, i));
    const Value scale = static_cast<Value>(-omega / d);
    const Offset begin = p_row_ptr[i], end = p_row_ptr[i + 1];
    for (Offset k = begin; k < end; ++k) p_val[k] *= scale;
    for (Offset t = t_row_ptr[i]; t < t_row_ptr[i + 1]; ++t) {
      Offset lo = begin, hi = end;  // the first column >= T's
      while (lo < hi) {
        const Offset mid = lo + (hi - lo) / 2;
        if (p_col[mid] < t_col[t])
          lo = mid + 1;
        else
          hi = mid;
      }
      if (lo < end && p_col[lo] == t_col[t])
        p_val[lo] += t_val[t];  // always there: A_f's diagonal keeps it
      else
        *missing = 1;
    }
  }
};

}  // namespace

template <class Value>
void scale_and_add_tentative(const CudaBackend& backend, DeviceCsrMatrix<Value>& P, const DeviceCsrMatrix<Value>& A_f,
                             const DeviceCsrMatrix<Value>& T, double omega) {
  DeviceCsr<Value>& p = P.arrays();
  const DeviceCsr<Value>& f = A_f.arrays();
  const DeviceCsr<Value>& t = T.arrays();
  const cudaStream_t stream = backend.context().stream();
  DeviceArray<unsigned int> missing(1, 0u);
  device::for_each_row(p.rows,
                       ScaleAndAddTentative<Value>{raw_data(p.row_ptr), raw_data(p.col), raw_data(p.val),
                                                   raw_data(f.row_ptr), raw_data(f.col), raw_data(f.val),
                                                   raw_data(t.row_ptr), raw_data(t.col), raw_data(t.val), omega,
                                                   raw_data(missing)},
                       stream);
  unsigned int lacks = 0;
  AMGSOLVE_CUDA_CHECK(cudaMemcpyAsync(&lacks, raw_data(missing), sizeof(lacks), cudaMemcpyDeviceToHost, stream));
  backend.context().synchronize();
  backend.count_to_host(sizeof(lacks));
  if (lacks) throw Error("internal: a row of the smoothed prolongator lacks its aggregate's column");
}

template void scale_and_add_tentative(const CudaBackend&, DeviceCsrMatrix<double>&, const DeviceCsrMatrix<double>&,
                                      const DeviceCsrMatrix<double>&, double);
template void scale_and_add_tentative(const CudaBackend&, DeviceCsrMatrix<float>&, const DeviceCsrMatrix<float>&,
                                      const DeviceCsrMatrix<float>&, double);

}  // namespace amgsolve
