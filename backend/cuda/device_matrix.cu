// DeviceCsrMatrix and DeviceMatrix (backend/cuda/cuda_backend.hpp): a CSR matrix on the device, and the same
// converted to its SpMV format on the device (backend/cuda/device_operator.cuh holds the arrays and the
// products).
#include "backend/cuda/cuda_backend.hpp"
#include "backend/cuda/device_operator.cuh"
#include "sparse/cuda/device_csr.cuh"

namespace amgsolve {

template <class V>
DeviceCsrMatrix<V>::DeviceCsrMatrix() : arrays_(std::make_unique<DeviceCsr<V>>()) {}

template <class V>
DeviceCsrMatrix<V>::DeviceCsrMatrix(DeviceCsr<V>&& arrays)
    : rows(arrays.rows), cols(arrays.cols), arrays_(std::make_unique<DeviceCsr<V>>(std::move(arrays))) {}

template <class V>
DeviceCsrMatrix<V>::~DeviceCsrMatrix() = default;
template <class V>
DeviceCsrMatrix<V>::DeviceCsrMatrix(DeviceCsrMatrix&&) noexcept = default;
template <class V>
DeviceCsrMatrix<V>& DeviceCsrMatrix<V>::operator=(DeviceCsrMatrix&&) noexcept = default;

template <class V>
Offset DeviceCsrMatrix<V>::nnz() const {
  return arrays_->nnz();
}

template <class V>
std::uint64_t DeviceCsrMatrix<V>::bytes() const {
  return sizeof(Offset) * arrays_->row_ptr.size() + sizeof(Index) * arrays_->col.size() + sizeof(V) * arrays_->val.size();
}

template <class V>
DeviceMatrix<V>::DeviceMatrix(const CudaBackend& backend, const DeviceCsrMatrix<V>& M, SpmvFormat format)
    : rows(M.rows), cols(M.cols), nnz(M.nnz()), format(format) {
  op_ = rethrow_as_error("converting a matrix to " + format_name(format) + " on the GPU", [&] {
    return std::make_unique<device::DeviceOperator<V>>(M.arrays(), format, backend.context());
  });
}

template <class V>
DeviceMatrix<V>::~DeviceMatrix() = default;

template <class V>
std::uint64_t DeviceMatrix<V>::bytes() const {
  return op_->bytes();
}

template class DeviceCsrMatrix<double>;
template class DeviceCsrMatrix<float>;
template class DeviceMatrix<double>;
template class DeviceMatrix<float>;

}  // namespace amgsolve
