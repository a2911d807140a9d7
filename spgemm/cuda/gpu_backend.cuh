#pragma once
// What the GPU SpGEMM backends (spgemm/cuda/*.cu) share on the host side: availability, and the flow
// around the device product (operands to the GPU, the result back, failures as amgsolve errors).
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

// Base of the CUDA backends. Derived implements
//   template <class V> DeviceCsr<V> device_product(const DeviceCsr<V>& A, const DeviceCsr<V>& B,
//                                                  SpgemmStats& stats) const;
// which fills the time split and extra memory; host <-> device copies are outside its timers (a
// device-resident caller does not make them). Products without multiplications are answered on the
// host (no zero-sized launches, no null arrays handed to the libraries).
template <class Derived>
class GpuSpgemmBackend : public SpgemmBackendFor<GpuSpgemmBackend<Derived>> {
 public:
  BackendKind runs_on() const override { return BackendKind::cuda; }
  std::string unavailable_reason() const override { return cuda_backend_unavailable_reason(); }

  template <class Value>
  CsrMatrix<Value> product(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, SpgemmStats& stats) const {
    stats.multiplications = spgemm_multiplications(A, B);
    if (stats.multiplications == 0) return CsrMatrix<Value>(A.rows, B.cols);
    const Derived& self = static_cast<const Derived&>(*this);
    self.check_operands(A, B);
    return rethrow_as_error("SpGEMM backend '" + self.name() + "'", [&] {
      const DeviceCsr<Value> dA = to_device(A), dB = to_device(B);
      CsrMatrix<Value> C = to_host(self.device_product(dA, dB, stats));
      stats.nnz = C.nnz();
      return C;
    });
  }

  // Host-side checks before anything is copied (e.g. index widths); none by default.
  template <class Value>
  void check_operands(const CsrMatrix<Value>&, const CsrMatrix<Value>&) const {}
};

}  // namespace amgsolve
