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

#include "backend/cuda/device_context.cuh"
#include "backend/cuda/spmv_kernels.cuh"
#include "sparse/ellpack_r.hpp"
#include "sparse/pjds.hpp"
#include "sparse/spmv_format.hpp"

namespace amgsolve::device {

template <class Value>
constexpr cudaDataType cuda_value_type() {
  return std::is_same_v<Value, double> ? CUDA_R_64F : CUDA_R_32F;
}

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
  DeviceOperator(const CsrMatrix<Value>& M, SpmvFormat format, const DeviceContext& context)
      : format_(format), rows_(M.rows), cols_(M.cols), nnz_(M.nnz()), context_(context) {
    try {
      switch (format) {
        case SpmvFormat::ellpack_r: upload_ellpack_r(M); break;
        case SpmvFormat::pjds: upload_pjds(M); break;
        case SpmvFormat::csr: upload_csr(M); break;
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

  void upload_ellpack_r(const CsrMatrix<Value>& M) {
    const EllpackR<Value> E = ellpack_r_from_csr(M);
    padded_rows_ = E.padded_rows;
    row_length_ = upload(E.row_length);
    col_ = upload(E.col);
    val_ = upload(E.val);
  }

  void upload_pjds(const CsrMatrix<Value>& M) {
    const Pjds<Value> P = pjds_from_csr(M, 32, /*symmetric_permutation=*/false);
    row_length_ = upload(P.row_length);
    col_start_ = upload(P.col_start);
    col_ = upload(P.col);
    val_ = upload(P.val);
    bool identity = true;
    for (Index i = 0; i < P.rows && identity; ++i) identity = P.permutation[i] == i;
    if (!identity) row_permutation_ = upload(P.permutation);
  }

  // cuSPARSE wants one index type for offsets and columns: 32-bit when nnz allows, else 64-bit throughout.
  void upload_csr(const CsrMatrix<Value>& M) {
    if (rows_ > 0) product_ = DeviceArray<Value>(static_cast<std::size_t>(rows_));
    if (rows_ == 0 || cols_ == 0 || nnz_ == 0) return;  // M x = 0: no cuSPARSE call (cusparse_spmv)
    void* row_ptr = nullptr;
    void* col = nullptr;
    cusparseIndexType_t index_type = CUSPARSE_INDEX_32I;
    val_ = upload(M.val);
    if (nnz_ <= std::numeric_limits<std::int32_t>::max()) {
      row_ptr32_ = upload(std::vector<std::int32_t>(M.row_ptr.begin(), M.row_ptr.end()));
      csr_col32_ = upload(M.col);
      row_ptr = raw_data(row_ptr32_);
      col = raw_data(csr_col32_);
    } else {
      index_type = CUSPARSE_INDEX_64I;
      row_ptr64_ = upload(M.row_ptr);
      col64_ = upload(std::vector<std::int64_t>(M.col.begin(), M.col.end()));
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
  DeviceArray<Index> row_permutation_;  // pjds, empty when the rows needed no sorting
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
