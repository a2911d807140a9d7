#pragma once
// One matrix of the cuda backend (backend/cuda/cuda_backend.hpp: DeviceMatrix) on the device, in its SpMV
// format, and the products the backend's kernels make with it:
//   multiply      y = M x
//   multiply_add  y += M x                                  (prolongation)
//   apply         epilogue(row, (M x)[row]) for every row    (residual, smoothing steps: fused)
//   apply_sum     the same, the epilogue's values summed     (q = A p with p^T q)
// so the kernels never branch on the format.
//
//   ellpack-r  ELLPACK-R (Vazquez et al. 2011) as described by Kreutzer et al. (IPDPSW 2012,
//              ../shared/papers/pjds-kreutzer-2011.txt, section II, Listing 1); the epilogue is fused
//              into the SpMV kernel (backend/cuda/spmv_kernels.cuh), so it costs no pass over memory.
//   pjds       pJDS (ibid., Fig. 1 and Listing 2), block_rows = warp size: the rows sorted by length, and
//              the kernel writes sorted row i's result to its own row (output_row), so vectors stay in the
//              original order. (The paper's solver works in the permuted basis instead, which also makes
//              the result's stores contiguous; that is a later optimisation, to be measured.) Epilogues
//              fused as for ELLPACK-R.
//   csr        cuSPARSE's SpMV (generic API, CUSPARSE_SPMV_CSR_ALG2, the deterministic one, so runs repeat
//              bit for bit), the vendor baseline.
//              A library call cannot take an epilogue: apply/apply_sum write M x to a buffer and run the
//              epilogue as a second kernel over it (one more write and read of a vector than the fused
//              formats; multiply and multiply_add use cuSPARSE's alpha/beta and cost nothing extra).
//              The matrix and vector descriptors and the work buffer are made once, here.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include <thrust/copy.h>

#include "backend/cuda/device_context.cuh"
#include "backend/cuda/format_conversion.cuh"
#include "backend/cuda/spmv_kernels.cuh"
#include "sparse/spmv_format.hpp"

namespace amgsolve::device {

template <class Value>
constexpr cudaDataType cuda_value_type() {
  return std::is_same_v<Value, double> ? CUDA_R_64F : CUDA_R_32F;
}

struct ToInt32 {
  __device__ std::int32_t operator()(Offset v) const { return static_cast<std::int32_t>(v); }
};

// epilogue(i, product[i]): the second half of apply() for csr.
template <class Value, class Epilogue>
struct EpilogueOnStoredProduct {
  const Value* product;
  Epilogue epilogue;
  __device__ void operator()(Index i) const { epilogue(i, product[i]); }
};
template <class Value, class Epilogue>
struct SumOnStoredProduct {
  const Value* product;
  Epilogue epilogue;
  __device__ double operator()(Index i) const { return epilogue(i, product[i]); }
};

template <class Value>
class DeviceOperator {
 public:
  // M (on the device) in `format`, converted there (backend/cuda/format_conversion.cuh).
  DeviceOperator(const DeviceCsr<Value>& M, SpmvFormat format, const DeviceContext& context)
      : format_(format), rows_(M.rows), cols_(M.cols), nnz_(M.nnz()), context_(context) {
    try {
      switch (format) {
        case SpmvFormat::ellpack_r: convert_ellpack_r(M); break;
        case SpmvFormat::pjds: convert_pjds(M); break;
        case SpmvFormat::csr: convert_csr(M); break;
        case SpmvFormat::automatic: throw Error("DeviceOperator: the SpMV format must be concrete, not auto");
      }
    } catch (...) {
      destroy_descriptors();
      throw;
    }
  }
  ~DeviceOperator() { destroy_descriptors(); }
  DeviceOperator(const DeviceOperator&) = delete;
  DeviceOperator& operator=(const DeviceOperator&) = delete;

  Index rows() const { return rows_; }
  Index cols() const { return cols_; }
  std::uint64_t bytes() const {
    return sizeof(Index) * (row_length_.size() + col_.size() + row_permutation_.size() + csr_col32_.size()) +
           sizeof(Value) * (val_.size() + product_.size()) + sizeof(Offset) * col_start_.size() +
           sizeof(std::int32_t) * row_ptr32_.size() + sizeof(std::int64_t) * (row_ptr64_.size() + col64_.size()) +
           buffer_.size();
  }

  // y = M x (y must not overlap x).
  void multiply(const Value* x, Value* y) const {
    if (format_ == SpmvFormat::csr)
      cusparse_spmv(x, y, Value(0));
    else
      apply(x, StoreProduct<Value>{y});
  }

  // y += M x (y must not overlap x).
  void multiply_add(const Value* x, Value* y) const {
    if (format_ == SpmvFormat::csr)
      cusparse_spmv(x, y, Value(1));
    else
      apply(x, AddProduct<Value>{y});
  }

  // epilogue(row, (M x)[row]) for every row; __device__ void operator()(Index, Value) const. The epilogue
  // must not write x.
  template <class Epilogue>
  void apply(const Value* x, const Epilogue& epilogue) const {
    const cudaStream_t stream = context_.stream();
    switch (format_) {
      case SpmvFormat::ellpack_r: launch_spmv(ellpack_r_view(), x, epilogue, stream); break;
      case SpmvFormat::pjds: launch_spmv(pjds_view(), x, epilogue, stream); break;
      default:
        cusparse_spmv(x, raw_data(product_), Value(0));
        for_each_row(rows_, EpilogueOnStoredProduct<Value, Epilogue>{raw_data(product_), epilogue}, stream);
    }
  }

  // finalize(sum over rows of epilogue(row, (M x)[row])) on the device; the epilogue returns double.
  template <class Epilogue, class Finalize>
  void apply_sum(const Value* x, const Epilogue& epilogue, const Finalize& finalize) const {
    const cudaStream_t stream = context_.stream();
    const ReductionScratch scratch = context_.reduction();
    switch (format_) {
      case SpmvFormat::ellpack_r:
        launch_spmv_sum(ellpack_r_view(), x, epilogue, finalize, scratch, stream);
        break;
      case SpmvFormat::pjds: launch_spmv_sum(pjds_view(), x, epilogue, finalize, scratch, stream); break;
      default:
        cusparse_spmv(x, raw_data(product_), Value(0));
        sum_rows(rows_, SumOnStoredProduct<Value, Epilogue>{raw_data(product_), epilogue}, finalize, scratch, stream);
    }
  }

 private:
  void destroy_descriptors() noexcept {  // no checks: called from the destructor
    if (y_descr_) cusparseDestroyDnVec(y_descr_);
    if (x_descr_) cusparseDestroyDnVec(x_descr_);
    if (matrix_descr_) cusparseDestroySpMat(matrix_descr_);
    y_descr_ = x_descr_ = nullptr;
    matrix_descr_ = nullptr;
  }

  EllpackRView<Value> ellpack_r_view() const {
    return {rows_, padded_rows_, raw_data(row_length_), raw_data(col_), raw_data(val_)};
  }
  PjdsView<Value> pjds_view() const {
    return {rows_, raw_data(row_length_), raw_data(col_start_), raw_data(col_), raw_data(val_),
            row_permutation_.empty() ? nullptr : raw_data(row_permutation_)};
  }

  void convert_ellpack_r(const DeviceCsr<Value>& M) {
    const cudaStream_t stream = context_.stream();
    padded_rows_ = padded_rows_for(rows_);
    row_length_ = row_lengths(raw_data(M.row_ptr), rows_, padded_rows_, stream);
    const Index width =
        padded_rows_ > 0 ? thrust::reduce(thrust::cuda::par.on(stream), row_length_.begin(), row_length_.end(), Index{0},
                                          thrust::maximum<Index>())
                         : 0;
    const std::size_t slots = static_cast<std::size_t>(width) * static_cast<std::size_t>(padded_rows_);
    col_ = DeviceArray<Index>(slots);
    val_ = DeviceArray<Value>(slots);
    for_each_row(padded_rows_,
                 FillEllpackR<Value>{raw_data(M.row_ptr), raw_data(M.col), raw_data(M.val), rows_, padded_rows_, width,
                                     raw_data(col_), raw_data(val_)},
                 stream);
    context_.synchronize();  // the fill reads M, which its caller may free next (a temporary device CSR)
  }

  void convert_pjds(const DeviceCsr<Value>& M) {
    const cudaStream_t stream = context_.stream();
    const auto policy = thrust::cuda::par.on(stream);
    const Index padded = padded_rows_for(rows_);
    // "sort": the row lengths (padding rows last, length 0), longest first, stably.
    row_length_ = row_lengths(raw_data(M.row_ptr), rows_, padded, stream);
    DeviceArray<Index> permutation(static_cast<std::size_t>(padded));
    thrust::sequence(policy, permutation.begin(), permutation.end());
    thrust::stable_sort_by_key(policy, row_length_.begin(), row_length_.end(), permutation.begin(),
                               thrust::greater<Index>());
    // "pad": column j holds the blocks whose first row is longer than j.
    Index width = 0;
    if (rows_ > 0) AMGSOLVE_CUDA_CHECK(cudaMemcpyAsync(&width, raw_data(row_length_), sizeof(Index),
                                                       cudaMemcpyDeviceToHost, stream));
    context_.synchronize();
    col_start_ = DeviceArray<Offset>(static_cast<std::size_t>(width) + 1);
    AMGSOLVE_CUDA_CHECK(cudaMemsetAsync(raw_data(col_start_), 0, sizeof(Offset), stream));
    for_each_row(width, RowsWithElement{raw_data(row_length_), padded, raw_data(col_start_) + 1}, stream);
    thrust::inclusive_scan(policy, col_start_.begin() + 1, col_start_.end(), col_start_.begin() + 1);
    Offset slots = 0;
    AMGSOLVE_CUDA_CHECK(cudaMemcpyAsync(&slots, raw_data(col_start_) + width, sizeof(Offset), cudaMemcpyDeviceToHost,
                                        stream));
    context_.synchronize();
    col_ = DeviceArray<Index>(static_cast<std::size_t>(slots));
    val_ = DeviceArray<Value>(static_cast<std::size_t>(slots));
    if (slots > 0) {  // padding: column 0, value 0
      AMGSOLVE_CUDA_CHECK(cudaMemsetAsync(raw_data(col_), 0, sizeof(Index) * col_.size(), stream));
      AMGSOLVE_CUDA_CHECK(cudaMemsetAsync(raw_data(val_), 0, sizeof(Value) * val_.size(), stream));
    }
    for_each_row(rows_,
                 FillPjds<Value>{raw_data(M.row_ptr), raw_data(M.col), raw_data(M.val), raw_data(permutation),
                                 raw_data(col_start_), raw_data(col_), raw_data(val_)},
                 stream);
    context_.synchronize();  // the fill reads M and the permutation: M may be freed next (a temporary)
    permutation.resize(static_cast<std::size_t>(rows_));
    row_permutation_ = std::move(permutation);
  }

  // cuSPARSE wants one index type for offsets and columns: 32-bit when nnz allows, else 64-bit throughout.
  void convert_csr(const DeviceCsr<Value>& M) {
    if (rows_ > 0) product_ = DeviceArray<Value>(static_cast<std::size_t>(rows_));
    if (rows_ == 0 || cols_ == 0 || nnz_ == 0) return;  // M x = 0: no cuSPARSE call (cusparse_spmv)
    void* row_ptr = nullptr;
    void* col = nullptr;
    cusparseIndexType_t index_type = CUSPARSE_INDEX_32I;
    const auto policy = thrust::cuda::par.on(context_.stream());
    val_ = M.val;
    if (nnz_ <= std::numeric_limits<std::int32_t>::max()) {
      row_ptr32_ = DeviceArray<std::int32_t>(M.row_ptr.size());
      thrust::transform(policy, M.row_ptr.begin(), M.row_ptr.end(), row_ptr32_.begin(), ToInt32{});
      csr_col32_ = M.col;
      row_ptr = raw_data(row_ptr32_);
      col = raw_data(csr_col32_);
    } else {
      index_type = CUSPARSE_INDEX_64I;
      row_ptr64_ = M.row_ptr;
      col64_ = DeviceArray<std::int64_t>(M.col.size());
      thrust::copy(policy, M.col.begin(), M.col.end(), col64_.begin());
      row_ptr = raw_data(row_ptr64_);
      col = raw_data(col64_);
    }
    constexpr cudaDataType type = cuda_value_type<Value>();
    AMGSOLVE_DEVICE_CUSPARSE_CHECK(cusparseCreateCsr(&matrix_descr_, rows_, cols_, nnz_, row_ptr, col, raw_data(val_),
                                                     index_type, index_type, CUSPARSE_INDEX_BASE_ZERO, type));
    // The vector descriptors get their pointers at every call (cusparseDnVecSetValues); for the size
    // query they point at buffers of the right sizes.
    DeviceArray<Value> probe(static_cast<std::size_t>(cols_));
    AMGSOLVE_DEVICE_CUSPARSE_CHECK(cusparseCreateDnVec(&x_descr_, cols_, raw_data(probe), type));
    AMGSOLVE_DEVICE_CUSPARSE_CHECK(cusparseCreateDnVec(&y_descr_, rows_, raw_data(product_), type));
    std::size_t size = 0;
    for (const Value beta : {Value(0), Value(1)}) {
      const Value alpha = 1;
      std::size_t needed = 0;
      AMGSOLVE_DEVICE_CUSPARSE_CHECK(cusparseSpMV_bufferSize(context_.cusparse(), CUSPARSE_OPERATION_NON_TRANSPOSE,
                                                             &alpha, matrix_descr_, x_descr_, &beta, y_descr_, type,
                                                             CUSPARSE_SPMV_CSR_ALG2, &needed));
      size = std::max(size, needed);
    }
    buffer_ = DeviceArray<char>(std::max<std::size_t>(size, 1));
  }

  // y = M x + beta y with cuSPARSE (alpha and beta are read on the host when the call is made).
  void cusparse_spmv(const Value* x, Value* y, Value beta) const {
    if (rows_ == 0) return;
    if (nnz_ == 0 || cols_ == 0) {
      if (beta == Value(0))
        AMGSOLVE_CUDA_CHECK(cudaMemsetAsync(y, 0, sizeof(Value) * static_cast<std::size_t>(rows_), context_.stream()));
      return;
    }
    const Value alpha = 1;
    AMGSOLVE_DEVICE_CUSPARSE_CHECK(cusparseDnVecSetValues(x_descr_, const_cast<Value*>(x)));
    AMGSOLVE_DEVICE_CUSPARSE_CHECK(cusparseDnVecSetValues(y_descr_, y));
    AMGSOLVE_DEVICE_CUSPARSE_CHECK(cusparseSpMV(context_.cusparse(), CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha,
                                                matrix_descr_, x_descr_, &beta, y_descr_, cuda_value_type<Value>(),
                                                CUSPARSE_SPMV_CSR_ALG2, raw_data(buffer_)));
  }

  SpmvFormat format_;
  Index rows_, cols_;
  Offset nnz_;
  const DeviceContext& context_;
  // ellpack-r and pjds
  Index padded_rows_ = 0;
  DeviceArray<Index> row_length_;
  DeviceArray<Offset> col_start_;       // pjds
  DeviceArray<Index> row_permutation_;  // pjds: sorted row -> row of the result
  DeviceArray<Index> col_;
  DeviceArray<Value> val_;              // all formats
  // csr
  DeviceArray<std::int32_t> row_ptr32_;
  DeviceArray<Index> csr_col32_;
  DeviceArray<std::int64_t> row_ptr64_, col64_;
  cusparseSpMatDescr_t matrix_descr_ = nullptr;
  cusparseDnVecDescr_t x_descr_ = nullptr, y_descr_ = nullptr;
  mutable DeviceArray<char> buffer_;
  mutable DeviceArray<Value> product_;  // M x for apply() / apply_sum()
};

}  // namespace amgsolve::device
