#pragma once
// Which compute devices this build can use. The device (CPU, CUDA) is decided here, in one place;
// algorithm code asks for a backend by name and never probes hardware itself.
#include <string>

namespace amgsolve {

struct GpuStatus {
  bool built_with_cuda = false;  // compiled with nvcc (AMGSOLVE_CUDA)
  int device_count = 0;          // CUDA devices visible at run time
  std::string name;              // first device's name, when there is one
  std::string unavailable_reason;  // why no GPU can be used (empty when one can)
  bool usable() const { return device_count > 0; }
};

GpuStatus gpu_status();

// Throws amgsolve::Error naming `what` and the reason when no GPU can be used.
void require_gpu(const std::string& what);

}  // namespace amgsolve
