#include "solver/iteration.hpp"

#include <limits>

namespace amgsolve {

double SolveResult::convergence_factor() const {
  if (iterations == 0 || history.empty() || history.front() <= 0) return 0.0;
  return std::pow(history.back() / history.front(), 1.0 / iterations);
}

namespace iteration_detail {

void require_finite(double value, const char* what, int iteration, const char* method) {
  if (!std::isfinite(value))
    throw NumericalError(std::string(method) + ": " + what + " became NaN or infinite at iteration " +
                         std::to_string(iteration) + " (is the matrix SPD?)");
}

void require_finite_start(double relres) {
  if (!std::isfinite(relres))
    throw InputError("the initial guess is too large for this matrix: the residual b - A x0 or its norm is "
                     "beyond double's range (start from zero, or from a guess on the solution's scale)");
}

void require_not_diverging(double relres, int iteration) {
  if (relres > kDivergedResidual)
    throw PreconditionerBreakdown("the AMG iteration diverges: relative residual " + format_number(relres) +
                                  " at iteration " + std::to_string(iteration));
}

namespace {
std::string breakdown(double value, const char* what, const char* meaning, int iteration) {
  const std::string when =
      iteration == 0 ? "before the first iteration" : "at iteration " + std::to_string(iteration);
  return "PCG breakdown " + when + ": " + what + " = " + format_number(value) + " <= 0, " + meaning;
}
}  // namespace

void require_positive(double value, const char* what, const char* meaning, int iteration) {
  require_finite(value, what, iteration);
  if (value <= 0.0) throw NumericalError(breakdown(value, what, meaning, iteration));
}

void require_positive_preconditioner(double rz, int iteration) {
  // +inf from finite residuals: the cycle's output is beyond double's range, as for a matrix whose entries
  // are so small (below about 1e-300) that A^-1 r overflows; not a sign of an indefinite matrix.
  if (rz == std::numeric_limits<double>::infinity())
    throw NumericalError("PCG: r^T M^-1 r overflowed at iteration " + std::to_string(iteration) +
                         ": the preconditioned residual is beyond double's range (a matrix of tiny entries? "
                         "scale it)");
  require_finite(rz, "r^T M^-1 r", iteration);
  if (rz <= 0.0)
    throw PreconditionerBreakdown(
        breakdown(rz, "r^T M^-1 r", "the preconditioner is not positive definite", iteration));
}

}  // namespace iteration_detail
}  // namespace amgsolve
