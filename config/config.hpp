#pragma once
// The typed configuration of one run, read from YAML with command-line overrides and validated
// against config/schema.cpp, where every key is declared once. Errors are InputError with
// "file:line: key: problem" messages.
#include <cstdint>
#include <string>
#include <vector>

#include "amg/params.hpp"
#include "common/device.hpp"
#include "problems/problem.hpp"
#include "solver/solve_result.hpp"

namespace amgsolve {

struct OutputParams {
  std::string report;    // JSON report path ("" = none)
  std::string vtk;       // .vti path ("" = none)
  std::string solution;  // Matrix Market solution vector path ("" = none)
  std::string spgemm_csv;  // SpGEMM comparison CSV path ("" = none)
  std::string skin;      // mouse: .vtp of the skin with the exitance ("" = none)
  std::string camera;    // mouse: .vti of the camera's view from above ("" = none)
  std::vector<std::int64_t> vtk_sources;  // mouse: sources (from 1) written to the VTK files; empty: all
};

// Where each solve of a run starts (solver.initial_guess): from zero, or, in time stepping (problem.steps),
// from the step before's solution.
enum class InitialGuess { zero, previous_step };
inline constexpr EnumName<InitialGuess> kInitialGuessNames[] = {{"zero", InitialGuess::zero},
                                                                {"previous_step", InitialGuess::previous_step}};
constexpr const auto& names_of(InitialGuess) { return kInitialGuessNames; }

struct Config {
  std::string source;    // the config file
  std::vector<std::string> overrides;  // the --set assignments, as given (the report records them)
  // A hash of the settings as read (the --set overrides applied, in one form whatever the order of the keys
  // or how a number is written): ranks started alike have the same one (a rank with other settings would
  // build another hierarchy and wait in other collectives).
  std::uint64_t fingerprint = 0;
  // Where the setup and the solve run. The default stays the CPU until the GPU code has passed on a device
  // (issue #26); `backend` holds what the choice resolved to (resolve_backend, once, at load).
  BackendChoice backend_choice = BackendChoice::cpu;
  BackendKind backend = BackendKind::cpu;
  // The MPI ranks the config was loaded for. On several the setup runs on each rank's CPU cores (amg.spgemm
  // is one of the cpu backend's or a distributed one) and `auto` is the cpu; `cuda` solves on their GPUs.
  int ranks = 1;
  ProblemSpec problem;
  AmgParams amg;   // amg.spgemm is never empty after loading: the backend's default when not given
  bool compare_spgemm = false;  // run every SpGEMM backend on every setup product beside the setup
  int compare_spgemm_runs = 3;  // amg.compare_runs: timed runs per backend and product (ComparisonTiming)
  SolverParams solver;
  int print_every = 1;
  InitialGuess initial_guess = InitialGuess::zero;
  OutputParams output;
};

// overrides: "key.path=value" strings from --set, applied in order after the file is read. Relative input
// paths (problem.matrix, problem.rhs) are resolved from the config file's folder; those given with --set
// from the working directory. An input file that cannot be read is an error naming its key and line.
// ranks: the MPI ranks the run has (Config::ranks).
// check_inputs: whether the input files are opened now (under MPI only rank 0 reads them).
Config load_config(const std::string& path, const std::vector<std::string>& overrides = {}, int ranks = 1,
                   bool check_inputs = true);

// Same, from YAML text (tests); `name` is used in messages in place of a file name, and relative input
// paths in the text are resolved from base_folder (empty: the working directory), not opened.
Config parse_config(const std::string& yaml_text, const std::string& name,
                    const std::vector<std::string>& overrides = {}, const std::string& base_folder = "",
                    int ranks = 1);

// The solver's settings alone (backend, amg.*, solver.*), for the library and the Python package: the same
// "key.path=value" assignments as --set, validated by the same schema, with `label` in place of "--set" in
// messages (e.g. "parameter amg.coarse_size: ..."). Any other key is an error; the rest of the Config keeps
// its defaults.
Config parse_solver_settings(const std::vector<std::string>& assignments, const std::string& label);

}  // namespace amgsolve
