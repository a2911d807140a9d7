// DeviceVector (backend/cuda/cuda_backend.hpp): a cudaMalloc'ed buffer. Allocation failures become an
// amgsolve::Error naming the size, so a problem too large for the GPU says so.
#include "backend/cuda/cuda_backend.hpp"
#include "common/cuda/check.cuh"

namespace amgsolve {
namespace {

template <class V>
V* allocate(std::size_t n) {
  if (n == 0) return nullptr;
  void* p = nullptr;
  const cudaError_t status = cudaMalloc(&p, n * sizeof(V));
  if (status != cudaSuccess) {
    cudaGetLastError();  // clear the flag, or the next launch check reports this failure as its own
    throw Error("cannot allocate " + std::to_string(n * sizeof(V)) + " bytes of GPU memory: " +
                cudaGetErrorString(status));
  }
  return static_cast<V*>(p);
}

}  // namespace

template <class V>
DeviceVector<V>::DeviceVector(std::size_t n) : data_(allocate<V>(n)), size_(n) {}

template <class V>
DeviceVector<V>::~DeviceVector() {
  if (data_) cudaFree(data_);  // no check: called from the destructor
}

template <class V>
DeviceVector<V>::DeviceVector(DeviceVector&& other) noexcept : data_(other.data_), size_(other.size_) {
  other.data_ = nullptr;
  other.size_ = 0;
}

template <class V>
DeviceVector<V>& DeviceVector<V>::operator=(DeviceVector&& other) noexcept {
  DeviceVector(std::move(other)).swap(*this);
  return *this;
}

template <class V>
void DeviceVector<V>::resize(std::size_t n) {
  if (n == size_) return;
  DeviceVector(n).swap(*this);
}

template class DeviceVector<double>;
template class DeviceVector<float>;
template class DeviceVector<Index>;  // the indices a halo exchange gathers (backend/mpi/mpi_over.hpp)

}  // namespace amgsolve
