#pragma once
// What PCG (solver/pcg.hpp) and the stationary AMG iteration (solver/stationary_iteration.hpp) share: the
// preconditioner's type, the breakdown checks and their messages (iteration.cpp), and the start and the end
// of an iteration. Breakdown is an error, not a wrong answer: p^T A p <= 0 means A is not positive definite,
// and r^T M^-1 r <= 0 that the preconditioner is not; NaN or infinity anywhere stops the solve.
#include <cmath>
#include <functional>
#include <string>

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

namespace iteration_detail {

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

// The end both iterations share: the counts, the final residual, and the time since `timer` started.
inline void finish(SolveResult& result, int iterations, double relres, double tolerance, const Timer& timer) {
  result.iterations = iterations;
  result.relative_residual = relres;
  result.converged = relres <= tolerance;
  result.seconds = timer.seconds();
}

}  // namespace iteration_detail

}  // namespace amgsolve
