#pragma once
// The stationary AMG iteration x <- x + M^-1 (b - A x) (solver.type: amg): the V-cycle alone, as a solver,
// written once over a backend (backend/backend.hpp). Its residual growing without bound is the cycle's fault
// (PreconditionerBreakdown), since for an SPD A it means the V-cycle amplifies some error.
#include <limits>

#include "solver/iteration.hpp"

namespace amgsolve {

// Iterations without a new least residual after which the stationary iteration has stagnated. Its residual
// is the true one, so a convergent cycle lowers it every iteration or two (in the A-norm the error falls at
// every iteration); at the attainable accuracy it stays put or wanders near it, and the iteration would
// otherwise run to solver.max_iterations (2^31 - 1 of them are allowed). The least is taken from the first
// iteration on: the first cycle may raise the residual above b's (3.6 times it with a weakly damped Jacobi
// smoother) and the later ones lower it steadily. A residual above the one a window before, or beyond
// kStagnationBand times the least, is not wandering but climbing (a cycle that amplifies some error by a few
// percent an iteration): it goes on, to the divergence check, the iteration limit or back down. The window
// and the band are generous (a flat residual at rounding level stops 20 iterations late, at most).
inline constexpr int kStagnationWindow = 20;
inline constexpr double kStagnationBand = 10;

// x <- x + M^-1 (b - A x) until the residual is small enough, or stagnates (kStagnationWindow).
template <class Backend, class V>
SolveResult stationary_iteration(const Backend& be, const typename Backend::template Matrix<V>& A,
                                 const typename Backend::template Vector<V>& b, typename Backend::template Vector<V>& x,
                                 const BackendPreconditioner<Backend, V>& M, const SolverParams& params,
                                 const IterationCallback& on_iteration = {}) {
  using namespace iteration_detail;
  Timer timer;
  SolveResult result;
  typename Backend::template Vector<V> r, correction;
  double bnorm = 0;
  if (!start<Backend, V>(be, A, b, x, r, bnorm, result)) return result;
  double relres = result.history.back();
  double least = std::numeric_limits<double>::infinity();
  int k = 0, least_at = 0;
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
    if (relres < least) {
      least = relres;
      least_at = k;
    } else if (k - least_at >= kStagnationWindow && relres <= kStagnationBand * least &&
               relres <= result.history[static_cast<std::size_t>(k - kStagnationWindow)]) {
      result.stagnated = true;
      break;
    }
  }
  finish(result, k, relres, params.tolerance, timer);
  return result;
}

}  // namespace amgsolve
