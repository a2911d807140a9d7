// PCG and the stationary AMG iteration on the device (see device_pcg.cuh); solver/pcg.cpp is the CPU
// original that every step here mirrors.
#include "solver/cuda/device_pcg.cuh"

#include <cmath>
#include <sstream>
#include <string>
#include <type_traits>

#include "common/error.hpp"

namespace amgsolve::device {
namespace {

// ---- what the last block of a reduction does with the sum (one thread; solver/pcg.cpp's scalar code)

__device__ void fail(IterationState* s, int failure, int iteration, double value) {
  if (s->status == kFailed) return;
  s->status = kFailed;
  s->failure = failure;
  s->failure_iteration = iteration;
  s->failure_value = value;
}

struct FinishRhsNorm {
  IterationState* s;
  __device__ void operator()(double bb) const {
    s->bnorm = sqrt(bb);
    if (!isfinite(s->bnorm)) fail(s, kRhsNorm, 0, s->bnorm);
  }
};

struct FinishInitialResidual {  // no finiteness test here, as on the CPU
  IterationState* s;
  __device__ void operator()(double rr) const { s->relres = s->bnorm > 0.0 ? sqrt(rr) / s->bnorm : 0.0; }
};

struct FinishTrueResidual {
  IterationState* s;
  __device__ void operator()(double rr) const { s->checked_relres = sqrt(rr) / s->bnorm; }
};

// The end of iteration k: the relative residual and the stopping test, which stops everything behind it.
struct FinishIteration {
  IterationState* s;
  int k;
  __device__ void operator()(double rr) const {
    const double relres = sqrt(rr) / s->bnorm;
    if (!isfinite(relres)) {
      fail(s, kResidual, k, relres);
      return;
    }
    s->relres = relres;
    if (relres <= s->tolerance) s->status = kStopped;
  }
};

struct FinishPAp {  // alpha = r^T z / p^T A p
  IterationState* s;
  int k;
  __device__ void operator()(double pq) const {
    if (!isfinite(pq))
      fail(s, kPAp, k, pq);
    else if (pq <= 0.0)
      fail(s, kPApNotPositive, k, pq);
    else
      s->alpha = s->rz / pq;
  }
};

struct FinishRMr {  // beta = rz_new / rz (0 on a restart), rz = rz_new; k: the iteration just finished
  IterationState* s;
  int k;
  __device__ void operator()(double rz) const {
    if (!isfinite(rz)) {
      fail(s, kRMr, k, rz);
    } else if (rz <= 0.0) {
      fail(s, kRMrNotPositive, k, rz);
    } else {
      s->beta = s->restart ? 0.0 : rz / s->rz;
      s->rz = rz;
      s->restart = 0;
    }
  }
};

__global__ void resume_kernel(IterationState* s, int restart) {
  s->status = kRunning;
  s->restart = restart;
}

// ---- the fused vector work

struct SquareTerm {
  const double* v;
  __device__ double operator()(Index i) const { return v[i] * v[i]; }
};

// r = b - A x, its copy in the cycle's precision, and ||r||^2.
template <class CV>
struct ResidualTerm {
  const double* b;
  double* r;
  CV* r_cycle;
  __device__ double operator()(Index row, double ax) const {
    const double value = b[row] - ax;
    r[row] = value;
    if constexpr (!std::is_same_v<CV, double>) r_cycle[row] = static_cast<CV>(value);
    return value * value;
  }
};

// q = A p and p^T q.
struct SpmvDotTerm {
  const double* p;
  double* q;
  __device__ double operator()(Index row, double ax) const {
    q[row] = ax;
    return p[row] * ax;
  }
};

// x += alpha p, r -= alpha q, the cycle's copy of r, and ||r||^2.
template <class CV>
struct UpdateSolutionTerm {
  double* x;
  double* r;
  const double* p;
  const double* q;
  CV* r_cycle;
  const IterationState* s;
  __device__ double operator()(Index i) const {
    const double alpha = s->alpha;
    x[i] += alpha * p[i];
    const double ri = r[i] - alpha * q[i];
    r[i] = ri;
    if constexpr (!std::is_same_v<CV, double>) r_cycle[i] = static_cast<CV>(ri);
    return ri * ri;
  }
};

template <class CV>
struct DotTerm {  // r^T z with z in the cycle's precision
  const double* r;
  const CV* z;
  __device__ double operator()(Index i) const { return r[i] * static_cast<double>(z[i]); }
};

// p = z + beta p; p = z when beta = 0 (the first direction: p holds nothing yet).
template <class CV>
struct UpdateDirection {
  double* p;
  const CV* z;
  const IterationState* s;
  __device__ void operator()(Index i) const {
    const double beta = s->beta;
    const double zi = static_cast<double>(z[i]);
    p[i] = beta == 0.0 ? zi : zi + beta * p[i];
  }
};

template <class CV>
struct AddCorrection {  // x += z
  double* x;
  const CV* z;
  __device__ void operator()(Index i) const { x[i] += static_cast<double>(z[i]); }
};

std::string format_number(double v) {
  std::ostringstream out;
  out.precision(3);
  out << v;
  return out.str();
}

// solver/pcg.cpp's messages, word for word.
[[noreturn]] void throw_failure(const IterationState& s) {
  const std::string at = std::to_string(s.failure_iteration);
  auto not_finite = [&at](const char* what) {
    return NumericalError(std::string("PCG: ") + what + " became NaN or infinite at iteration " + at +
                          " (is the input finite and the matrix SPD?)");
  };
  switch (s.failure) {
    case kRhsNorm: throw not_finite("the right-hand side norm");
    case kResidual: throw not_finite("the residual");
    case kPAp: throw not_finite("p^T A p");
    case kRMr: throw not_finite("r^T M^-1 r");
    case kPApNotPositive:
      throw NumericalError("PCG breakdown at iteration " + at + ": p^T A p = " + format_number(s.failure_value) +
                           " <= 0, the matrix is not positive definite");
    case kRMrNotPositive:
      if (s.failure_iteration == 0)
        throw NumericalError("PCG breakdown before the first iteration: r^T M^-1 r = " +
                             format_number(s.failure_value) + " <= 0, the preconditioner is not positive definite");
      throw NumericalError("PCG breakdown at iteration " + at + ": r^T M^-1 r = " + format_number(s.failure_value) +
                           " <= 0, the preconditioner is not positive definite");
    default: throw Error("the GPU solve stopped with an unknown failure code " + std::to_string(s.failure));
  }
}

// Whether to enqueue iteration k + 2 before iteration k + 1's result is in: not when k + 1 is likely the
// last one (its predicted residual, relres_k times the last reduction factor, within 2x of the tolerance),
// since work enqueued past the stopping test is wasted (empty launches; csr's cuSPARSE calls still
// run). Before the second iteration the factor is taken as 0.1, typical of AMG-PCG.
bool worth_running_ahead(double relres, double previous, double tolerance) {
  const double factor = previous > 0.0 ? relres / previous : 0.1;
  return relres * factor > 2.0 * tolerance;
}

// Keeps iteration k + 1 queued, and k + 2 behind it unless k + 1 is likely the last: the host then waits
// for one iteration's scalars while the device already runs the next.
template <class Enqueue>
void keep_queued(int k, int& enqueued, double relres, double previous, const SolverParams& params,
                 const Enqueue& enqueue) {
  if (enqueued == k) enqueue(++enqueued);
  if (enqueued == k + 1 && enqueued < params.max_iterations &&
      worth_running_ahead(relres, previous, params.tolerance))
    enqueue(++enqueued);
}

// Leaves the stream empty however a solve ends (an exception included), so that the next one starts clean
// and nothing still writes the pinned copies.
struct DrainOnExit {
  cudaStream_t stream;
  ~DrainOnExit() { cudaStreamSynchronize(stream); }
};

}  // namespace

template <class CV>
DeviceIteration<CV>::DeviceIteration(const DeviceOperator<double>& A, DeviceVcycle<CV>& M, const DeviceContext& context)
    : A_(A), M_(M), context_(context), n_(A.rows()) {
  const auto n = static_cast<std::size_t>(n_);
  b_ = DeviceArray<double>(n);
  x_ = DeviceArray<double>(n);
  r_ = DeviceArray<double>(n);
  p_ = DeviceArray<double>(n);
  q_ = DeviceArray<double>(n);
  if constexpr (!std::is_same_v<CV, double>) r_cycle_ = DeviceArray<CV>(n);
  state_ = DeviceArray<IterationState>(1);
  AMGSOLVE_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&pinned_), sizeof(IterationState) * (kSlots + 2)));
  for (int i = 0; i < kSlots + 2; ++i) pinned_[i] = IterationState{};
  for (cudaEvent_t& event : events_) {
    const cudaError_t status = cudaEventCreateWithFlags(&event, cudaEventDisableTiming);
    if (status != cudaSuccess) {
      for (cudaEvent_t& e : events_)
        if (e) cudaEventDestroy(e);
      cudaFreeHost(pinned_);
      AMGSOLVE_CUDA_CHECK(status);
    }
  }
}

template <class CV>
DeviceIteration<CV>::~DeviceIteration() {  // no checks: destructors must not throw
  cudaStreamSynchronize(context_.stream());
  for (cudaEvent_t& event : events_)
    if (event) cudaEventDestroy(event);
  cudaFreeHost(pinned_);
}

template <class CV>
std::uint64_t DeviceIteration<CV>::bytes() const {
  return sizeof(double) * (b_.size() + x_.size() + r_.size() + p_.size() + q_.size()) + sizeof(CV) * r_cycle_.size() +
         sizeof(IterationState);
}

template <class CV>
const CV* DeviceIteration<CV>::cycle_input() {
  if constexpr (std::is_same_v<CV, double>)
    return raw_data(r_);
  else
    return raw_data(r_cycle_);
}

template <class CV>
CV* DeviceIteration<CV>::cycle_copy() {
  if constexpr (std::is_same_v<CV, double>)
    return nullptr;
  else
    return raw_data(r_cycle_);
}

// ||b||, r = b - A x and the initial relative residual; waits for them (the only wait before iteration 1).
template <class CV>
IterationState DeviceIteration<CV>::begin(const SolverParams& params) {
  const cudaStream_t stream = context_.stream();
  IterationState& start = pinned_[kSlots];
  start = IterationState{};
  start.tolerance = params.tolerance;
  start.status = kRunning;
  start.restart = 1;
  AMGSOLVE_CUDA_CHECK(cudaMemcpyAsync(state(), &start, sizeof(IterationState), cudaMemcpyHostToDevice, stream));
  context_.reset_reduction();
  if (n_ > 0) AMGSOLVE_CUDA_CHECK(cudaMemsetAsync(raw_data(p_), 0, sizeof(double) * static_cast<std::size_t>(n_), stream));
  sum_rows(n_, SquareTerm{raw_data(b_)}, FinishRhsNorm{state()}, context_.reduction(), stream, guard());
  A_.apply_sum(raw_data(x_), ResidualTerm<CV>{raw_data(b_), raw_data(r_), cycle_copy()}, FinishInitialResidual{state()},
               guard());
  IterationState& copy = pinned_[kSlots + 1];
  AMGSOLVE_CUDA_CHECK(cudaMemcpyAsync(&copy, state(), sizeof(IterationState), cudaMemcpyDeviceToHost, stream));
  context_.synchronize();
  return copy;
}

// Iteration k of solver/pcg.cpp's loop, starting with the end of iteration k - 1 (the preconditioner and
// the new direction; for k = 1 the steps before the loop).
template <class CV>
void DeviceIteration<CV>::enqueue_pcg_iteration(int k) {
  const cudaStream_t stream = context_.stream();
  const ReductionScratch scratch = context_.reduction();
  const int* g = guard();
  double* const x = raw_data(x_);
  double* const r = raw_data(r_);
  double* const p = raw_data(p_);
  double* const q = raw_data(q_);

  const CV* z = M_.apply(cycle_input(), g);
  sum_rows(n_, DotTerm<CV>{r, z}, FinishRMr{state(), k - 1}, scratch, stream, g);
  for_each_row(n_, UpdateDirection<CV>{p, z, state()}, stream, g);

  A_.apply_sum(p, SpmvDotTerm{p, q}, FinishPAp{state(), k}, g);
  sum_rows(n_, UpdateSolutionTerm<CV>{x, r, p, q, cycle_copy(), state()}, FinishIteration{state(), k}, scratch, stream,
           g);
  record(k);
}

template <class CV>
void DeviceIteration<CV>::enqueue_stationary_iteration(int k) {
  const int* g = guard();
  const CV* z = M_.apply(cycle_input(), g);
  for_each_row(n_, AddCorrection<CV>{raw_data(x_), z}, context_.stream(), g);
  A_.apply_sum(raw_data(x_), ResidualTerm<CV>{raw_data(b_), raw_data(r_), cycle_copy()}, FinishIteration{state(), k}, g);
  record(k);
}

// Queues the copy of the scalars after iteration k, and an event the host can wait for.
template <class CV>
void DeviceIteration<CV>::record(int k) {
  const int slot = k % kSlots;
  AMGSOLVE_CUDA_CHECK(
      cudaMemcpyAsync(&pinned_[slot], state(), sizeof(IterationState), cudaMemcpyDeviceToHost, context_.stream()));
  AMGSOLVE_CUDA_CHECK(cudaEventRecord(events_[slot], context_.stream()));
}

template <class CV>
IterationState DeviceIteration<CV>::wait(int k) {
  const int slot = k % kSlots;
  AMGSOLVE_CUDA_CHECK(cudaEventSynchronize(events_[slot]));
  return pinned_[slot];
}

// r = b - A x (the true residual replaces the recurrence's, as on the CPU) and ||r|| / ||b||; unguarded,
// after a stop. Drains the stream.
template <class CV>
double DeviceIteration<CV>::true_relative_residual() {
  A_.apply_sum(raw_data(x_), ResidualTerm<CV>{raw_data(b_), raw_data(r_), cycle_copy()}, FinishTrueResidual{state()},
               nullptr);
  IterationState& copy = pinned_[kSlots + 1];
  AMGSOLVE_CUDA_CHECK(
      cudaMemcpyAsync(&copy, state(), sizeof(IterationState), cudaMemcpyDeviceToHost, context_.stream()));
  context_.synchronize();
  return copy.checked_relres;
}

template <class CV>
void DeviceIteration<CV>::resume(bool restart) {
  resume_kernel<<<1, 1, 0, context_.stream()>>>(state(), restart ? 1 : 0);
  AMGSOLVE_CUDA_CHECK(cudaGetLastError());
}

template <class CV>
bool DeviceIteration<CV>::start(const SolverParams& params, SolveResult& result, double& relres) {
  const IterationState initial = begin(params);
  if (initial.status == kFailed) throw_failure(initial);
  if (initial.bnorm == 0.0) {  // the solution of A x = 0 is x = 0
    if (n_ > 0)
      AMGSOLVE_CUDA_CHECK(cudaMemsetAsync(x(), 0, sizeof(double) * static_cast<std::size_t>(n_), context_.stream()));
    result.converged = true;
    result.history = {0.0};
    return false;
  }
  relres = initial.relres;
  result.history.push_back(relres);
  return true;
}

template <class CV>
template <class Enqueue>
IterationState DeviceIteration<CV>::advance(Progress& progress, const SolverParams& params, const Enqueue& enqueue) {
  keep_queued(progress.done, progress.enqueued, progress.relres, progress.previous, params, enqueue);
  const IterationState s = wait(progress.done + 1);
  ++progress.done;
  if (s.status == kFailed) throw_failure(s);
  progress.previous = progress.relres;
  progress.relres = s.relres;
  return s;
}

template <class CV>
void DeviceIteration<CV>::finish(SolveResult& result, const Progress& progress, double tolerance) {
  result.iterations = progress.done;
  result.relative_residual = progress.relres;
  result.converged = progress.relres <= tolerance;
}

template <class CV>
SolveResult DeviceIteration<CV>::pcg(const SolverParams& params, const IterationCallback& on_iteration) {
  const DrainOnExit drain{context_.stream()};
  SolveResult result;
  Progress progress;
  if (!start(params, result, progress.relres)) return result;
  const double tolerance = params.tolerance;
  double last_restart_residual = INFINITY;
  while (progress.relres > tolerance && progress.done < params.max_iterations) {
    const IterationState s = advance(progress, params, [this](int i) { enqueue_pcg_iteration(i); });
    bool restart = false;
    const bool stopped = s.status == kStopped;  // the recurrence's residual passed the test at this iteration
    if (stopped) {
      progress.enqueued = progress.done;  // what was enqueued behind this iteration did nothing
      // The recurrence r -= alpha q drifts from b - A x on ill-conditioned systems: check the true residual,
      // and if it is not yet small enough restart from it (residual replacement). A restart that did not at
      // least halve the true residual means rounding limits the accuracy: stop, stagnated.
      progress.relres = true_relative_residual();
      restart = progress.relres > tolerance;
      if (restart && progress.relres > 0.5 * last_restart_residual) result.stagnated = true;
      last_restart_residual = progress.relres;
    }
    result.history.push_back(progress.relres);
    if (on_iteration) on_iteration(progress.done, progress.relres);
    if (result.stagnated || (!restart && progress.relres <= tolerance)) break;
    if (stopped) resume(restart);
  }
  context_.synchronize();
  if (progress.relres > tolerance && !result.stagnated)
    progress.relres = true_relative_residual();  // report the true residual
  finish(result, progress, tolerance);
  return result;
}

template <class CV>
SolveResult DeviceIteration<CV>::stationary(const SolverParams& params, const IterationCallback& on_iteration) {
  const DrainOnExit drain{context_.stream()};
  SolveResult result;
  Progress progress;
  if (!start(params, result, progress.relres)) return result;
  while (progress.relres > params.tolerance && progress.done < params.max_iterations) {
    advance(progress, params, [this](int i) { enqueue_stationary_iteration(i); });
    result.history.push_back(progress.relres);
    if (on_iteration) on_iteration(progress.done, progress.relres);
  }
  context_.synchronize();
  finish(result, progress, params.tolerance);
  return result;
}

template class DeviceIteration<double>;
template class DeviceIteration<float>;

}  // namespace amgsolve::device
