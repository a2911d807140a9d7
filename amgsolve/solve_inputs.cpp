#include "amgsolve/solve_inputs.hpp"

#include <cmath>

#include "amgsolve/parameter_ranges.hpp"
#include "amgsolve/vector_scale.hpp"
#include "common/error.hpp"
#include "common/parallel.hpp"

namespace amgsolve {
namespace {

std::string length_problem(const Vector<double>& v, const std::string& what, const VectorRows& rows) {
  if (v.size() == rows.entries) return "";
  return what + " has " + std::to_string(v.size()) + " entries, " +
         (rows.rank_rows ? "this rank's rows of the matrix " : "the matrix ") + std::to_string(rows.entries) + " rows";
}

// "what: entry i (counted from 0) is nan" for a vector's first entry that is not finite, or "": the
// library's vectors are arrays, indexed from 0 by its callers (C++, numpy); a rank's rows by their global
// numbers.
std::string non_finite_problem(const Vector<double>& v, const std::string& what, const VectorRows& rows) {
  const auto n = static_cast<std::int64_t>(v.size());
  const std::int64_t bad = first_index_where(n, [&](std::int64_t i) { return !std::isfinite(v[i]); });
  if (bad == n) return "";
  return what + ": entry " + std::to_string(rows.first + bad) + " (counted from 0) is " + format_number(v[bad]);
}

// A vector's length, then its entries.
std::string vector_problem(const Vector<double>& v, const std::string& what, const VectorRows& rows) {
  if (std::string problem = length_problem(v, what, rows); !problem.empty()) return problem;
  return non_finite_problem(v, what, rows);
}

}  // namespace

std::string solve_limits_problem(const SolverParams& limits) {
  const ParameterRange& tolerance = parameter_range("solver.tolerance");
  if (!within(tolerance, limits.tolerance))
    return "tolerance " + describe(tolerance) + ", got " + format_number(limits.tolerance);
  const ParameterRange& absolute = parameter_range("solver.absolute_tolerance");
  if (!std::isfinite(limits.absolute_tolerance) || !within(absolute, limits.absolute_tolerance))
    return "absolute tolerance " + describe(absolute) + ", got " + format_number(limits.absolute_tolerance);
  const ParameterRange& iterations = parameter_range("solver.max_iterations");
  if (!within(iterations, limits.max_iterations))
    return "max_iterations " + describe(iterations) + ", got " + std::to_string(limits.max_iterations);
  return "";
}

std::string right_hand_side_problem(const Vector<double>& b, const VectorRows& rows) {
  return vector_problem(b, "right-hand side", rows);
}

std::string initial_guess_problem(const Vector<double>& x0, const VectorRows& rows, int exponent) {
  if (std::string problem = vector_problem(x0, "initial guess", rows); !problem.empty()) return problem;
  const double largest = largest_magnitude(x0);
  if (!std::isfinite(std::ldexp(largest, -exponent)))
    return "initial guess: its largest entry, " + format_number(largest) + ", is beyond double's range on the "
           "scale the solve runs on (2^" + std::to_string(exponent) + "): start from zero";
  return "";
}

std::string preconditioned_vector_problem(const Vector<double>& r, const VectorRows& rows) {
  return vector_problem(r, "preconditioned vector", rows);
}

}  // namespace amgsolve
