#pragma once
// Preconditioned conjugate gradients (Hestenes & Stiefel 1952; Saad, "Iterative Methods for Sparse
// Linear Systems", 2nd ed., Algorithm 9.1) with an AMG V-cycle as the preconditioner, and residual
// replacement where the recurrence's residual drifts from the true one (ResidualReplacement below).
//
// Written once over a backend (backend/backend.hpp): the same iteration runs on the CPU and on the GPU,
// with the backend's vectors, matrices and fused passes (q = A p with p^T q; x and r updated with ||r||^2).
// Breakdown is an error (solver/iteration.hpp). The backends' dot products are deterministic, so iteration
// counts do not depend on the thread count.
#include <algorithm>
#include <cmath>
#include <limits>

#include "solver/iteration.hpp"

namespace amgsolve {

// No relative residual below this is attainable in double precision (the true residual b - A x is formed
// with an error of about eps |A| |x|); the recurrence's residual, which keeps falling, is checked against the
// true one from here on even for a smaller tolerance, which then stagnates, instead of being followed into
// underflow (a p^T A p of 0 that would read as a breakdown).
inline constexpr double kUnattainableResidual = 1e-3 * std::numeric_limits<double>::epsilon();

// Residual replacement, in the simple form of H. A. van der Vorst and Q. Ye ("Residual replacement strategies
// for Krylov subspace iterative methods for the convergence of true residuals", SIAM J. Sci. Comput. 22,
// 2000): the recurrence r -= alpha q drifts from b - A x on ill-conditioned systems (e.g. coefficient jumps
// of 1e6), so once it says the tolerance is met the true residual replaces it, and where that is not yet
// small enough CG restarts from it rather than report a residual the solution does not have. A restart that
// did not at least halve the true residual means rounding, not the method, limits the accuracy (the
// attainable accuracy of the system): the solve stagnated. Near that accuracy the true residual goes up and
// down from one check to the next: the iterate with the least of them is the one returned where the
// tolerance is not met, or the start where the solve stagnated above the start's residual (rounding's
// iterates: on a matrix scaled over 40 orders the last was 1e26 times worse than x = 0). A solve that ran to
// its iteration limit keeps its iterate: CG's error in the A-norm falls while the residual may not.
template <class Backend, class V>
class ResidualReplacement {
 public:
  using Vector = typename Backend::template Vector<V>;
  // x: the start (of `rows` rows), of relative residual `relres`. A start from zero is not copied.
  ResidualReplacement(const Backend& be, double tolerance, const Vector& x, Index rows, double relres)
      : be_(be), tolerance_(tolerance), check_below_(std::max(tolerance, kUnattainableResidual)),
        start_residual_(relres), rows_(rows), start_is_zero_(be.norm2(x) == 0.0) {
    if (!start_is_zero_) be_.copy(x, start_x_);
  }

  // Whether the recurrence's relative residual asks for the true one.
  bool due(double relres) const { return relres <= check_below_; }

  // r = b - A x and relres its relative norm; whether CG restarts from it (and `stagnated` where it did not
  // halve the last restart's residual).
  bool replace(const typename Backend::template Matrix<V>& A, const Vector& x, const Vector& b, Vector& r,
               double bnorm, double& relres, bool& stagnated) {
    be_.residual(A, x, b, r);
    relres = be_.norm2(r) / bnorm;
    const bool restart = relres > tolerance_;
    if (restart && relres > 0.5 * last_restart_residual_) stagnated = true;
    last_restart_residual_ = relres;
    if (restart && relres < best_residual_) {
      best_residual_ = relres;
      be_.copy(x, best_x_);
    }
    return restart;
  }

  // Where the tolerance is not met: x the iterate of the least true residual seen, relres that residual; the
  // start where the solve stagnated above its residual.
  void keep_best(Vector& x, double& relres, bool stagnated) const {
    if (relres <= tolerance_) return;
    if (best_residual_ < relres) {
      be_.copy(best_x_, x);
      relres = best_residual_;
    }
    if (stagnated && start_residual_ < relres) {
      if (start_is_zero_)
        be_.zero(x, rows_);
      else
        be_.copy(start_x_, x);
      relres = start_residual_;
    }
  }

 private:
  const Backend& be_;
  double tolerance_, check_below_;
  double last_restart_residual_ = INFINITY;
  Vector best_x_;
  double best_residual_ = INFINITY;
  double start_residual_;
  Index rows_;
  bool start_is_zero_;
  Vector start_x_;
};

// Solves A x = b starting from the given x (zeroed if its size is wrong).
template <class Backend, class V>
SolveResult pcg(const Backend& be, const typename Backend::template Matrix<V>& A,
                const typename Backend::template Vector<V>& b, typename Backend::template Vector<V>& x,
                const BackendPreconditioner<Backend, V>& M, const SolverParams& params,
                const IterationCallback& on_iteration = {}) {
  using namespace iteration_detail;
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
  ResidualReplacement<Backend, V> replacement(be, params.tolerance, x, A.rows, relres);
  while (relres > params.tolerance && k < params.max_iterations) {
    ++k;
    const double pq = be.spmv_dot(A, p, q);
    require_positive(pq, "p^T A p", "the matrix is not positive definite", k);
    const V alpha = static_cast<V>(rz / pq);
    relres = std::sqrt(be.cg_update(alpha, p, q, x, r)) / bnorm;
    require_finite(relres, "the residual", k);
    const bool restart = replacement.due(relres) && replacement.replace(A, x, b, r, bnorm, relres, result.stagnated);
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
  replacement.keep_best(x, relres, result.stagnated);
  finish(result, k, relres, params.tolerance, timer);
  return result;
}

}  // namespace amgsolve
