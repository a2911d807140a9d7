#pragma once
// Preconditioned conjugate gradients (Hestenes & Stiefel 1952; Saad, "Iterative Methods for Sparse
// Linear Systems", 2nd ed., Algorithm 9.1) with an AMG V-cycle as the preconditioner, and the plain
// stationary AMG iteration x <- x + M^-1 (b - A x) for solver.type = amg.
//
// Written once over a backend (backend/backend.hpp): the same iteration runs on the CPU and on the GPU,
// with the backend's vectors, matrices and fused passes (q = A p with p^T q; x and r updated with ||r||^2).
// Breakdown is an error, not a wrong answer: p^T A p <= 0 means A is not positive definite, and
// r^T M^-1 r <= 0 that the preconditioner is not; NaN or infinity anywhere stops the solve. The backends'
// dot products are deterministic, so iteration counts do not depend on the thread count.
#include <algorithm>
#include <cmath>
#include <limits>
#include <functional>
#include <string>
#include <type_traits>

#include "backend/cpu/cpu_backend.hpp"
#include "common/error.hpp"
#include "common/timer.hpp"
#include "solver/solve_result.hpp"

namespace amgsolve {

// z = M^-1 r on a backend's vectors.
template <class Backend, class V>
using BackendPreconditioner =
    std::function<void(const typename Backend::template Vector<V>&, typename Backend::template Vector<V>&)>;

// The preconditioner, not the matrix, is at fault: PCG's r^T M^-1 r <= 0 (it is not positive definite), or
// the stationary iteration's residual growing without bound (it amplifies some error). The caller, who
// knows what the preconditioner is, may say what makes it so.
class PreconditionerBreakdown : public NumericalError {
 public:
  using NumericalError::NumericalError;
};

namespace pcg_detail {

// `method` names the iteration in the messages: "PCG" or "the AMG iteration".
void require_finite(double value, const char* what, int iteration, const char* method = "PCG");
void require_positive(double value, const char* what, const char* meaning, int iteration);
void require_positive_preconditioner(double rz, int iteration);
// The stationary iteration's residual a million times b's: x <- x + M^-1 (b - A x) diverges, which for an
// SPD A means the V-cycle amplifies some error (its smoothers' parameters), not that A is singular.
inline constexpr double kDivergedResidual = 1e6;
void require_not_diverging(double relres, int iteration);
// b and A are finite (checked before): a start whose residual b - A x0 is not is the initial guess's fault.
void require_finite_start(double relres);

// The start both iterations share: x sized (zero when its size is wrong), r = b - A x, the history begun.
// False for b = 0: then x = 0 and the result says converged.
template <class Backend, class V>
bool start(const Backend& be, const typename Backend::template Matrix<V>& A,
           const typename Backend::template Vector<V>& b, typename Backend::template Vector<V>& x,
           typename Backend::template Vector<V>& r, double& bnorm, SolveResult& result) {
  if (b.size() != static_cast<std::size_t>(A.rows))
    throw Error("right-hand side has " + std::to_string(b.size()) + " entries, the matrix " + std::to_string(A.rows) +
                " rows");
  if (x.size() != b.size()) be.zero(x, A.rows);
  bnorm = be.norm2(b);
  require_finite(bnorm, "the right-hand side norm", 0);
  if (bnorm == 0.0) {  // the solution of A x = 0 is x = 0
    be.zero(x, A.rows);
    result.converged = true;
    result.history = {0.0};
    return false;
  }
  be.resize(r, A.rows);
  be.residual(A, x, b, r);
  result.history.push_back(be.norm2(r) / bnorm);
  require_finite_start(result.history.back());
  return true;
}

// No relative residual below this is attainable in double precision (the true residual b - A x is formed
// with an error of about eps |A| |x|); the recurrence's residual, which keeps falling, is checked against the
// true one from here on even for a smaller tolerance, which then stagnates, instead of being followed into
// underflow (a p^T A p of 0 that would read as a breakdown).
inline constexpr double kUnattainableResidual = 1e-3 * std::numeric_limits<double>::epsilon();

// The end both iterations share: the counts, the final residual, and the time since `timer` started.
inline void finish(SolveResult& result, int iterations, double relres, double tolerance, const Timer& timer) {
  result.iterations = iterations;
  result.relative_residual = relres;
  result.converged = relres <= tolerance;
  result.seconds = timer.seconds();
}

}  // namespace pcg_detail

// Solves A x = b starting from the given x (zeroed if its size is wrong).
template <class Backend, class V>
SolveResult pcg(const Backend& be, const typename Backend::template Matrix<V>& A,
                const typename Backend::template Vector<V>& b, typename Backend::template Vector<V>& x,
                const BackendPreconditioner<Backend, V>& M, const SolverParams& params,
                const IterationCallback& on_iteration = {}) {
  using namespace pcg_detail;
  Timer timer;
  SolveResult result;
  typename Backend::template Vector<V> r, z, p, q;
  double bnorm = 0;
  if (!start<Backend, V>(be, A, b, x, r, bnorm, result)) return result;

  M(r, z);
  be.copy(z, p);
  double rz = be.dot(r, z);
  require_positive_preconditioner(rz, 0);
  double relres = result.history.back();
  int k = 0;
  double last_restart_residual = INFINITY;
  const double check_below = std::max(params.tolerance, kUnattainableResidual);
  // Near the attainable accuracy the true residual goes up and down from one check to the next: the iterate
  // with the least of them is the one returned where the tolerance is not met.
  typename Backend::template Vector<V> best_x;
  double best_residual = INFINITY;
  while (relres > params.tolerance && k < params.max_iterations) {
    ++k;
    const double pq = be.spmv_dot(A, p, q);
    require_positive(pq, "p^T A p", "the matrix is not positive definite", k);
    const V alpha = static_cast<V>(rz / pq);
    relres = std::sqrt(be.cg_update(alpha, p, q, x, r)) / bnorm;
    require_finite(relres, "the residual", k);
    bool restart = false;
    if (relres <= check_below) {
      // The recurrence r -= alpha q drifts from b - A x on ill-conditioned systems (e.g. coefficient
      // jumps of 1e6): check the true residual, and if it is not yet small enough restart from it
      // (residual replacement) rather than report a residual the solution does not have.
      be.residual(A, x, b, r);
      relres = be.norm2(r) / bnorm;
      restart = relres > params.tolerance;
      // A restart that did not at least halve the true residual means rounding, not the method, limits
      // the accuracy (the attainable accuracy of the system): stop and report it as not converged.
      if (restart && relres > 0.5 * last_restart_residual) result.stagnated = true;
      last_restart_residual = relres;
      if (restart && relres < best_residual) {
        best_residual = relres;
        be.copy(x, best_x);
      }
    }
    result.history.push_back(relres);
    if (on_iteration) on_iteration(k, relres);
    if (result.stagnated || (!restart && relres <= params.tolerance)) break;

    M(r, z);
    const double rz_new = be.dot(r, z);
    require_positive_preconditioner(rz_new, k);
    const V beta = restart ? V(0) : static_cast<V>(rz_new / rz);
    rz = rz_new;
    be.xpby(z, beta, p);
  }
  if (relres > params.tolerance && !result.stagnated) {
    // Stopped by the iteration limit: report the true residual, not the recurrence's.
    be.residual(A, x, b, r);
    relres = be.norm2(r) / bnorm;
  }
  if (relres > params.tolerance && best_residual < relres) {
    be.copy(best_x, x);
    relres = best_residual;
  }
  finish(result, k, relres, params.tolerance, timer);
  return result;
}

// x <- x + M^-1 (b - A x) until the residual is small enough.
template <class Backend, class V>
SolveResult stationary_iteration(const Backend& be, const typename Backend::template Matrix<V>& A,
                                 const typename Backend::template Vector<V>& b, typename Backend::template Vector<V>& x,
                                 const BackendPreconditioner<Backend, V>& M, const SolverParams& params,
                                 const IterationCallback& on_iteration = {}) {
  using namespace pcg_detail;
  Timer timer;
  SolveResult result;
  typename Backend::template Vector<V> r, correction;
  double bnorm = 0;
  if (!start<Backend, V>(be, A, b, x, r, bnorm, result)) return result;
  double relres = result.history.back();
  int k = 0;
  while (relres > params.tolerance && k < params.max_iterations) {
    ++k;
    M(r, correction);
    be.add(correction, x);
    be.residual(A, x, b, r);
    relres = be.norm2(r) / bnorm;
    require_finite(relres, "the residual", k, "the AMG iteration");
    require_not_diverging(relres, k);
    result.history.push_back(relres);
    if (on_iteration) on_iteration(k, relres);
  }
  finish(result, k, relres, params.tolerance, timer);
  return result;
}

// The same on host CSR matrices and vectors (the cpu backend).
template <class V>
SolveResult pcg(const CsrMatrix<V>& A, const Vector<V>& b, Vector<V>& x,
                const std::type_identity_t<Preconditioner<V>>& M, const SolverParams& params,
                const IterationCallback& on_iteration = {}) {
  return pcg<CpuBackend, V>(CpuBackend{}, CpuMatrix<V>::view(A), b, x, M, params, on_iteration);
}

template <class V>
SolveResult stationary_iteration(const CsrMatrix<V>& A, const Vector<V>& b, Vector<V>& x,
                                 const std::type_identity_t<Preconditioner<V>>& M, const SolverParams& params,
                                 const IterationCallback& on_iteration = {}) {
  return stationary_iteration<CpuBackend, V>(CpuBackend{}, CpuMatrix<V>::view(A), b, x, M, params, on_iteration);
}

}  // namespace amgsolve
