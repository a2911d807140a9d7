#pragma once
// What the GPU SpGEMM backends (spgemm/cuda/*.cu) share on the host side: availability, and the flow
// around the device product (operands to the GPU, the result back, failures as amgsolve errors).
#include <thrust/functional.h>
#include <thrust/transform_reduce.h>

#include <string>

#include "common/cuda/check.cuh"
#include "common/device.hpp"
#include "sparse/cuda/device_csr.cuh"
#include "spgemm/registry.hpp"

namespace amgsolve {

// unavailable_reason() of every CUDA backend: empty when a device can be used, otherwise why not, in the
// words of the one device query (common/device.hpp, which asks the runtime once per process).
inline std::string cuda_backend_unavailable_reason() {
  const GpuStatus status = gpu_status();
  return status.usable() ? std::string() : "needs a CUDA GPU: " + status.unavailable_reason;
}

// The device-resident entry of a GPU SpGEMM backend: operands and product stay on the device (the cuda
// backend's setup multiplies through it, backend/cuda/setup_operations.cu).
class DeviceSpgemm {
 public:
  virtual ~DeviceSpgemm() = default;
  virtual DeviceCsr<double> multiply_on_device(const DeviceCsr<double>& A, const DeviceCsr<double>& B,
                                               SpgemmStats& stats) const = 0;
  virtual DeviceCsr<float> multiply_on_device(const DeviceCsr<float>& A, const DeviceCsr<float>& B,
                                              SpgemmStats& stats) const = 0;
};

namespace device {

struct RowLengthAt {  // the length of row k of B, for each column index k of A
  const Offset* b_row_ptr;
  __device__ Offset operator()(Index k) const { return b_row_ptr[k + 1] - b_row_ptr[k]; }
};

// The nontrivial multiplications of A B (spgemm_multiplications), counted on the device.
template <class Value>
Offset device_multiplications(const DeviceCsr<Value>& A, const DeviceCsr<Value>& B) {
  if (A.col.empty()) return 0;
  return thrust::transform_reduce(A.col.begin(), A.col.end(), RowLengthAt{thrust::raw_pointer_cast(B.row_ptr.data())},
                                  Offset{0}, thrust::plus<Offset>());
}

}  // namespace device

// Base of the CUDA backends. Derived implements
//   template <class V> DeviceCsr<V> device_product(const DeviceCsr<V>& A, const DeviceCsr<V>& B,
//                                                  SpgemmStats& stats) const;
// which fills the time split and extra memory; host <-> device copies are outside its timers (the
// device-resident setup does not make them). Products without multiplications are answered without a
// launch (no zero-sized launches, no null arrays handed to the libraries). Derived may check the operands'
// sizes first (check_sizes: e.g. 32-bit index limits of a library).
template <class Derived>
class GpuSpgemmBackend : public SpgemmBackendFor<GpuSpgemmBackend<Derived>>, public DeviceSpgemm {
 public:
  BackendKind runs_on() const override { return BackendKind::cuda; }
  std::string unavailable_reason() const override { return cuda_backend_unavailable_reason(); }

  template <class Value>
  CsrMatrix<Value> product(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, SpgemmStats& stats) const {
    return rethrow_as_error("SpGEMM backend '" + this->name() + "'",
                            [&] { return to_host(on_device(to_device(A), to_device(B), stats)); });
  }

  DeviceCsr<double> multiply_on_device(const DeviceCsr<double>& A, const DeviceCsr<double>& B,
                                       SpgemmStats& stats) const override {
    return on_device(A, B, stats);
  }
  DeviceCsr<float> multiply_on_device(const DeviceCsr<float>& A, const DeviceCsr<float>& B,
                                      SpgemmStats& stats) const override {
    return on_device(A, B, stats);
  }

  // Checks before anything runs (e.g. index widths); none by default.
  void check_sizes(Offset /*a_nnz*/, Offset /*b_nnz*/) const {}

 private:
  template <class Value>
  DeviceCsr<Value> on_device(const DeviceCsr<Value>& A, const DeviceCsr<Value>& B, SpgemmStats& stats) const {
    if (A.cols != B.rows)
      throw Error("SpGEMM shape mismatch: A is " + std::to_string(A.rows) + "x" + std::to_string(A.cols) + ", B is " +
                  std::to_string(B.rows) + "x" + std::to_string(B.cols));
    const Derived& self = static_cast<const Derived&>(*this);
    return rethrow_as_error("SpGEMM backend '" + self.name() + "'", [&] {
      stats.multiplications = device::device_multiplications(A, B);
      if (stats.multiplications == 0) {
        DeviceCsr<Value> C;
        C.rows = A.rows;
        C.cols = B.cols;
        C.row_ptr = DeviceArray<Offset>(static_cast<std::size_t>(A.rows) + 1, Offset{0});
        stats.nnz = 0;
        return C;
      }
      self.check_sizes(A.nnz(), B.nnz());
      DeviceCsr<Value> C = self.device_product(A, B, stats);
      stats.nnz = C.nnz();
      return C;
    });
  }
};

}  // namespace amgsolve
