// DeviceMatrix (backend/cuda/cuda_backend.hpp): a host CSR matrix converted to its SpMV format and copied to
// the device once (backend/cuda/device_operator.cuh holds the arrays and the products).
#include "backend/cuda/cuda_backend.hpp"
#include "backend/cuda/device_operator.cuh"

namespace amgsolve {

template <class V>
DeviceMatrix<V>::DeviceMatrix(const CudaBackend& backend, const CsrMatrix<V>& host, SpmvFormat format)
    : rows(host.rows), cols(host.cols), nnz(host.nnz()), format(format) {
  op_ = rethrow_as_error("copying a matrix to the GPU", [&] {
    return std::make_unique<device::DeviceOperator<V>>(host, format, backend.context());
  });
  backend.count_to_device(op_->bytes());
}

template <class V>
DeviceMatrix<V>::~DeviceMatrix() = default;

template <class V>
std::uint64_t DeviceMatrix<V>::bytes() const {
  return op_->bytes();
}

template class DeviceMatrix<double>;
template class DeviceMatrix<float>;

}  // namespace amgsolve
