#include "amgsolve/parameter_ranges.hpp"

#include <cmath>
#include <functional>
#include <iomanip>
#include <sstream>

#include "amgsolve/solver.hpp"
#include "common/error.hpp"

namespace amgsolve {
namespace {

constexpr double kMaxInt = 2147483647.0;  // integer keys are stored in 32-bit ints

// A key's range and where its value is in Parameters.
struct Bounded {
  ParameterRange range;
  std::function<double(const Parameters&)> value;
};

#define VALUE(member) [](const Parameters& p) { return static_cast<double>(p.member); }

const std::vector<Bounded>& table() {
  static const std::vector<Bounded> bounded = {
      {{"amg.coarse_size", 1, kMaxInt}, VALUE(amg.coarse_size)},
      {{"amg.max_levels", 1, 100}, VALUE(amg.max_levels)},
      {{"amg.block_size", 1, 64}, VALUE(amg.block_size)},
      {{"amg.improve_near_nullspace", 0, 100}, VALUE(amg.improve_near_nullspace)},
      {{"amg.strength_threshold", 0, 1}, VALUE(amg.strength_threshold)},
      {{"amg.prolongator_damping", 0, 2, true}, VALUE(amg.prolongator_damping)},
      // Fewer than 4 steps can underestimate rho(D^-1 A) so far that the Chebyshev smoother amplifies the top
      // of the spectrum, and PCG breaks down (docs/BENCHMARKS.md, "The setup's MIS-2 on live lists, fewer
      // Lanczos steps").
      {{"amg.lanczos_steps", 4, 200}, VALUE(amg.lanczos_steps)},
      {{"amg.smoother.degree", 1, 20}, VALUE(amg.smoother.degree)},
      {{"amg.smoother.chebyshev_ratio", 1, std::nullopt, true}, VALUE(amg.smoother.chebyshev_ratio)},
      {{"amg.smoother.eigenvalue_safety", 1, 2}, VALUE(amg.smoother.eigenvalue_safety)},
      {{"amg.smoother.sweeps", 1, 20}, VALUE(amg.smoother.sweeps)},
      {{"amg.smoother.omega", 0, 2, false, true}, VALUE(amg.smoother.omega)},  // 2 diverges: rho >= 1
      {{"amg.smoother.pre_steps", 0, 20}, VALUE(amg.pre_smooth)},
      {{"amg.smoother.post_steps", 0, 20}, VALUE(amg.post_smooth)},
      {{"solver.tolerance", 0, 1, true, true}, VALUE(solver.tolerance)},
      {{"solver.absolute_tolerance", 0, std::nullopt}, VALUE(solver.absolute_tolerance)},
      {{"solver.max_iterations", 1, kMaxInt}, VALUE(solver.max_iterations)},
  };
  return bounded;
}

#undef VALUE

// The first enumeration holding a value none of its names stands for (a cast integer may hold any).
std::string unknown_choice(const Parameters& p) {
  std::string problem;
  const auto require = [&problem](bool known, const char* key) {
    if (!known && problem.empty()) problem = std::string(key) + " is not one of its values (docs/CONFIG.md)";
  };
  require(is_named(p.backend), "backend");
  require(is_named(p.amg.smoother.type), "amg.smoother.type");
  require(is_named(p.amg.smoother.diagonal), "amg.smoother.diagonal");
  require(is_named(p.amg.spectral_radius), "amg.spectral_radius");
  require(is_named(p.amg.nullspace), "amg.nullspace");
  require(is_named(p.solver.type), "solver.type");
  require(is_named(p.solver.precision), "solver.precision");
  require(is_named(p.solver.spmv_format), "solver.spmv_format");
  require(is_named(p.solver.halo_exchange), "solver.halo_exchange");
  return problem;
}

// Vectors given without a count (or a negative one): they would be dropped without a word.
std::string near_nullspace_count_problem(const NearNullspaceVectors& given) {
  const std::size_t held = given.values ? given.values->size() : 0;
  if (given.count >= 0 && !(given.count == 0 && held > 0)) return "";
  return "amg.near_nullspace holds " + std::to_string(held) + " values but counts " + std::to_string(given.count) +
         " vectors (NearNullspaceVectors::count: how many vectors the values hold)";
}

}  // namespace

const ParameterRange& parameter_range(const std::string& key) {
  for (const Bounded& b : table())
    if (b.range.key == key) return b.range;
  throw Error("internal: no range for " + key);
}

bool within(const ParameterRange& r, double v) {
  if (std::isnan(v)) return false;
  if (r.min && (r.min_excluded ? v <= *r.min : v < *r.min)) return false;
  if (r.max && (r.max_excluded ? v >= *r.max : v > *r.max)) return false;
  return true;
}

std::string describe(const ParameterRange& range) {
  std::ostringstream text;
  text << std::setprecision(15) << "must be";  // 2147483647, not 2.15e+09
  if (range.min) text << (range.min_excluded ? " > " : " >= ") << *range.min;
  if (range.min && range.max) text << " and";
  if (range.max) text << (range.max_excluded ? " < " : " <= ") << *range.max;
  return text.str();
}

std::string smoothing_steps_problem(int pre_steps, int post_steps, SolverType type, bool post_given) {
  if (pre_steps == 0 && post_steps == 0) {
    const std::string key = post_given ? "amg.smoother.post_steps" : "amg.smoother.pre_steps";
    return key + " is 0 and so is " + (post_given ? "amg.smoother.pre_steps" : "amg.smoother.post_steps") +
           ": a V-cycle that never smooths corrects only in the coarse space, which is no preconditioner (give "
           "one of them at least 1)";
  }
  if (type == SolverType::pcg && pre_steps != post_steps) {
    const std::string pre = std::to_string(pre_steps), post = std::to_string(post_steps);
    return (post_given ? "amg.smoother.post_steps is " + post + " and pre_steps " + pre
                       : "amg.smoother.pre_steps is " + pre + " and post_steps " + post) +
           ": conjugate gradients needs a symmetric V-cycle, as many smoothing steps after the coarse correction as "
           "before (make them equal, or use solver.type: amg)";
  }
  return "";
}

std::string parameter_problem(const Parameters& params) {
  for (const Bounded& b : table()) {
    const double v = b.value(params);
    // Infinity too, where a side is open: no key means it (the YAML reader refuses it as no finite number).
    if (!std::isfinite(v) || !within(b.range, v))
      return b.range.key + " " + describe(b.range) + ", got " + format_number(v);
  }
  if (std::string problem = unknown_choice(params); !problem.empty()) return problem;
  if (std::string problem = near_nullspace_count_problem(params.amg.near_nullspace); !problem.empty()) return problem;
  return smoothing_steps_problem(params.amg.pre_smooth, params.amg.post_smooth, params.solver.type);
}

void require_valid(const Parameters& params) {
  if (const std::string problem = parameter_problem(params); !problem.empty()) throw InputError(problem);
}

}  // namespace amgsolve
