#pragma once
// The ranges of the solver's numeric parameters (the amg.* and solver.* keys), declared here once: the
// configuration schema (config/schema.cpp) bounds its keys by them, and the Solver checks Parameters set in
// code, which no schema has read, against them (a lanczos_steps of 0 read as "the matrix is not positive
// definite", a smoother degree of 10^6 ran for minutes). The rules between keys are here too.
#include <optional>
#include <string>
#include <vector>

namespace amgsolve {

struct Parameters;
enum class SolverType;

struct ParameterRange {
  std::string key;                    // "amg.lanczos_steps"
  std::optional<double> min, max;
  bool min_excluded = false, max_excluded = false;
};

// The range of one key (which must be in the table).
const ParameterRange& parameter_range(const std::string& key);

// "must be >= 1 and <= 200", as the messages say it (the config reader's too, for every bounded key).
std::string describe(const ParameterRange& range);
bool within(const ParameterRange& range, double value);  // false for NaN

// What makes the smoothing steps unusable, "" where nothing does: none at all, or (pcg) a cycle that is not
// symmetric. The message begins with the key it blames (the one of the two given, where known).
std::string smoothing_steps_problem(int pre_steps, int post_steps, SolverType type, bool post_given = true);

// The first parameter out of its range, not one of its choices, or at odds with another, or "".
std::string parameter_problem(const Parameters& params);
// Throws parameter_problem's InputError.
void require_valid(const Parameters& params);

}  // namespace amgsolve
