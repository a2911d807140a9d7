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

BackendKind resolve_backend(BackendChoice choice) {
  switch (choice) {
    case BackendChoice::cpu: return BackendKind::cpu;
    case BackendChoice::automatic: return gpu_status().usable() ? BackendKind::cuda : BackendKind::cpu;
    case BackendChoice::cuda: break;
  }
  const GpuStatus status = gpu_status();
  if (!status.usable()) throw InputError("the cuda backend needs a GPU: " + status.unavailable_reason);
  return BackendKind::cuda;
}

const char* to_string(BackendKind kind) { return kind == BackendKind::cuda ? "cuda" : "cpu"; }

}  // namespace amgsolve
