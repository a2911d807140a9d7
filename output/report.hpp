#pragma once
// The JSON report of a run (--report FILE.json): problem, per-level setup statistics, convergence
// history, timings and memory. Field names are part of the interface scripts rely on; README.md lists
// them.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "amg/hierarchy.hpp"
#include "solver/solve_result.hpp"
#include "spgemm/comparison.hpp"

namespace amgsolve {

struct RunRecord {
  std::string config_file;
  std::string problem_description;
  std::string problem_type;
  Index rows = 0;
  Offset nnz = 0;
  double problem_seconds = 0.0;
  // setup
  std::vector<LevelInfo> levels;
  double setup_seconds = 0.0;
  double operator_complexity = 0.0;
  double grid_complexity = 0.0;
  std::string spgemm_backend;
  std::uint64_t hierarchy_bytes = 0;
  std::vector<SpgemmComparisonRow> spgemm_comparison;  // --compare-spgemm
  // solve
  std::string solver_type;
  std::string precision = "double";  // of the V-cycle: "double" or "mixed" (float cycle, double PCG)
  double tolerance = 0.0;
  SolveResult solve;
  std::optional<double> relative_error;  // ||x - x*|| / ||x*|| when the exact solution is known
  // machine
  int threads = 1;
  std::uint64_t peak_memory_bytes = 0;
};

nlohmann::json report_json(const RunRecord& run);

// Written atomically: the file appears complete or not at all.
void write_report(const std::string& path, const RunRecord& run);

// The SpGEMM comparison as CSV (one line per level, product and backend), written atomically.
void write_spgemm_comparison_csv(const std::string& path, const std::vector<SpgemmComparisonRow>& rows);

}  // namespace amgsolve
