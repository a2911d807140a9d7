#pragma once
// The stationary AMG iteration x <- x + M^-1 (b - A x) (solver.type: amg): the V-cycle alone, as a solver,
// written once over a backend (backend/backend.hpp). Its residual growing without bound is the cycle's fault
// (PreconditionerBreakdown), since for an SPD A it means the V-cycle amplifies some error.
#include "solver/iteration.hpp"

namespace amgsolve {

// x <- x + M^-1 (b - A x) until the residual is small enough.
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

}  // namespace amgsolve
