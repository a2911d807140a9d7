#pragma once
// What the GPU SpGEMM backends (spgemm/cuda/*.cu) share on the host side.
#include <string>

#include "common/device.hpp"

namespace amgsolve {

// unavailable_reason() of every CUDA backend: empty when a device can be used, otherwise why not, in the
// words of the one device query (common/device.hpp). Asked once per process: devices do not come and go
// while it runs, and available() is called before every product.
inline std::string cuda_backend_unavailable_reason() {
  static const std::string reason = [] {
    const GpuStatus status = gpu_status();
    return status.usable() ? std::string() : "needs a CUDA GPU: " + status.unavailable_reason;
  }();
  return reason;
}

}  // namespace amgsolve
