#pragma once
// The outer iteration on the device: preconditioned conjugate gradients (Hestenes & Stiefel 1952; Saad,
// "Iterative Methods for Sparse Linear Systems", 2nd ed., Algorithm 9.1) with the device V-cycle as M, and
// the stationary AMG iteration x <- x + M^-1 (b - A x) for solver.type = amg. The algorithm of
// solver/pcg.cpp, line for line: the same stopping test ||b - A x|| <= tolerance ||b||, the same check of the
// true residual when the recurrence says converged (restart from it, or stop as stagnated), the same
// breakdown and NaN errors with the same messages, the same iteration count and history.
//
// Vectors live on the device in level 0's working basis, in double; the V-cycle reads r in its own
// precision (a float copy written by the same kernels that write r) and PCG reads its float z directly.
// Per PCG iteration (after the V-cycle) four launches, each one pass:
//   rz = r^T z                               -> beta = rz / rz_old (0 on a restart)
//   p = z + beta p
//   q = A p fused with p^T q                 -> alpha = rz / p^T q
//   x += alpha p, r -= alpha q, (r_cycle = r) fused with ||r||^2 -> relative residual, stopping test
// The scalars are computed on the device by the reductions' last block (vector_kernels.cuh): no step waits
// for the host.
//
// Synchronisation: after every iteration a copy of the device scalars (IterationState) is queued into
// pinned host memory with an event. The host waits for iteration k's copy while iteration k + 1, enqueued
// beforehand, already runs, so the GPU does not wait for the host's bookkeeping; it runs ahead only while
// the convergence history says iteration k + 1 will not be the last (see worth_running_ahead in the .cu).
// When the stopping test holds (or a breakdown happens) at iteration k, the device sets its status word and
// every launch behind it is guarded by that word (vector_kernels.cuh): the work enqueued ahead does nothing,
// x and r stay those of iteration k, and the reported count is exact. The true-residual check and the
// restart then run with the stream drained, as on the CPU. on_iteration is called from the host loop, in
// order, as each iteration's copy arrives.
#include <cuda_runtime.h>

#include <cstdint>

#include "solver/cuda/device_operator.cuh"
#include "solver/cuda/device_vcycle.cuh"
#include "solver/solve_result.hpp"

namespace amgsolve::device {

// The iteration's scalars on the device; status is the guard of every launch of the solve. Plain data
// (value-initialise it: IterationState{}), since it lives in device and pinned memory.
struct IterationState {
  double tolerance;
  double bnorm;
  double rz, alpha, beta;
  double relres;          // after the last finished iteration (PCG: the recurrence's residual)
  double checked_relres;  // ||b - A x|| / ||b|| computed by the last check
  double failure_value;
  int status;             // IterationStatus
  int restart;            // the next direction update uses beta = 0 (the first one, and restarts)
  int failure;            // IterationFailure, at failure_iteration
  int failure_iteration;
};

enum IterationStatus : int { kRunning = 0, kStopped = 1, kFailed = 2 };
enum IterationFailure : int { kNoFailure, kRhsNorm, kResidual, kPAp, kPApNotPositive, kRMr, kRMrNotPositive };

template <class CycleValue>
class DeviceIteration {
 public:
  DeviceIteration(const DeviceOperator<double>& A, DeviceVcycle<CycleValue>& M, const DeviceContext& context);
  ~DeviceIteration();
  DeviceIteration(const DeviceIteration&) = delete;
  DeviceIteration& operator=(const DeviceIteration&) = delete;

  // The right-hand side and the iterate in the working basis: fill both before a solve, read x after.
  double* b() { return raw_data(b_); }
  double* x() { return raw_data(x_); }

  SolveResult pcg(const SolverParams& params, const IterationCallback& on_iteration);
  SolveResult stationary(const SolverParams& params, const IterationCallback& on_iteration);

  std::uint64_t bytes() const;

 private:
  IterationState* state() { return raw_data(state_); }
  const int* guard() { return &raw_data(state_)->status; }
  const CycleValue* cycle_input();
  CycleValue* cycle_copy();  // r in the cycle's precision (nullptr when that is double: r itself)

  IterationState begin(const SolverParams& params);
  // begin() for pcg() and stationary(): false when b = 0 (then x = 0 and `result` says converged),
  // otherwise the initial relative residual in `relres` and the history started.
  bool start(const SolverParams& params, SolveResult& result, double& relres);
  // The loop state pcg() and stationary() share: iterations done and enqueued, and the last two relative
  // residuals (whether to run ahead reads both).
  struct Progress {
    int done = 0, enqueued = 0;
    double relres = 0.0, previous = -1.0;
  };
  // One step of either loop: keeps the queue ahead (enqueue(i) queues iteration i), waits for the next
  // iteration's scalars, throws on a failure, and moves the residuals on. Returns that iteration's state.
  template <class Enqueue>
  IterationState advance(Progress& progress, const SolverParams& params, const Enqueue& enqueue);
  // The result's iteration count, residual and convergence once a loop has ended.
  static void finish(SolveResult& result, const Progress& progress, double tolerance);
  void enqueue_pcg_iteration(int k);
  void enqueue_stationary_iteration(int k);
  void record(int k);
  IterationState wait(int k);
  double true_relative_residual();
  void resume(bool restart);

  static constexpr int kSlots = 4;  // iterations whose copies may be in flight (at most 2 are)

  const DeviceOperator<double>& A_;
  DeviceVcycle<CycleValue>& M_;
  const DeviceContext& context_;
  Index n_;
  DeviceArray<double> b_, x_, r_, p_, q_;
  DeviceArray<CycleValue> r_cycle_;  // float cycles only
  DeviceArray<IterationState> state_;
  IterationState* pinned_ = nullptr;  // kSlots iteration copies, then the start state, then the check
  cudaEvent_t events_[kSlots] = {};
};

}  // namespace amgsolve::device
