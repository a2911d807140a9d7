#pragma once
// What every kernel of one cuda backend shares: its CUDA stream, the cuSPARSE handle (csr format) bound to
// that stream, and the reductions' scratch memory. One context per CudaBackend; everything it launches goes
// into its stream, in order, so the algorithms need no synchronisation between their steps (only where the
// host reads a result: a dot product's value, a download).
#include <cuda_runtime.h>
#include <cusparse.h>

#include <string>

#include "backend/cuda/vector_kernels.cuh"
#include "common/cuda/check.cuh"
#include "common/cuda/device_array.cuh"

// The ordering below rests on the legacy default stream, which a per-thread default stream would replace.
#ifdef CUDA_API_PER_THREAD_DEFAULT_STREAM
#error "amgsolve orders its kernels through the legacy default stream: build without --default-stream per-thread"
#endif

namespace amgsolve::device {

inline void cusparse_check(cusparseStatus_t status, const char* call, const char* file, int line) {
  if (status == CUSPARSE_STATUS_SUCCESS) return;
  throw Error(std::string(file) + ":" + std::to_string(line) + ": " + call + ": " + cusparseGetErrorString(status));
}

}  // namespace amgsolve::device

#define AMGSOLVE_DEVICE_CUSPARSE_CHECK(call) ::amgsolve::device::cusparse_check((call), #call, __FILE__, __LINE__)

namespace amgsolve::device {

class DeviceContext {
 public:
  // The cuSPARSE handle is made only when needed: creating it initialises the library (milliseconds).
  explicit DeviceContext(bool need_cusparse) : partials_(kMaxReductionBlocks), finished_blocks_(1) {
    try {
      // A blocking stream: it also waits for (and holds back) work on the legacy default stream, where
      // Thrust makes its copies and the GPU SpGEMM backends and the kernels of amg/cuda/ run. That is what
      // orders them with this stream's work: a non-blocking stream (cudaStreamNonBlocking) would race.
      AMGSOLVE_CUDA_CHECK(cudaStreamCreate(&stream_));
      AMGSOLVE_CUDA_CHECK(cudaMemsetAsync(raw_data(finished_blocks_), 0, sizeof(unsigned int), stream_));
      if (need_cusparse) {
        AMGSOLVE_DEVICE_CUSPARSE_CHECK(cusparseCreate(&cusparse_));
        AMGSOLVE_DEVICE_CUSPARSE_CHECK(cusparseSetStream(cusparse_, stream_));
      }
    } catch (...) {
      release();
      throw;
    }
  }
  ~DeviceContext() { release(); }
  DeviceContext(const DeviceContext&) = delete;
  DeviceContext& operator=(const DeviceContext&) = delete;

  cudaStream_t stream() const { return stream_; }
  cusparseHandle_t cusparse() const { return cusparse_; }
  ReductionScratch reduction() const { return {raw_data(partials_), raw_data(finished_blocks_)}; }
  void synchronize() const { AMGSOLVE_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

 private:
  void release() noexcept {  // no checks: called from the destructor
    if (stream_) cudaStreamSynchronize(stream_);
    if (cusparse_) cusparseDestroy(cusparse_);
    if (stream_) cudaStreamDestroy(stream_);
    cusparse_ = nullptr;
    stream_ = nullptr;
  }

  cudaStream_t stream_ = nullptr;
  cusparseHandle_t cusparse_ = nullptr;
  mutable DeviceArray<double> partials_;  // written by the reductions, which const methods launch
  mutable DeviceArray<unsigned int> finished_blocks_;
};

}  // namespace amgsolve::device
