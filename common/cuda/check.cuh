#pragma once
// CUDA error checking: every runtime call and kernel launch goes through AMGSOLVE_CUDA_CHECK, which turns
// a failure into amgsolve::Error naming the file, line, call and CUDA's message.
#include <cuda_runtime.h>

#include <string>

#include "common/error.hpp"

namespace amgsolve {

inline void cuda_check(cudaError_t status, const char* call, const char* file, int line) {
  if (status == cudaSuccess) return;
  throw Error(std::string(file) + ":" + std::to_string(line) + ": " + call + ": " + cudaGetErrorString(status));
}

}  // namespace amgsolve

#define AMGSOLVE_CUDA_CHECK(call) ::amgsolve::cuda_check((call), #call, __FILE__, __LINE__)
// After a kernel launch: launch errors now, execution errors at the synchronisation.
#define AMGSOLVE_CUDA_CHECK_LAUNCH()                 \
  do {                                               \
    AMGSOLVE_CUDA_CHECK(cudaGetLastError());         \
    AMGSOLVE_CUDA_CHECK(cudaDeviceSynchronize());    \
  } while (0)
