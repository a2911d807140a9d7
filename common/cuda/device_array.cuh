#pragma once
// DeviceArray<T>: the device counterpart of Array (common/allocator.hpp). thrust::device_vector value-
// initialises on resize(n), which for a buffer that a kernel or a library overwrites right away is one more
// pass over device memory, and one that would be timed as part of the method. This allocator's no-op
// construct() leaves the elements uninitialised instead (the pattern of Thrust's uninitialized_vector
// example); copies and resize(n, value) still initialise.
#include <thrust/device_allocator.h>
#include <thrust/device_vector.h>

#include <vector>

#include "common/cuda/check.cuh"

namespace amgsolve {

template <class T>
struct UninitializedDeviceAllocator : thrust::device_allocator<T> {
  // Thrust's device_allocator is made and destroyed on the host only, so these are host functions (the
  // implicit ones would be __host__ __device__).
  __host__ UninitializedDeviceAllocator() {}
  __host__ UninitializedDeviceAllocator(const UninitializedDeviceAllocator& other)
      : thrust::device_allocator<T>(other) {}
  __host__ ~UninitializedDeviceAllocator() {}
  UninitializedDeviceAllocator& operator=(const UninitializedDeviceAllocator&) = default;

  template <class U>
  struct rebind {
    using other = UninitializedDeviceAllocator<U>;
  };

  __host__ __device__ void construct(T*) {}  // default construction does nothing

  // Thrust's deallocate throws on a failed cudaFree from a noexcept function: after a kernel's fault (a
  // sticky error every later call returns) the first DeviceArray destroyed while the Error naming the
  // failed step unwinds would call std::terminate, and that message would be lost. The status is ignored
  // here, as DeviceVector's destructor does; the fault is reported by the check that found it.
  __host__ void deallocate(typename thrust::device_allocator<T>::pointer p, std::size_t) noexcept {
    cudaFree(thrust::raw_pointer_cast(p));
  }
};

template <class T>
using DeviceArray = thrust::device_vector<T, UninitializedDeviceAllocator<T>>;

// The raw device pointer of a DeviceArray, for kernels and CUDA libraries.
template <class T>
T* raw_data(DeviceArray<T>& v) {
  return thrust::raw_pointer_cast(v.data());
}
template <class T>
const T* raw_data(const DeviceArray<T>& v) {
  return thrust::raw_pointer_cast(v.data());
}

// Host array -> new device array. The range constructor from raw host pointers allocates and makes one
// cudaMemcpy; Thrust reports its failures as exceptions (see rethrow_as_error in check.cuh).
template <class T, class Alloc>
DeviceArray<T> upload(const std::vector<T, Alloc>& host) {
  return DeviceArray<T>(host.data(), host.data() + host.size());
}

// Device array -> host array (resized to match).
template <class T, class Alloc>
void download(const DeviceArray<T>& device, std::vector<T, Alloc>& host) {
  host.resize(device.size());
  if (!host.empty())
    AMGSOLVE_CUDA_CHECK(cudaMemcpy(host.data(), raw_data(device), host.size() * sizeof(T), cudaMemcpyDeviceToHost));
}

}  // namespace amgsolve
