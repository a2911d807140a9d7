#pragma once
// The JSON report of a run (--report FILE.json): problem, per-level setup statistics, convergence
// history, timings and memory. Field names are part of the interface scripts rely on; README.md lists
// them.
#include <nlohmann/json.hpp>
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "amgsolve/solver.hpp"
#include "common/output_mark.hpp"
#include "solver/solve_result.hpp"
#include "spgemm/comparison.hpp"

namespace amgsolve {

// One AMG hierarchy: what was built and what it cost (the library's summary of a setup).
using SetupRecord = SetupSummary;

// The camera's pixel at a detector point on the back, for one source: the exitance (W/mm^2) of each band.
struct DetectorReading {
  std::array<double, 2> point{};
  double excitation = 0.0;
  std::optional<double> emission;  // with fluorescence; emission / excitation is the normalised Born ratio
};

// One light source of a diffuse-optical problem: its solves against the set-up hierarchies and the
// power balance of the excitation fluence (absorbed + boundary outflow = source power).
struct SourceRecord {
  int index = 0;  // 1-based
  std::array<double, 2> spot{};
  std::array<double, 3> position{};
  double skin_z = 0.0;  // where the beam enters
  SolveResult excitation;
  double absorbed = 0.0;
  double outflow = 0.0;
  std::optional<SolveResult> emission;
  double emission_outflow = 0.0;  // fluorescence leaving the skin
  std::vector<DetectorReading> detectors;
};

// One tissue of the mouse: how much of it there is and its optical properties (1/mm) in each band.
struct TissueRecord {
  std::string name;
  std::int64_t voxels = 0;
  double volume_cm3 = 0.0;
  std::array<double, 2> mua{}, musp{};  // excitation, emission
};

// The mouse model as built: frame, boundary condition and the tissues.
struct MouseRecord {
  std::string frame;
  std::array<int, 2> wavelengths_nm{};  // excitation, emission
  double source_power = 1.0;
  bool fluorescence = false;
  double tumour_yield = 0.0, background_yield = 0.0;  // the fluorophore's (1/mm), with fluorescence
  double refractive_index = 1.0;
  std::string reflection;     // problem.reflection
  double robin_factor = 1.0;  // A
  double skin_area_mm2 = 0.0;       // the true skin area (the boundary faces' weighted areas)
  double staircase_area_mm2 = 0.0;  // the voxel faces' own area
  std::vector<TissueRecord> tissues;
};

// One MPI rank's share of a distributed solve: its rows of the finest level and what it communicated.
struct RankLoad {
  Index rows = 0;
  CommunicationStats communication;        // the solve's
  CommunicationStats setup_communication;  // the setup's
};

// One step of problem.steps: its coefficient, its setup (a re-setup after the first) and its solve.
struct StepRecord {
  int step = 0;
  double contrast = 0.0;
  double setup_seconds = 0.0;
  bool reused = false;       // the structure kept (a re-setup), or a full setup
  std::string setup_note;    // why
  SolveResult solve;
};

struct RunRecord {
  std::string program;  // amgsolve's version and commit (--version's first line)
  std::string config_file;
  std::vector<std::string> overrides;  // the --set assignments of the run
  std::string problem_description;
  std::string problem_type;
  Index rows = 0;
  Offset nnz = 0;
  double problem_seconds = 0.0;
  bool assembled_by_rows = false;  // each MPI rank assembled only its rows of the matrix
  std::vector<Offset> row_length_histogram;  // rows with 0, 1, 2, ... nonzeros
  SetupRecord setup;
  std::optional<SetupRecord> emission_setup;  // mouse with fluorescence: the emission-band hierarchy
  std::vector<SpgemmComparisonRow> spgemm_comparison;  // --compare-spgemm
  bool spgemm_compared = false;  // asked for: the report lists the comparison even without rows
  // solve
  std::string solver_type;
  std::string precision = "double";  // of the V-cycle: "double" or "mixed" (float cycle, double PCG)
  double tolerance = 0.0;
  double absolute_tolerance = 0.0;     // solver.absolute_tolerance (0: none)
  std::string initial_guess = "zero";  // solver.initial_guess
  SolveResult solve;                   // the solve (for several sources: the first excitation solve)
  std::vector<SourceRecord> sources;   // diffuse-optical problems
  std::optional<MouseRecord> mouse;
  std::vector<StepRecord> steps;       // problem.steps > 1
  std::vector<SolveResult> load_cases;  // problem.rhs of several columns: each one's solve (the first: `solve`)
  std::optional<double> relative_error;  // ||x - x*|| / ||x*|| when the exact solution is known
  // machine
  std::string backend = "cpu";  // where the setup and the solve ran (`backend`, resolved)
  int threads = 1;          // OpenMP threads per rank
  int ranks = 1;            // MPI ranks
  std::vector<RankLoad> rank_loads;  // per rank, for a distributed solve (empty on one process)
  std::uint64_t peak_memory_bytes = 0;  // of rank 0
};

nlohmann::json report_json(const RunRecord& run);

// What a report and a comparison CSV written by amgsolve start with (the report's first key, "amgsolve", holds
// the program's version; nlohmann's dump(2) writes the keys sorted, so it comes first): require_writable
// replaces no file that does not start so.
inline constexpr OutputMark kReportMark{"{\n  \"amgsolve\":", true};
inline constexpr OutputMark kSpgemmCsvMark{"level,product,backend,seconds,", true};

// Written atomically: the file appears complete or not at all.
void write_report(const std::string& path, const RunRecord& run);

// The SpGEMM comparison as CSV (one line per level, product and backend), written atomically.
void write_spgemm_comparison_csv(const std::string& path, const std::vector<SpgemmComparisonRow>& rows);

}  // namespace amgsolve
