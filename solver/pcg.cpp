#include "solver/pcg.hpp"

namespace amgsolve {

double SolveResult::convergence_factor() const {
  if (iterations == 0 || history.empty() || history.front() <= 0) return 0.0;
  return std::pow(history.back() / history.front(), 1.0 / iterations);
}

namespace pcg_detail {

void require_finite(double value, const char* what, int iteration) {
  if (!std::isfinite(value))
    throw NumericalError(std::string("PCG: ") + what + " became NaN or infinite at iteration " +
                         std::to_string(iteration) + " (is the input finite and the matrix SPD?)");
}

void require_positive(double value, const char* what, const char* meaning, int iteration) {
  require_finite(value, what, iteration);
  if (value > 0.0) return;
  const std::string when =
      iteration == 0 ? "before the first iteration" : "at iteration " + std::to_string(iteration);
  throw NumericalError("PCG breakdown " + when + ": " + what + " = " + format_number(value) + " <= 0, " + meaning);
}

}  // namespace pcg_detail
}  // namespace amgsolve
