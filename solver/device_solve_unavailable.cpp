// Builds without CUDA: the GPU solve exists and says why it cannot run.
#include "common/device.hpp"
#include "common/error.hpp"
#include "solver/device_solve.hpp"

namespace amgsolve {

namespace {
// gpu_status() says how to get a CUDA build.
[[noreturn]] void no_cuda() { throw Error("the GPU solve needs a CUDA build: " + gpu_status().unavailable_reason); }
}  // namespace

template <class CycleValue>
struct DeviceSolve<CycleValue>::Impl {};

template <class CycleValue>
DeviceSolve<CycleValue>::DeviceSolve(const CsrMatrix<double>&, const AmgHierarchy<CycleValue>&, SpmvFormat) {
  no_cuda();
}

template <class CycleValue>
DeviceSolve<CycleValue>::~DeviceSolve() = default;

template <class CycleValue>
SolveResult DeviceSolve<CycleValue>::solve(const Vector<double>&, Vector<double>&, const SolverParams&,
                                           const IterationCallback&) const {
  no_cuda();
}

template <class CycleValue>
SpmvFormat DeviceSolve<CycleValue>::format() const {
  no_cuda();
}

template <class CycleValue>
std::uint64_t DeviceSolve<CycleValue>::device_bytes() const {
  return 0;
}

template <class CycleValue>
double DeviceSolve<CycleValue>::upload_seconds() const {
  return 0.0;
}

template class DeviceSolve<double>;
template class DeviceSolve<float>;

}  // namespace amgsolve
