// ELLPACK-R and pJDS SpMV kernels (M. Kreutzer et al., IPDPSW 2012, ../shared/papers/pjds-kreutzer-2011.txt,
// section II, Listings 1 and 2): one thread per row; thread i reads element j of its row at
// val[j * padded_rows + i] (ELLPACK-R) or val[col_start[j] + i] (pJDS), so a warp's loads are coalesced.
// CPU references: solver/ellpack_r.cpp and solver/pjds.cpp; tests: tests/test_gpu.cpp (label gpu).
#include "common/cuda/check.cuh"
#include "common/cuda/device_array.cuh"
#include "common/device.hpp"
#include "solver/gpu_spmv.hpp"

namespace amgsolve {
namespace {

constexpr int kBlock = 128;

template <class Value>
__global__ void ellpack_r_spmv(Index rows, Index padded_rows, const Index* __restrict__ row_length,
                               const Index* __restrict__ col, const Value* __restrict__ val,
                               const Value* __restrict__ x, Value* __restrict__ y) {
  const Index i = static_cast<Index>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= rows) return;
  Value sum = 0;
  const Index length = row_length[i];
  for (Index j = 0; j < length; ++j) {
    const std::size_t at = static_cast<std::size_t>(j) * padded_rows + i;
    sum += val[at] * x[col[at]];
  }
  y[i] = sum;
}

template <class Value>
__global__ void pjds_spmv(Index rows, const Index* __restrict__ row_length, const Offset* __restrict__ col_start,
                          const Index* __restrict__ col, const Value* __restrict__ val, const Value* __restrict__ x,
                          Value* __restrict__ y) {
  const Index i = static_cast<Index>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= rows) return;
  Value sum = 0;
  const Index length = row_length[i];
  for (Index j = 0; j < length; ++j) {
    const Offset at = col_start[j] + i;
    sum += val[at] * x[col[at]];
  }
  y[i] = sum;
}

int blocks_for(Index rows) { return static_cast<int>((static_cast<std::int64_t>(rows) + kBlock - 1) / kBlock); }

}  // namespace

template <class Value>
void gpu_spmv(const EllpackR<Value>& E, const Vector<Value>& x, Vector<Value>& y) {
  require_gpu("ELLPACK-R SpMV on the GPU");
  const auto length = upload(E.row_length);
  const auto col = upload(E.col);
  const auto val = upload(E.val);
  const auto dx = upload(x);
  DeviceArray<Value> dy(static_cast<std::size_t>(E.rows));
  if (E.rows > 0) {
    ellpack_r_spmv<Value><<<blocks_for(E.rows), kBlock>>>(E.rows, E.padded_rows, raw_data(length), raw_data(col),
                                                          raw_data(val), raw_data(dx), raw_data(dy));
    AMGSOLVE_CUDA_CHECK_LAUNCH();
  }
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
  if (P.rows > 0) {
    pjds_spmv<Value><<<blocks_for(P.rows), kBlock>>>(P.rows, raw_data(length), raw_data(start), raw_data(col),
                                                     raw_data(val), raw_data(dx), raw_data(dy));
    AMGSOLVE_CUDA_CHECK_LAUNCH();
  }
  download(dy, y);
}

template void gpu_spmv(const EllpackR<double>&, const Vector<double>&, Vector<double>&);
template void gpu_spmv(const EllpackR<float>&, const Vector<float>&, Vector<float>&);
template void gpu_spmv(const Pjds<double>&, const Vector<double>&, Vector<double>&);
template void gpu_spmv(const Pjds<float>&, const Vector<float>&, Vector<float>&);

}  // namespace amgsolve
