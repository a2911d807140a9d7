#pragma once
// Times device work with a pair of CUDA events on the default stream: the GPU time from reaching restart()
// to reaching seconds(). That is the queued work plus any gap in which the host kept the GPU waiting
// between the two (an allocation, a synchronous copy), which is part of the cost of the method too.
#include <cuda_runtime.h>

#include "common/cuda/check.cuh"

namespace amgsolve {

class CudaEventTimer {
 public:
  CudaEventTimer() {
    AMGSOLVE_CUDA_CHECK(cudaEventCreate(&start_));
    AMGSOLVE_CUDA_CHECK(cudaEventCreate(&stop_));
    restart();
  }
  ~CudaEventTimer() {
    cudaEventDestroy(start_);  // no check: destructors must not throw
    cudaEventDestroy(stop_);
  }
  CudaEventTimer(const CudaEventTimer&) = delete;
  CudaEventTimer& operator=(const CudaEventTimer&) = delete;

  void restart() { AMGSOLVE_CUDA_CHECK(cudaEventRecord(start_)); }

  // Waits for the work queued so far, then returns the seconds since restart().
  double seconds() {
    AMGSOLVE_CUDA_CHECK(cudaEventRecord(stop_));
    AMGSOLVE_CUDA_CHECK(cudaEventSynchronize(stop_));
    float milliseconds = 0;
    AMGSOLVE_CUDA_CHECK(cudaEventElapsedTime(&milliseconds, start_, stop_));
    return 1e-3 * milliseconds;
  }

 private:
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
};

}  // namespace amgsolve
