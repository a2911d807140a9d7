#pragma once
// CUDA error checking: every runtime call and kernel launch goes through AMGSOLVE_CUDA_CHECK, which turns
// a failure into amgsolve::Error naming the file, line, call and CUDA's message.
#include <cuda_runtime.h>

#include <cstdlib>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>

#include "common/error.hpp"

namespace amgsolve {

inline void cuda_check(cudaError_t status, const char* call, const char* file, int line) {
  if (status == cudaSuccess) return;
  // A failed call also sets the runtime's last-error flag, which the next launch check would read as its own
  // failure (an out-of-memory here, then "out of memory" from a healthy kernel after the caller recovered):
  // clear it. A sticky error (a kernel's fault) stays whatever is read.
  cudaGetLastError();
  throw Error(std::string(file) + ":" + std::to_string(line) + ": " + call + ": " + cudaGetErrorString(status));
}

// Whether each launch check also waits for the kernel to finish (AMGSOLVE_CUDA_SYNC_LAUNCHES set, and not
// to 0): a fault is then reported at the launch that caused it, which the tests and the sanitizers want
// (scripts/gpu-check sets it there). Off by default, since waiting after every launch serialises the host
// with the device and would be timed too: a fault then surfaces at the next synchronisation, still as an Error.
inline bool cuda_sync_launches() {
  static const bool sync = [] {
    const char* value = std::getenv("AMGSOLVE_CUDA_SYNC_LAUNCHES");
    return value != nullptr && *value != '\0' && std::string_view(value) != "0";
  }();
  return sync;
}

// Runs `work` (device code) and rethrows what Thrust and the allocator throw as amgsolve::Error naming `what`:
// Thrust reports CUDA failures as thrust::system_error (a std::runtime_error) and a failed device allocation
// as a std::bad_alloc, and callers such as the SpGEMM comparison only catch amgsolve::Error.
template <class Work>
auto rethrow_as_error(const std::string& what, Work&& work) -> decltype(work()) {
  try {
    return work();
  } catch (const Error&) {
    throw;
  } catch (const std::bad_alloc& e) {
    throw Error(what + ": out of memory (" + e.what() + ")");
  } catch (const std::runtime_error& e) {
    throw Error(what + ": " + e.what());
  }
}

}  // namespace amgsolve

#define AMGSOLVE_CUDA_CHECK(call) ::amgsolve::cuda_check((call), #call, __FILE__, __LINE__)
// After a kernel launch: launch errors now; execution errors now too where cuda_sync_launches() says so,
// else at the next synchronisation.
#define AMGSOLVE_CUDA_CHECK_LAUNCH()                                                      \
  do {                                                                                    \
    AMGSOLVE_CUDA_CHECK(cudaGetLastError());                                              \
    if (::amgsolve::cuda_sync_launches()) AMGSOLVE_CUDA_CHECK(cudaDeviceSynchronize());   \
  } while (0)
