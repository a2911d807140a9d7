// Vendor baseline: NVIDIA cuSPARSE's SpGEMM through the generic API of CUDA 12/13 (cuSPARSE documentation,
// "cusparseSpGEMM()", and NVIDIA's CUDALibrarySamples cuSPARSE/spgemm example for the call sequence):
//   cusparseSpGEMM_workEstimation  twice (size query, then with the buffer): inspects A and B;
//   cusparseSpGEMM_compute         twice (size query, then with the buffer): computes C into cuSPARSE's
//                                  buffer, after which cusparseSpMatGetSize gives nnz(C);
//   cusparseSpGEMM_copy            after cusparseCsrSetPointers on C's own arrays: writes C out.
// with CUSPARSE_SPGEMM_DEFAULT, C = 1 * A * B + 0 * C. cuSPARSE defines its CSR format with sorted column
// indices within each row, and C comes back in that format; tests/test_gpu.cpp checks C's columns against
// gustavson's sorted ones.
//
// Index widths: cuSPARSE wants one index type for the offsets and the columns of a matrix. Ours are int64
// offsets and int32 columns, so the row offsets of A and B are narrowed to int32 on the device and C's
// widened back; a product whose operands or result have 2^31 or more nonzeros is refused with an Error.
//
// Timing (cudaEvents): symbolic_seconds is the work estimation with its buffer, numeric_seconds the
// compute (cuSPARSE finds C's pattern and values in this one call, so nnz(C) is known only after it) and
// the copy-out, each including the offset conversions it needs. The host <-> device copies of A, B and C
// are in neither: SpgemmStats has no field for them, and a device-resident caller would not make them.
#include <cusparse.h>
#include <thrust/copy.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "common/cuda/check.cuh"
#include "common/cuda/event_timer.cuh"
#include "sparse/cuda/device_csr.cuh"
#include "spgemm/cuda/gpu_backend.cuh"
#include "spgemm/registry.hpp"

namespace amgsolve {
namespace {

void cusparse_check(cusparseStatus_t status, const char* call, const char* file, int line) {
  if (status == CUSPARSE_STATUS_SUCCESS) return;
  throw Error(std::string(file) + ":" + std::to_string(line) + ": " + call + ": " + cusparseGetErrorString(status));
}
#define AMGSOLVE_CUSPARSE_CHECK(call) cusparse_check((call), #call, __FILE__, __LINE__)

// One cuSPARSE handle for the process: creating one initialises the library context, which costs more
// than a small product. It is never destroyed, since at exit the CUDA runtime may already be gone. A handle
// must not be used by two host threads at once; the SpGEMM callers are sequential.
cusparseHandle_t shared_handle() {
  static const cusparseHandle_t handle = [] {
    cusparseHandle_t h = nullptr;
    AMGSOLVE_CUSPARSE_CHECK(cusparseCreate(&h));
    return h;
  }();
  return handle;
}

template <class Value>
constexpr cudaDataType cuda_data_type();
template <>
constexpr cudaDataType cuda_data_type<double>() {
  return CUDA_R_64F;
}
template <>
constexpr cudaDataType cuda_data_type<float>() {
  return CUDA_R_32F;
}

constexpr Offset kMaxNnz32 = std::numeric_limits<std::int32_t>::max();

void require_32bit_nnz(Offset nnz, const char* matrix) {
  if (nnz < 0 || nnz > kMaxNnz32)  // negative: a count that wrapped inside 32-bit arithmetic
    throw Error(std::string("SpGEMM backend 'cusparse' uses 32-bit cuSPARSE indices, but ") + matrix + " has " +
                std::to_string(nnz) + " nonzeros (2^31 - 1 at most)");
}

// int64 -> int32 row offsets, converted on the device (the caller has checked nnz < 2^31).
DeviceArray<std::int32_t> narrow_offsets(const DeviceArray<Offset>& row_ptr) {
  DeviceArray<std::int32_t> narrow(row_ptr.size());
  thrust::copy(row_ptr.begin(), row_ptr.end(), narrow.begin());
  return narrow;
}

// A cuSPARSE CSR descriptor over arrays owned elsewhere (32-bit offsets and columns, zero-based).
class CsrDescriptor {
 public:
  // cuSPARSE's descriptors take non-const pointers even for the operands it only reads (A and B).
  template <class Value>
  CsrDescriptor(Index rows, Index cols, Offset nnz, void* row_ptr, const void* col, const Value* val) {
    AMGSOLVE_CUSPARSE_CHECK(cusparseCreateCsr(&descr_, rows, cols, nnz, row_ptr, const_cast<void*>(col),
                                              const_cast<Value*>(val), CUSPARSE_INDEX_32I,
                                              CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, cuda_data_type<Value>()));
  }
  ~CsrDescriptor() { cusparseDestroySpMat(descr_); }
  CsrDescriptor(const CsrDescriptor&) = delete;
  CsrDescriptor& operator=(const CsrDescriptor&) = delete;
  cusparseSpMatDescr_t get() const { return descr_; }

 private:
  cusparseSpMatDescr_t descr_ = nullptr;
};

class SpgemmDescriptor {
 public:
  SpgemmDescriptor() { AMGSOLVE_CUSPARSE_CHECK(cusparseSpGEMM_createDescr(&descr_)); }
  ~SpgemmDescriptor() { cusparseSpGEMM_destroyDescr(descr_); }
  SpgemmDescriptor(const SpgemmDescriptor&) = delete;
  SpgemmDescriptor& operator=(const SpgemmDescriptor&) = delete;
  cusparseSpGEMMDescr_t get() const { return descr_; }

 private:
  cusparseSpGEMMDescr_t descr_ = nullptr;
};

// The device side of one product: A and B already on the device, C returned on the device.
template <class Value>
class DeviceProduct {
 public:
  DeviceProduct(const DeviceCsr<Value>& A, const DeviceCsr<Value>& B)
      : A_(A), B_(B), a_ptr_(narrow_offsets(A.row_ptr)), b_ptr_(narrow_offsets(B.row_ptr)),
        c_ptr_(static_cast<std::size_t>(A.rows) + 1),
        a_(A.rows, A.cols, A.nnz(), raw_data(a_ptr_), raw_data(A.col), raw_data(A.val)),
        b_(B.rows, B.cols, B.nnz(), raw_data(b_ptr_), raw_data(B.col), raw_data(B.val)),
        c_(A.rows, B.cols, 0, raw_data(c_ptr_), nullptr, static_cast<Value*>(nullptr)) {}

  // Sizes and fills cuSPARSE's first buffer; returns its size.
  std::size_t estimate_work() {
    std::size_t size = 0;
    AMGSOLVE_CUSPARSE_CHECK(cusparseSpGEMM_workEstimation(shared_handle(), kOp, kOp, &alpha_, a_.get(), b_.get(),
                                                          &beta_, c_.get(), cuda_data_type<Value>(), kAlg,
                                                          spgemm_.get(), &size, nullptr));
    allocate(buffer1_, size);
    AMGSOLVE_CUSPARSE_CHECK(cusparseSpGEMM_workEstimation(shared_handle(), kOp, kOp, &alpha_, a_.get(), b_.get(),
                                                          &beta_, c_.get(), cuda_data_type<Value>(), kAlg,
                                                          spgemm_.get(), &size, raw_data(buffer1_)));
    return size;
  }

  // Computes C inside cuSPARSE's second buffer; returns that buffer's size.
  std::size_t compute() {
    std::size_t size = 0;
    AMGSOLVE_CUSPARSE_CHECK(cusparseSpGEMM_compute(shared_handle(), kOp, kOp, &alpha_, a_.get(), b_.get(), &beta_,
                                                   c_.get(), cuda_data_type<Value>(), kAlg, spgemm_.get(), &size,
                                                   nullptr));
    allocate(buffer2_, size);
    AMGSOLVE_CUSPARSE_CHECK(cusparseSpGEMM_compute(shared_handle(), kOp, kOp, &alpha_, a_.get(), b_.get(), &beta_,
                                                   c_.get(), cuda_data_type<Value>(), kAlg, spgemm_.get(), &size,
                                                   raw_data(buffer2_)));
    return size;
  }

  // Copies C out of cuSPARSE's buffer into our own arrays (offsets widened to int64).
  DeviceCsr<Value> copy_out() {
    std::int64_t rows = 0, cols = 0, nnz = 0;
    AMGSOLVE_CUSPARSE_CHECK(cusparseSpMatGetSize(c_.get(), &rows, &cols, &nnz));
    require_32bit_nnz(nnz, "C");
    DeviceCsr<Value> C;
    C.rows = A_.rows;
    C.cols = B_.cols;
    C.col.resize(static_cast<std::size_t>(nnz));
    C.val.resize(static_cast<std::size_t>(nnz));
    AMGSOLVE_CUSPARSE_CHECK(cusparseCsrSetPointers(c_.get(), raw_data(c_ptr_), raw_data(C.col), raw_data(C.val)));
    AMGSOLVE_CUSPARSE_CHECK(cusparseSpGEMM_copy(shared_handle(), kOp, kOp, &alpha_, a_.get(), b_.get(), &beta_,
                                                c_.get(), cuda_data_type<Value>(), kAlg, spgemm_.get()));
    C.row_ptr.resize(c_ptr_.size());
    thrust::copy(c_ptr_.begin(), c_ptr_.end(), C.row_ptr.begin());  // widened on the device
    return C;
  }

  // The int32 offsets this backend adds to A, B and C.
  std::size_t offset_bytes() const {
    return (a_ptr_.size() + b_ptr_.size() + c_ptr_.size()) * sizeof(std::int32_t);
  }

 private:
  // At least one byte: a null buffer pointer means "report the size" to cuSPARSE, not "compute".
  static void allocate(DeviceArray<char>& buffer, std::size_t size) { buffer.resize(std::max<std::size_t>(size, 1)); }

  static constexpr cusparseOperation_t kOp = CUSPARSE_OPERATION_NON_TRANSPOSE;
  static constexpr cusparseSpGEMMAlg_t kAlg = CUSPARSE_SPGEMM_DEFAULT;

  const DeviceCsr<Value>& A_;
  const DeviceCsr<Value>& B_;
  DeviceArray<std::int32_t> a_ptr_, b_ptr_, c_ptr_;
  CsrDescriptor a_, b_, c_;
  SpgemmDescriptor spgemm_;
  DeviceArray<char> buffer1_, buffer2_;  // cuSPARSE's scratch, not zero-filled (it can be large)
  const Value alpha_ = 1;
  const Value beta_ = 0;
};

class Cusparse : public GpuSpgemmBackend<Cusparse> {
 public:
  std::string name() const override { return "cusparse"; }
  std::string description() const override {
    return "vendor baseline: NVIDIA cuSPARSE SpGEMM (generic API, CUSPARSE_SPGEMM_DEFAULT)";
  }
  bool external_baseline() const override { return true; }

  void check_sizes(Offset a_nnz, Offset b_nnz) const {
    require_32bit_nnz(a_nnz, "A");
    require_32bit_nnz(b_nnz, "B");
  }

  template <class Value>
  DeviceCsr<Value> device_product(const DeviceCsr<Value>& A, const DeviceCsr<Value>& B, SpgemmStats& stats) const {
    CudaEventTimer timer;
    DeviceProduct<Value> device(A, B);
    const std::size_t buffer1 = device.estimate_work();
    stats.symbolic_seconds = timer.seconds();
    timer.restart();
    const std::size_t buffer2 = device.compute();
    DeviceCsr<Value> C = device.copy_out();
    stats.numeric_seconds = timer.seconds();
    stats.extra_bytes = buffer1 + buffer2 + device.offset_bytes();
    return C;
  }
};

}  // namespace
}  // namespace amgsolve

AMGSOLVE_REGISTER_SPGEMM(cusparse, Cusparse)
