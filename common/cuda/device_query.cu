// CUDA runtime query: how many devices, and why none when there are none.
#include <cuda_runtime.h>

#include "common/device.hpp"

namespace amgsolve {

GpuStatus cuda_gpu_status() {
  GpuStatus status;
  status.built_with_cuda = true;
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    status.unavailable_reason = std::string("no usable CUDA device: ") + cudaGetErrorString(err);
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
