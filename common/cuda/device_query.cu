// CUDA runtime query: how many devices, and why none when there are none.
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <string>

#include "common/device.hpp"

namespace amgsolve {
namespace {

std::string version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

// Why cudaGetDeviceCount failed, in the user's terms. Without a driver the runtime says "CUDA driver version
// is insufficient", which sends people after a driver upgrade on a machine that has no GPU at all.
std::string unavailable_reason(cudaError_t err) {
  if (err == cudaErrorInsufficientDriver) {
    void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (!driver) return "no NVIDIA GPU driver was found (libcuda.so.1 is not installed)";
    dlclose(driver);
    int driver_version = 0, runtime_version = 0;
    cudaDriverGetVersion(&driver_version);
    cudaRuntimeGetVersion(&runtime_version);
    return "the NVIDIA driver supports CUDA " + version_text(driver_version) + " but amgsolve was built with CUDA " +
           version_text(runtime_version) + ": update the driver";
  }
  if (err == cudaErrorNoDevice) return "no CUDA device present";
  return std::string("no usable CUDA device: ") + cudaGetErrorString(err);
}

}  // namespace

GpuStatus cuda_gpu_status() {
  GpuStatus status;
  status.built_with_cuda = true;
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    status.unavailable_reason = unavailable_reason(err);
    cudaGetLastError();  // clear the sticky error
    return status;
  }
  status.device_count = count;
  if (count == 0) {
    status.unavailable_reason = "no CUDA device present";
    return status;
  }
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) status.name = prop.name;
  return status;
}

}  // namespace amgsolve
