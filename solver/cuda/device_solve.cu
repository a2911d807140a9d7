// DeviceSolve (solver/device_solve.hpp): the plan is made on the host (solver/device_solve_plan.cpp), then
// every operator goes to the device once in the chosen format; a solve permutes b and the initial x into
// level 0's working basis on the device, runs the iteration (device_pcg.cu) and permutes x back.
#include <type_traits>

#include "common/device.hpp"
#include "common/timer.hpp"
#include "solver/cuda/device_pcg.cuh"
#include "solver/device_solve.hpp"
#include "solver/device_solve_plan.hpp"

namespace amgsolve {

template <class CycleValue>
struct DeviceSolve<CycleValue>::Impl {
  explicit Impl(const DeviceSolvePlan<CycleValue>& plan)
      : format(plan.format),
        rows(plan.A->rows),
        context(plan.format == SpmvFormat::csr),
        A(*plan.A, plan.format, context),
        vcycle(plan, level0_matrix(plan), context),
        iteration(A, vcycle, context) {
    if (!plan.permutation.empty()) permutation = upload(plan.permutation);
    staging = DeviceArray<double>(static_cast<std::size_t>(rows));
    // Thrust made its copies on the legacy default stream: let them finish before the solve's stream runs.
    AMGSOLVE_CUDA_CHECK(cudaDeviceSynchronize());
  }

  const device::DeviceOperator<CycleValue>* level0_matrix(const DeviceSolvePlan<CycleValue>& plan) const {
    if constexpr (std::is_same_v<CycleValue, double>)
      if (plan.cycle_uses_fine_matrix) return &A;
    return nullptr;
  }

  // v (original order, host) -> the working-basis device vector `to`.
  void upload_permuted(const Vector<double>& v, double* to) {
    const std::size_t bytes = sizeof(double) * v.size();
    const cudaStream_t stream = context.stream();
    if (permutation.empty()) {
      AMGSOLVE_CUDA_CHECK(cudaMemcpyAsync(to, v.data(), bytes, cudaMemcpyHostToDevice, stream));
      return;
    }
    AMGSOLVE_CUDA_CHECK(cudaMemcpyAsync(raw_data(staging), v.data(), bytes, cudaMemcpyHostToDevice, stream));
    device::for_each_row(rows, device::GatherVector<double>{to, raw_data(staging), raw_data(permutation)}, stream,
                         nullptr);
  }

  // The working-basis device vector `from` -> v (original order, host).
  void download_permuted(const double* from, Vector<double>& v) {
    const std::size_t bytes = sizeof(double) * v.size();
    const cudaStream_t stream = context.stream();
    const double* source = from;
    if (!permutation.empty()) {
      device::for_each_row(rows, device::ScatterVector<double>{raw_data(staging), from, raw_data(permutation)},
                           stream, nullptr);
      source = raw_data(staging);
    }
    AMGSOLVE_CUDA_CHECK(cudaMemcpyAsync(v.data(), source, bytes, cudaMemcpyDeviceToHost, stream));
    context.synchronize();
  }

  SpmvFormat format;
  Index rows;
  double upload_seconds = 0.0;
  // Declaration order is construction order: the context first (and destroyed last), then what uses it.
  device::DeviceContext context;
  device::DeviceOperator<double> A;
  device::DeviceVcycle<CycleValue> vcycle;
  device::DeviceIteration<CycleValue> iteration;
  DeviceArray<Index> permutation;  // pi_0, empty for the identity
  DeviceArray<double> staging;     // b and x in the original order, around the permutation
};

template <class CycleValue>
DeviceSolve<CycleValue>::DeviceSolve(const CsrMatrix<double>& A, const AmgHierarchy<CycleValue>& hierarchy,
                                     SpmvFormat format) {
  require_gpu("the GPU solve");
  Timer timer;
  rethrow_as_error("the GPU solve", [&] {
    const DeviceSolvePlan<CycleValue> plan = make_device_solve_plan(A, hierarchy, format);
    impl_ = std::make_unique<Impl>(plan);
  });
  impl_->upload_seconds = timer.seconds();
}

template <class CycleValue>
DeviceSolve<CycleValue>::~DeviceSolve() = default;

template <class CycleValue>
SolveResult DeviceSolve<CycleValue>::solve(const Vector<double>& b, Vector<double>& x, const SolverParams& params,
                                           const IterationCallback& on_iteration) const {
  Timer timer;
  Impl& impl = *impl_;
  if (b.size() != static_cast<std::size_t>(impl.rows))
    throw Error("right-hand side has " + std::to_string(b.size()) + " entries, the matrix " +
                std::to_string(impl.rows) + " rows");
  constexpr bool mixed = std::is_same_v<CycleValue, float>;
  if ((params.precision == Precision::mixed) != mixed)
    throw Error(std::string("the GPU solve was set up for ") + (mixed ? "mixed" : "double") +
                " precision, the solver parameters ask for " +
                (params.precision == Precision::mixed ? "mixed" : "double"));
  if (x.size() != b.size()) x.assign(b.size(), 0.0);
  SolveResult result = rethrow_as_error("the GPU solve", [&] {
    impl.upload_permuted(b, impl.iteration.b());
    impl.upload_permuted(x, impl.iteration.x());
    SolveResult r = params.type == SolverType::pcg ? impl.iteration.pcg(params, on_iteration)
                                                   : impl.iteration.stationary(params, on_iteration);
    impl.download_permuted(impl.iteration.x(), x);
    return r;
  });
  result.seconds = timer.seconds();
  return result;
}

template <class CycleValue>
SpmvFormat DeviceSolve<CycleValue>::format() const {
  return impl_->format;
}

template <class CycleValue>
std::uint64_t DeviceSolve<CycleValue>::device_bytes() const {
  return impl_->A.bytes() + impl_->vcycle.bytes() + impl_->iteration.bytes() +
         sizeof(Index) * impl_->permutation.size() + sizeof(double) * impl_->staging.size();
}

template <class CycleValue>
double DeviceSolve<CycleValue>::upload_seconds() const {
  return impl_->upload_seconds;
}

template class DeviceSolve<double>;
template class DeviceSolve<float>;

}  // namespace amgsolve
