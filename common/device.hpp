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

// Queried once per process, then remembered.
GpuStatus gpu_status();

// Throws amgsolve::Error naming `what` and the reason when no GPU can be used.
void require_gpu(const std::string& what);

// Where a phase runs (amg.device, solver.device): the CPU, the GPU, or the GPU when one can be used.
enum class ExecutionDevice { cpu, gpu, automatic };

// auto resolves to gpu exactly when gpu_status().usable(); cpu and gpu are returned as they are (a gpu
// request without a usable device fails later, where the device is first needed, with the reason).
ExecutionDevice resolve(ExecutionDevice requested);
const char* to_string(ExecutionDevice device);

}  // namespace amgsolve
