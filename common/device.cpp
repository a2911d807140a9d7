#include "common/device.hpp"

#include "common/error.hpp"

namespace amgsolve {

#ifdef AMGSOLVE_WITH_CUDA
GpuStatus cuda_gpu_status();  // common/cuda/device_query.cu
// Asked once per process: devices do not come and go while it runs, and the query (a CUDA runtime call)
// is made wherever a device choice is resolved, e.g. on every level of the setup.
GpuStatus gpu_status() {
  static const GpuStatus status = cuda_gpu_status();
  return status;
}
#else
GpuStatus gpu_status() {
  GpuStatus status;
  status.unavailable_reason = "built without CUDA (configure with -DAMGSOLVE_CUDA=ON and nvcc on PATH)";
  return status;
}
#endif

void require_gpu(const std::string& what) {
  const GpuStatus status = gpu_status();
  if (!status.usable()) throw Error(what + " needs a GPU: " + status.unavailable_reason);
}

ExecutionDevice resolve(ExecutionDevice requested) {
  if (requested != ExecutionDevice::automatic) return requested;
  return gpu_status().usable() ? ExecutionDevice::gpu : ExecutionDevice::cpu;
}

const char* to_string(ExecutionDevice device) {
  switch (device) {
    case ExecutionDevice::cpu: return "cpu";
    case ExecutionDevice::gpu: return "gpu";
    case ExecutionDevice::automatic: return "auto";
  }
  return "?";
}

}  // namespace amgsolve
