#include "app/run.hpp"

#include "app/ranks.hpp"
#include "app/near_nullspace_input.hpp"
#include "app/run_support.hpp"
#include "app/version.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <type_traits>

#include "amg/near_nullspace.hpp"
#include "amg/system_nullspace.hpp"
#include "amg/nullspace.hpp"
#include "amg/params.hpp"
#include "amgsolve/solver.hpp"
#include "common/atomic_file.hpp"
#include "common/device.hpp"
#include "common/environment.hpp"
#include "common/error.hpp"
#include "common/log.hpp"
#include "common/memory.hpp"
#include "common/parallel.hpp"
#include "common/timer.hpp"
#include "config/config.hpp"
#include "config/solver_parameters.hpp"
#include "output/report.hpp"
#include "output/vtk_writer.hpp"
#include "solver/pcg.hpp"
#include "sparse/csr_ops.hpp"
#include "sparse/matrix_market.hpp"
#include "spgemm/registry.hpp"

namespace amgsolve {
namespace {

// Refuses an output path without the extension its writer needs; ".vti" alone is a hidden file's name
// without one, said as such.
void require_extension(const std::string& key, const std::string& path, const char* extension, const std::string& why) {
  const std::filesystem::path file(path);
  if (file.extension() == extension) return;
  if (file.filename() == extension)
    throw InputError(key + ": " + printable(path) + " has no name before its " + extension + " extension");
  throw InputError(key + ": " + why + "use a " + extension + " file name, not " + printable(path));
}

// The mouse's views of the skin (output.skin, output.camera): VTK files of a given kind.
void check_mouse_view(const Config& config, const std::string& key, const std::string& path, const char* extension,
                      const char* what) {
  if (path.empty()) return;
  if (config.problem.type != ProblemType::mouse)
    throw InputError(key + ": only a mouse problem has a " + std::string(what) + " to write (" + key +
                     " is the mouse's)");
  if (!vtk_available())
    throw InputError(key + ": built without VTK, so no " + extension + " file can be written (install libvtk9-dev "
                     "and rebuild, or leave " + key + " empty)");
  require_extension(key, path, extension, "");
  require_writable(path, what, kVtkMark);
}

// Fails fast, before any long computation, on output paths that cannot be written. `vtk_key` names where
// output.vtk came from (--vtk on the command line).
void check_outputs(const Config& config, const std::string& vtk_key) {
  const OutputParams& out = config.output;
  // No output may overwrite an input or another output (said first: more to the point than "not ours").
  std::vector<std::pair<std::string, std::string>> outputs;
  for (const auto& [what, path] :
       {std::pair{"report file", out.report}, std::pair{"solution file", out.solution},
        std::pair{"SpGEMM comparison file", out.spgemm_csv}, std::pair{"VTK file", out.vtk},
        std::pair{"skin surface file", out.skin}, std::pair{"camera image file", out.camera}})
    if (!path.empty()) outputs.emplace_back(what, path);
  std::vector<std::string> inputs = {config.source};
  if (config.problem.type == ProblemType::matrix_market) {
    const MatrixMarketParams& p = config.problem.matrix_market;
    inputs.insert(inputs.end(), {p.matrix, p.rhs, p.x0, p.near_nullspace, p.coordinates});
  }
  require_distinct_outputs(outputs, inputs);
  if (!out.report.empty()) require_writable(out.report, "report file", kReportMark);
  if (!out.solution.empty()) {
    if (config.problem.type == ProblemType::mouse)
      throw InputError("output.solution: a mouse problem has one fluence per source; use output.vtk");
    if (std::filesystem::path(out.solution).extension() == ".gz")
      throw InputError("output.solution: " + out.solution + " would not be compressed: the solution is written as "
                       "plain Matrix Market text (name it .mtx)");
    require_writable(out.solution, "solution file", kSolutionMark);
  }
  if (!out.spgemm_csv.empty()) require_writable(out.spgemm_csv, "SpGEMM comparison file", kSpgemmCsvMark);
  if (!out.vtk.empty()) {
    if (!vtk_available())
      throw InputError(vtk_key + ": built without VTK, so no .vti file can be written (install libvtk9-dev and "
                       "rebuild, or leave output.vtk and --vtk empty)");
    if (config.problem.type == ProblemType::matrix_market)
      throw InputError(vtk_key + ": VTK output needs a grid, and a matrix_market problem has none "
                       "(use output.solution to save the solution vector)");
    require_extension(vtk_key, out.vtk, ".vti", "grid problems are written as VTK image data; ");
    require_writable(out.vtk, "VTK file", kVtkMark);
  }
  check_mouse_view(config, "output.skin", out.skin, ".vtp", "skin surface file");
  check_mouse_view(config, "output.camera", out.camera, ".vti", "camera image file");
}

void print_level(const LevelInfo& l, const std::string& backend) {
  const double per_row = l.rows > 0 ? static_cast<double>(l.nnz) / l.rows : 0.0;
  // A delegating backend (auto) says what it chose for the Galerkin product P^T (A P).
  const std::string shown = l.rap_product.choice.empty() ? backend : backend + " -> " + l.rap_product.choice;
  progress("  %5d %12d %14lld %8.2f %9.3f  %s\n", l.level, l.rows, static_cast<long long>(l.nnz), per_row, l.seconds,
           l.coarsest ? ("(coarsest: " + l.smoother + ")").c_str() : shown.c_str());
}

// The last column of the comparison table: agreement (or the error), then whether the backend is an
// external baseline, or what a delegating backend (auto) picked and why.
std::string comparison_note(const SpgemmComparisonRow& r) {
  std::string note = r.agrees ? "yes" : r.error.empty() ? "NO" : "NO: " + r.error;
  if (r.external_baseline) note += "  (external baseline)";
  if (!r.stats.choice.empty()) note += "  -> " + r.stats.choice;
  return note;
}

// The --compare-spgemm table: level x product x backend.
void print_comparison(const std::vector<SpgemmComparisonRow>& rows, int runs) {
  progress("SpGEMM comparison (every backend on every setup product after a warm-up run; seconds: median of %d "
           "runs in rotating order, spread: fastest-slowest; agrees = same pattern and values):\n", runs);
  if (rows.empty()) {
    progress("  none: the setup formed no product (one level, factorised or smoothed whole)\n");
    return;
  }
  progress("  %5s %-12s %-10s %9s %17s %9s %12s %7s %10s  %s\n", "level", "product", "backend", "seconds", "spread",
           "GFLOP/s", "nnz", "compr.", "extra MiB", "agrees");
  for (const SpgemmComparisonRow& r : rows) {
    progress("  %5d %-12s %-10s %9.4f %8.4f-%-8.4f %9.3f %12lld %7.2f %10.1f  %s\n", r.level, r.product.c_str(),
             r.backend.c_str(), r.stats.seconds(), r.min_seconds, r.max_seconds, r.stats.gflops(),
             static_cast<long long>(r.stats.nnz), r.stats.compression_factor(),
             static_cast<double>(r.stats.extra_bytes) / (1 << 20), comparison_note(r).c_str());
    std::string phases;  // a distributed backend's phases: slowest rank's seconds, bytes all ranks sent
    for (const SpgemmPhase& p : r.stats.phases)
      phases += "  " + p.name + " " + format_number(p.seconds) + " s " + format_bytes(p.bytes);
    if (!phases.empty()) progress("  %30s%s\n", "", phases.c_str());
  }
}

// ||x - exact|| / ||exact||, of whole vectors or (by_rows) of the ranks' rows of them (collective).
double relative_error(const Vector<double>& x, const Vector<double>& exact, bool by_rows) {
  const double d = sum_of(x, [&](std::int64_t i) { return (x[i] - exact[i]) * (x[i] - exact[i]); }, by_rows);
  const double r = sum_of(exact, [&](std::int64_t i) { return exact[i] * exact[i]; }, by_rows);
  return r > 0 ? std::sqrt(d / r) : std::sqrt(d);
}

// Every point's first value of v, whose unknowns come `per_point` at a point (a system's aggregates, one per node).
template <class T>
Array<T> first_of_each_point(const Array<T>& v, int per_point) {
  if (per_point == 1) return v;
  Array<T> first(v.size() / static_cast<std::size_t>(per_point));
  for (std::size_t p = 0; p < first.size(); ++p) first[p] = v[p * static_cast<std::size_t>(per_point)];
  return first;
}

// The VTK point fields of a grid problem's solution x: x and b, and the exact solution and the error where
// it is known; a system's (elasticity's) each component of x, named by its axis, and their magnitude.
std::vector<ScalarField> point_fields(const LinearProblem& problem, const Vector<double>& x) {
  const int d = problem.unknowns_per_point;
  if (d > 1) {
    const std::size_t points = x.size() / static_cast<std::size_t>(d);
    std::vector<ScalarField> fields;
    Vector<double> magnitude(points, 0.0);
    for (int c = 0; c < d; ++c) {
      Vector<double> component(points);
      for (std::size_t p = 0; p < points; ++p) {
        component[p] = x[p * d + c];
        magnitude[p] += component[p] * component[p];
      }
      fields.push_back({std::string("displacement_") + "xyz"[c], std::move(component)});
    }
    for (double& m : magnitude) m = std::sqrt(m);
    fields.push_back({"displacement_magnitude", std::move(magnitude)});
    return fields;
  }
  std::vector<ScalarField> scalars = {{"solution", x}, {"rhs", problem.b}};
  if (problem.exact) {
    scalars.push_back({"exact", *problem.exact});
    Vector<double> error(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) error[i] = x[i] - (*problem.exact)[i];
    scalars.push_back({"error", std::move(error)});
  }
  return scalars;
}

// Every output of the run, committed together: if one cannot be written, none is left behind. solutions: x,
// then those of problem.rhs's further columns.
void write_outputs(const Config& config, const RunRecord& record, const LinearProblem& problem,
                   const Array<Index>& aggregates, const std::vector<const Vector<double>*>& solutions) {
  const OutputParams& out = config.output;
  const Vector<double>& x = *solutions.front();
  OutputBatch batch;
  std::vector<std::string> written;
  if (!out.solution.empty()) {
    write_matrix_market_columns(out.solution, solutions);
    written.push_back(solutions.size() > 1 ? "solutions (" + std::to_string(solutions.size()) + " columns) written to " + out.solution
                                           : "solution written to " + out.solution);
  }
  if (!out.vtk.empty()) {
    std::vector<ScalarField> scalars = point_fields(problem, x);
    std::vector<IntegerField> integers;
    if (!aggregates.empty()) integers.push_back({"aggregate", first_of_each_point(aggregates, problem.unknowns_per_point)});
    write_vti(out.vtk, *problem.grid, scalars, integers);
    written.push_back("VTK image data written to " + out.vtk);
  }
  write_comparison_if_asked(out, record, written);
  if (!out.report.empty()) {
    write_report(out.report, record);
    written.push_back("report written to " + out.report);
  }
  batch.commit();
  for (const std::string& line : written) progress("%s\n", line.c_str());
}

// The comparison's callback: every backend on every product of the setup, in the hierarchy's precision.
template <class Value>
typename AmgHierarchy<Value>::ProductCallback comparing_into(std::vector<SpgemmComparisonRow>& comparison,
                                                            const ComparisonTiming& timing) {
  return [&comparison, timing](int level, const std::string& product, const CsrMatrix<Value>& a,
                               const CsrMatrix<Value>& b, const CsrMatrix<Value>& c) {
    for (SpgemmComparisonRow& row : compare_spgemm_backends(level, product, a, b, c, timing))
      comparison.push_back(std::move(row));
  };
}

void print_format_costs(const SetupRecord& setup) {
  progress("  SpMV storage per level%s: bytes (overhead vs CSR) and model bytes/flop (Kreutzer et al. eq. 1)\n",
           setup.ranks > 1 ? " (rank 0's rows)" : "");
  progress("  %5s %29s %29s %29s\n", "level", "csr", "ellpack-r", "pjds");
  for (std::size_t l = 0; l < setup.spmv_formats.size(); ++l) {
    std::string line;
    for (const FormatCost& c : setup.spmv_formats[l]) {
      char cell[64];
      std::snprintf(cell, sizeof cell, " %11s (%+6.1f%%) %5.2f", format_bytes(c.bytes).c_str(), 100 * c.overhead,
                    c.code_balance);
      line += cell;
    }
    progress("  %5zu%s\n", l, line.c_str());
  }
  progress("  solve in %s: %s\n", setup.spmv_format.c_str(), setup.spmv_format_reason.c_str());
}

// The library's Solver with the program's output: the level table as it is built, the comparison, the
// summary, and a line per iteration.
class PrintingSolver final : public AmgSolver {
 public:
  // A: the matrix, or this rank's RowBlock of it.
  template <class Input>
  PrintingSolver(const Config& config, Input A, bool compare_spgemm, SetupRecord& setup,
                 std::vector<SpgemmComparisonRow>& comparison)
      : config_(config) {
    const bool mixed = config.solver.precision == Precision::mixed;
    // Over ranks the setup runs on each rank's CPU cores whatever the backend (the cuda one solves there).
    const bool setup_on_cores = Ranks::size() > 1 && config.backend != BackendKind::cpu;
    progress("AMG setup (smoothed aggregation, MIS-2, SpGEMM %s, %s precision%s):\n", config.amg.spgemm.c_str(),
             mixed ? "float" : "double", setup_on_cores ? ", on each rank's CPU cores" : "");
    progress("  %5s %12s %14s %8s %9s  %s\n", "level", "rows", "nnz", "nnz/row", "seconds", "spgemm");
    SetupCallbacks callbacks;
    callbacks.on_level = [&](const LevelInfo& l) { print_level(l, config.amg.spgemm); };
    if (compare_spgemm) {
      const ComparisonTiming timing{1, config.compare_spgemm_runs};
      callbacks.on_product = comparing_into<double>(comparison, timing);
      callbacks.on_product_float = comparing_into<float>(comparison, timing);
    }
    solver_ = std::make_unique<Solver>(std::move(A), solver_parameters(config), callbacks);
    setup = solver_->setup();
    if (compare_spgemm) print_comparison(comparison, config.compare_spgemm_runs);
    double spgemm_seconds = 0;
    for (const LevelInfo& l : setup.levels) spgemm_seconds += l.spgemm_seconds;
    progress("  %zu level%s, operator complexity %.3f, grid complexity %.3f\n", setup.levels.size(),
             setup.levels.size() == 1 ? "" : "s",
             setup.operator_complexity, setup.grid_complexity);
    if (setup.block_size > 1 || setup.near_nullspace_vectors > 1)
      progress("  system: %d unknowns per node, %d near-nullspace vectors%s carried to every level\n", setup.block_size,
               setup.near_nullspace_vectors,
               setup.near_nullspace_sweeps > 0
                   ? (" (relaxed by " + std::to_string(setup.near_nullspace_sweeps) + " Jacobi sweeps)").c_str()
                   : "");
    if (setup.nullspace == "constant")
      progress("  singular: the rows sum to zero, so the constants are the nullspace; solved on the range, the "
               "solution of zero mean\n");
    if (setup.nullspace == "near_nullspace")
      progress("  singular: A maps %d combinations of the near-nullspace vectors to zero (a structure free to move); "
               "solved on the range, the solution orthogonal to them\n", setup.nullspace_vectors);
    // On the cpu backend the solve's sliced ELLPACK copies replace the hierarchy's CSR matrices they copy, so
    // the hierarchy's bytes alone would understate what the solve holds.
    const std::string solve_copies = setup.backend == BackendKind::cuda || setup.backend_bytes == 0
                                         ? std::string()
                                         : ", the solve's operators and vectors " + format_bytes(setup.backend_bytes);
    progress("  setup %.3f s (SpGEMM %.3f s%s), hierarchy %s%s\n", setup.seconds, spgemm_seconds,
             compare_spgemm ? "; setup time includes the backend comparison" : "",
             format_bytes(setup.hierarchy_bytes).c_str(), solve_copies.c_str());
    if (setup.backend == BackendKind::cuda)
      progress("  on the GPU%s: operators, vectors and coarse solve, %s\n",
               setup_on_cores ? " of each rank (rank 0's)" : "", format_bytes(setup.backend_bytes).c_str());
    print_format_costs(setup);
  }

  SolveResult solve(const Vector<double>& b, Vector<double>& x, bool show_iterations, bool from_x) override {
    return solve_showing(b, x, show_iterations, from_x, &Solver::solve);
  }
  SolveResult solve_rows(const Vector<double>& b, Vector<double>& x, bool show_iterations, bool from_x) override {
    return solve_showing(b, x, show_iterations, from_x, &Solver::solve_rows);
  }

  Array<Index> finest_aggregates() const override { return solver_->finest_aggregates(); }

  void rebuild(std::shared_ptr<const CsrMatrix<double>> A, SetupRecord& setup) override {
    solver_->rebuild(std::move(A));
    report_rebuild(setup);
  }
  void rebuild(RowBlock block, SetupRecord& setup) override {
    solver_->rebuild(std::move(block));
    report_rebuild(setup);
  }

 private:
  using SolveMethod = SolveResult (Solver::*)(const Vector<double>&, Vector<double>&, const IterationCallback&,
                                              const SolveOptions&) const;
  SolveResult solve_showing(const Vector<double>& b, Vector<double>& x, bool show_iterations, bool from_x,
                            SolveMethod method) {
    double previous = 1.0;
    const IterationCallback show = [&](int k, double relres) {
      if (show_iterations && config_.print_every > 0 && k % config_.print_every == 0)
        progress("  iteration %4d   relative residual %.3e   factor %.3f\n", k, relres, relres / previous);
      previous = relres;
    };
    SolveOptions options;
    options.initial_guess = from_x;
    return ((*solver_).*method)(b, x, show, options);
  }

  void report_rebuild(SetupRecord& setup) const {
    setup = solver_->setup();
    progress("  %s %.3f s (%s)\n", setup.reused ? "re-setup" : "setup", setup.seconds, setup.rebuild_note.c_str());
  }

  const Config& config_;
  std::unique_ptr<Solver> solver_;
};

}  // namespace

void describe_matrix(const CsrMatrix<double>& A, RunRecord& record) {
  record.rows = A.rows;
  record.nnz = A.nnz();
  record.row_length_histogram.clear();
  for (Index i = 0; i < A.rows; ++i) {
    const auto length = static_cast<std::size_t>(A.row_length(i));
    if (length >= record.row_length_histogram.size()) record.row_length_histogram.resize(length + 1, 0);
    ++record.row_length_histogram[length];
  }
}

void describe_distributed_matrix(const CsrMatrix<double>& rows, std::int64_t global_rows, RunRecord& record) {
  describe_matrix(rows, record);
  record.rows = static_cast<Index>(global_rows);
  record.nnz = Ranks::sum(record.nnz);
  // Every rank's histogram as long as the longest, then summed entry by entry.
  const auto length = static_cast<std::size_t>(Ranks::max(static_cast<std::int64_t>(record.row_length_histogram.size())));
  record.row_length_histogram.resize(length, 0);
  for (Offset& count : record.row_length_histogram) count = Ranks::sum(count);
}

bool solve_distributed(const Config& config) { return Ranks::size() > 1 && solver_parameters(config).distribute; }

Array<Index> aggregates_to_write(const AmgSolver& solver, const SetupRecord& setup) {
  Array<Index> mine = solver.finest_aggregates();
  return setup.ranks > 1 ? gather_on_first(mine) : mine;
}

// A Poisson or elasticity problem (their generators make any rows alone, at every one of problem.steps) or
// a Matrix Market file (read on rank 0 and dealt out as it is read), in a distributed solve.
bool rows_made_apart(const Config& config) {
  const ProblemType type = config.problem.type;
  return solve_distributed(config) &&
         (type == ProblemType::poisson || type == ProblemType::elasticity || type == ProblemType::matrix_market);
}

// The rows of a Matrix Market problem's matrix, from its file's header (before the matrix is read).
std::int64_t matrix_file_rows(const MatrixMarketParams& p) {
  if (p.matrix.empty()) throw InputError("problem.matrix: a matrix_market problem needs a matrix file");
  return read_matrix_market_header(p.matrix).rows;
}

// This rank's rows of a problem whose generator makes any rows alone: a Poisson problem's, the elasticity
// problem's whole nodes.
RowRange generated_rows(const ProblemSpec& spec) {
  const auto [first, last] = spec.type == ProblemType::elasticity
                                 ? owned_rows(elasticity_rows(spec.elasticity), spec.elasticity.dimensions())
                                 : owned_rows(poisson_rows(spec.poisson));
  return {first, last};
}

namespace {

// A Matrix Market problem by rows: rank 0 reads the file and deals out its entries (read_matrix_market_rows)
// and then the right-hand sides' and initial guesses' rows; every rank keeps its rows of each. Collective.
LinearProblem matrix_market_by_rows(const MatrixMarketParams& p, int block_size) {
  // The right-hand sides' shape against the matrix's from their headers (on rank 0, which reads the files),
  // and the room for them on every rank (rank 0 whole, the others their rows), before the matrix is read.
  std::int64_t rows = 0, columns = 0;
  collectively([&] {
    if (!Ranks::prints()) return;
    rows = matrix_file_rows(p);
    columns = matrix_market_rhs_columns(p, rows);
  });
  rows = Ranks::sum(rows);
  columns = Ranks::sum(columns);
  const auto [first, last] = owned_rows(rows, block_size);
  const std::int64_t held = Ranks::prints() ? rows : last - first;
  collectively([&] {
    require_memory(right_hand_side_bytes(p, held, columns, Ranks::prints()),
                   p.rhs.empty() ? std::string("the right-hand side and the solution")
                                 : "the right-hand sides in " + p.rhs + " and their solutions");
  });
  MatrixRows matrix = read_matrix_market_rows(p.matrix, block_size);
  drop_stored_zeros(matrix.rows, static_cast<Index>(matrix.first_row()));
  require_spd_candidate_rows(p.matrix, matrix);
  LinearProblem problem;
  problem.description = matrix_market_description(p, matrix.global_rows);
  // Read on rank 0 and the others' rows allocated here, where running out is every rank's one-line error,
  // then dealt out from rank 0.
  collectively([&] {
    if (Ranks::prints())
      read_right_hand_sides(p, rows, columns, problem);
    else
      allocate_right_hand_sides(p, held, columns, problem);
  });
  scatter_from_first(problem.b);
  scatter_from_first(problem.more_b);
  scatter_from_first(problem.x0);
  problem.global_rows = matrix.global_rows;
  problem.first_row = matrix.first_row();
  problem.A = std::make_shared<const CsrMatrix<double>>(std::move(matrix.rows));
  return problem;
}

// The right-hand side as the messages name it: its file, or b = 1.
std::string rhs_name(const Config& config, std::size_t column = 0, std::size_t columns = 1) {
  const bool rhs_file = config.problem.type == ProblemType::matrix_market && !config.problem.matrix_market.rhs.empty();
  if (!rhs_file) return "the right-hand side (b = 1)";
  const std::string name = "the right-hand side " + config.problem.matrix_market.rhs;
  return columns > 1 ? name + ", column " + std::to_string(column + 1) + "," : name;
}

// first, then each of rest: a load case's vectors in column order (b and more_b, x and the further solutions).
std::vector<const Vector<double>*> in_column_order(const Vector<double>& first, const std::vector<Vector<double>>& rest) {
  std::vector<const Vector<double>*> all = {&first};
  for (const Vector<double>& v : rest) all.push_back(&v);
  return all;
}

// check(b, name) for every right-hand side.
template <class Check>
void for_each_rhs(const Config& config, const LinearProblem& problem, Check&& check) {
  const std::vector<const Vector<double>*> all = in_column_order(problem.b, problem.more_b);
  for (std::size_t c = 0; c < all.size(); ++c) check(*all[c], rhs_name(config, c, all.size()));
}

double norm_of(const Vector<double>& b, bool by_rows = false) {
  return std::sqrt(sum_of(b, [&](std::int64_t i) { return b[i] * b[i]; }, by_rows));
}

// A singular system (amg/system_nullspace.hpp) needs a right-hand side without a part along its nullspace
// (loads in equilibrium): checked before the setup, as the constant's below. Vectors that do not fit the
// matrix are left to the reading of their file (app/near_nullspace_input.cpp), which names it.
void require_solvable_system(const Config& config, const LinearProblem& problem) {
  const AmgParams& given = config.amg;
  if (!near_nullspace_problem(problem.A->rows, given.block_size, given.near_nullspace).empty()) return;
  AmgParams amg = given;
  resolve_system_nullspace(*problem.A, amg);
  if (amg.nullspace != NullspaceChoice::near_nullspace) return;
  const NullspaceProjection nullspace(finest_near_nullspace(problem.A->rows, amg.block_size, amg.near_nullspace),
                                      *amg.nullspace_combinations);
  for_each_rhs(config, problem, [&](const Vector<double>& b, const std::string& name) {
    require_consistent_rhs(nullspace.part(b), nullspace.vectors(), held_tolerance(config.solver, norm_of(b)), name);
  });
}

// A singular scalar matrix's right-hand sides must each sum to zero: whole, or (by_rows) summed over the
// ranks' rows (collective), exactly either way.
void require_constant_free_rhs(const Config& config, const LinearProblem& problem, bool by_rows) {
  const std::int64_t n = problem.global_rows ? *problem.global_rows : problem.A->rows;
  for_each_rhs(config, problem, [&](const Vector<double>& b, const std::string& name) {
    const double sum = sum_of(b, [&](std::int64_t i) { return b[i]; }, by_rows), norm = norm_of(b, by_rows);
    require_consistent_rhs(sum, norm, static_cast<std::size_t>(n), held_tolerance(config.solver, norm), name);
  });
}

// A singular matrix (amg.nullspace) needs a connected graph and a right-hand side that sums to zero: checked
// here, before the setup (the Solver checks both again, for its library users).
void require_solvable(const Config& config, const LinearProblem& problem) {
  if (config.amg.is_system()) return require_solvable_system(config, problem);
  if (resolve_nullspace(*problem.A, config.amg.nullspace) != NullspaceChoice::constant) return;
  require_constant_free_rhs(config, problem, false);
}

// The same where the ranks hold the rows of A and of the right-hand sides: the rows' sums and b's sum and
// norm judged over the ranks, so that an inconsistent b is refused before the setup, not after it in the
// solve (the Solver counts the graph's parts over the ranks). Collective.
void require_solvable_by_rows(const Config& config, const LinearProblem& problem) {
  // (A system's nullspace the Solver decides, refusing a singular one over ranks.)
  if (config.amg.nullspace == NullspaceChoice::none || config.amg.is_system()) return;
  const bool zero_sums = largest_relative_row_sum(*problem.A).relative <= zero_row_sum_tolerance<double>();
  if (Ranks::sum(zero_sums ? 0 : 1) == 0) require_constant_free_rhs(config, problem, true);
}

}  // namespace

std::string absolute_tolerance_text(const SolverParams& solver) {
  if (solver.absolute_tolerance <= 0) return "";
  char text[64];
  std::snprintf(text, sizeof text, " or residual %.1e", solver.absolute_tolerance);
  return text;
}

void print_solve_summary(const SolveResult& s, const char* what) {
  progress("%s%s after %d iterations: relative residual %.3e, average factor %.3f, solve %.3f s\n", what,
           s.converged ? "converged" : "NOT CONVERGED", s.iterations, s.relative_residual, s.convergence_factor(),
           s.seconds);
}

namespace {
// The cheapest stronger cycle for the configured smoother (README, "When PCG converges slowly").
std::string stronger_cycle(const Config& config) {
  switch (config.amg.smoother.type) {
    case SmootherType::chebyshev: return "try amg.smoother.degree: 3 or 4";
    case SmootherType::gauss_seidel: return "try amg.smoother.pre_steps: 2 and post_steps: 2";
    case SmootherType::jacobi: break;
  }
  return "try amg.smoother.type: chebyshev";
}

// Why a solve that did not converge may not have, for its one-line message: "" when nothing points anywhere.
std::string why_not_converged(const SolveResult& s, const Config& config) {
  const SolverType type = config.solver.type;
  // A start far from the solution (problem.x0 or the step before's): its residual many times b's, which the
  // tolerance is relative to, leaves far to go; not a sign of a singular A.
  if (!s.history.empty() && s.history.front() > 1e3)
    return ": the initial guess's residual was " + format_number(s.history.front()) + " times the right-hand "
           "side's, and the tolerance is relative to b: start from zero, or from a guess on the solution's scale";
  // The stationary iteration's residual grows where the V-cycle, a poor stand-alone iteration (its smoothers'
  // parameters), amplifies some error: that says nothing about A.
  if (type == SolverType::amg && s.relative_residual > 1 && s.iterations >= 10)
    return ": the residual ends above the right-hand side's, so the V-cycle diverges as a stand-alone "
           "iteration (use solver.type: pcg, or check the amg.smoother keys)";
  // x = 0 has relative residual 1: ending above it after many iterations (CG's residual may rise in its
  // first few), CG has been driven by a component of b that A cannot produce (a singular A whose nullspace
  // is not the constants, which amg.nullspace: auto does not detect) or, where it still moves, A is so
  // ill-conditioned that CG's residual has not come down while its A-norm error does (a shell's stiffness
  // matrix, whose rigid-body modes the constants do not stand for).
  if (s.relative_residual > 1 && s.stagnated)
    return ": the residual stagnates above the right-hand side's, so A is probably singular (or nearly) with "
           "b outside its range";
  if (s.relative_residual > 1 && s.iterations >= 10)
    return ": the residual ends above the right-hand side's: A is singular or nearly so with b outside its "
           "range, or so ill-conditioned that CG, whose A-norm error falls while its residual need not, has far "
           "to go; for the latter " + stronger_cycle(config) + ", or (up to " +
           std::to_string(kMaxDirectRows) + " rows) solve directly with amg.coarse_size at least the row count";
  // Asked after the above: a residual that stagnates above b's is not a tolerance set too small.
  if (s.stagnated) return ": the true residual stagnates, the tolerance is below the attainable accuracy";
  // Slow but steady: what helps, cheapest first (README, "When PCG converges slowly").
  if (s.iterations > 0) {
    return "; for slow convergence raise solver.max_iterations, " + stronger_cycle(config) + ", or (up to " +
           std::to_string(kMaxDirectRows) + " rows) solve directly with amg.coarse_size at least the row count";
  }
  return "";
}
}  // namespace

int exit_status(const Config& config, const std::vector<SolveResult>& solves, bool load_cases) {
  int failed = 0;
  std::size_t first = solves.size();
  for (std::size_t k = 0; k < solves.size(); ++k)
    if (!solves[k].converged) {
      ++failed;
      if (first == solves.size()) first = k;
    }
  if (first == solves.size()) return kExitOk;
  const std::string unit = load_cases ? "load case" : "solve";
  std::string what = failed > 1 ? std::to_string(failed) + " " + unit + "s not converged, the first" : unit + " not converged";
  if (load_cases) what += " (column " + std::to_string(first + 1) + ")";
  const SolveResult& s = solves[first];
  if (Ranks::prints())
    std::fprintf(stderr, "amgsolve: %s: %s after %d iterations (relative residual %.3e > %.1e)%s\n",
               config.source.c_str(), what.c_str(), s.iterations, s.relative_residual, s.tolerance,
               why_not_converged(s, config).c_str());
  return kExitNotConverged;
}

std::unique_ptr<AmgSolver> AmgSolver::create(const Config& config, std::shared_ptr<const CsrMatrix<double>> A,
                                             bool compare_spgemm, SetupRecord& setup,
                                             std::vector<SpgemmComparisonRow>& comparison) {
  return std::make_unique<PrintingSolver>(config, std::move(A), compare_spgemm, setup, comparison);
}

std::unique_ptr<AmgSolver> AmgSolver::create(const Config& config, RowBlock block, bool compare_spgemm,
                                             SetupRecord& setup, std::vector<SpgemmComparisonRow>& comparison) {
  return std::make_unique<PrintingSolver>(config, std::move(block), compare_spgemm, setup, comparison);
}

void write_comparison_if_asked(const OutputParams& out, const RunRecord& record, std::vector<std::string>& written) {
  // Asked for, the comparison is written even without rows (a one-level hierarchy forms no product), so
  // that its file says so rather than being missing.
  if (out.spgemm_csv.empty() || !(record.spgemm_compared || !record.spgemm_comparison.empty())) return;
  write_spgemm_comparison_csv(out.spgemm_csv, record.spgemm_comparison);
  written.push_back("SpGEMM comparison written to " + out.spgemm_csv);
}

void record_rank_loads(const CommunicationStats& setups, const CommunicationStats& solves, const char* what,
                       RunRecord& record) {
  record.rank_loads = gather_rank_loads({record.setup.local_rows, solves, setups});
  if (record.rank_loads.empty()) return;
  Index least = record.rows, most = 0;
  std::uint64_t bytes = 0, messages = 0, setup_bytes = 0;
  double halo_wait = 0, reduction_wait = 0;
  for (const RankLoad& r : record.rank_loads) {
    least = std::min(least, r.rows), most = std::max(most, r.rows);
    setup_bytes += r.setup_communication.halo_bytes + r.setup_communication.gathered_bytes;
    bytes += r.communication.halo_bytes, messages += r.communication.halo_messages;
    halo_wait = std::max(halo_wait, r.communication.halo_wait_seconds);
    reduction_wait = std::max(reduction_wait, r.communication.reduction_seconds);
  }
  progress("ranks: %d, rows per rank %d to %d; the setup sent %s; %s halo exchanges (%s) sent %s in %llu "
           "messages, %llu global sums; waiting at most %.3f s for halos, %.3f s for sums\n",
           record.ranks, least, most, format_bytes(setup_bytes).c_str(), what, to_string(record.setup.halo_exchange),
           format_bytes(bytes).c_str(), static_cast<unsigned long long>(messages),
           static_cast<unsigned long long>(solves.reductions), halo_wait, reduction_wait);
}

void print_backends() {
  std::printf("%-12s %-7s %-10s %s\n", "spgemm", "backend", "available", "description");
  for (const SpgemmBackend* b : SpgemmRegistry::instance().all()) {
    const std::string reason = b->unavailable_reason();
    std::printf("%-12s %-7s %-10s %s%s\n", b->name().c_str(), to_string(b->runs_on()), reason.empty() ? "yes" : "no",
                b->description().c_str(), reason.empty() ? "" : (" [" + reason + "]").c_str());
  }
  const GpuStatus gpu = gpu_status();
  std::printf("GPU: %s\n", gpu.usable() ? gpu.name.c_str() : gpu.unavailable_reason.c_str());
}

namespace {

// The line that says how the work is spread: threads, and ranks under mpirun.
std::string parallelism(int threads) {
  const int ranks = Ranks::size();
  const std::string team = std::to_string(threads) + (threads == 1 ? " thread" : " threads");
  return ranks > 1 ? std::to_string(ranks) + " ranks x " + team : team;
}

// The configuration with the command line's overrides, validated as it is read: keys, values, the backend
// (resolved here, once) and its SpGEMM backend. Every rank reads it; rank 0 writes the outputs, so it checks
// them.
Config load_run_config(const RunOptions& options) {
  std::vector<std::string> overrides = options.overrides;
  if (options.compare_spgemm) {
    for (const std::string& o : overrides)  // amg.compare_spgemm=..., or amg={compare_spgemm: ...}
      if (o.find("compare_spgemm") != std::string::npos)
        throw InputError("--compare-spgemm and --set " + printable(o) + " both given: give one of them");
    overrides.push_back("amg.compare_spgemm=true");
  }
  Config config;
  collectively([&] {  // each rank's environment its own: OMP_NUM_THREADS may differ between them
    if (options.threads == 0) require_supported_thread_count("give the thread count: --threads N");
    // The input files are read on rank 0 alone (a node-local copy suffices), so opened there.
    config = load_config(options.config, overrides, Ranks::size(), /*check_inputs=*/Ranks::prints());
    if (options.report) config.output.report = *options.report;
    if (options.vtk) config.output.vtk = *options.vtk;
    if (Ranks::prints()) check_outputs(config, options.vtk ? "--vtk" : "output.vtk");
  });
  if (Ranks::size() > 1) {  // each half of the hash compared: the ranks' reductions take signed 64 bits
    const auto high = static_cast<std::int64_t>(config.fingerprint >> 32), low = static_cast<std::int64_t>(config.fingerprint & 0xffffffffu);
    const bool alike = Ranks::max(high) == -Ranks::max(-high) && Ranks::max(low) == -Ranks::max(-low);
    collectively([&] {
      if (!alike)
        throw InputError("the ranks were started with different settings (another config file, or other --set "
                         "options, on some rank): start every rank with the same ones");
    });
  }
  return config;
}

// The report's header (config, threads, ranks, backend, solver), and the run's first line.
RunRecord start_record(const Config& config) {
  RunRecord record;
  record.program = version_text().substr(0, version_text().find('\n'));
  record.config_file = config.source;
  record.overrides = config.overrides;
  record.threads = max_threads();
  record.ranks = Ranks::size();
  record.backend = to_string(config.backend);
  progress("amgsolve %s  (backend %s%s, %s)\n", config.source.c_str(), record.backend.c_str(),
           config.backend == BackendKind::cuda ? (": " + gpu_status().name).c_str() : "",
           parallelism(record.threads).c_str());
  record.solver_type = name_of(config.solver.type);
  record.precision = name_of(config.solver.precision);
  record.tolerance = config.solver.tolerance;
  record.absolute_tolerance = config.solver.absolute_tolerance;
  const bool x0_file = config.problem.type == ProblemType::matrix_market && !config.problem.matrix_market.x0.empty();
  record.initial_guess = x0_file ? "file" : name_of(config.initial_guess);
  record.spgemm_compared = config.compare_spgemm;
  return record;
}

// One step's problem: the whole matrix on every rank, or (by_rows) each rank's rows of it.
LinearProblem assemble_step(const Config& config, const ProblemSpec& spec, bool by_rows) {
  if (by_rows && spec.type == ProblemType::matrix_market) {
    LinearProblem problem = matrix_market_by_rows(spec.matrix_market, config.amg.block_size);  // read on rank 0, dealt out
    require_solvable_by_rows(config, problem);
    return problem;
  }
  std::optional<LinearProblem> assembled;
  collectively([&] {
    if (by_rows) {
      const RowRange rows = generated_rows(spec);
      assembled = make_problem(spec, &rows);  // the Solver decides the nullspace over the ranks
    } else {
      assembled = make_problem(spec);
      require_solvable(config, *assembled);
    }
  });
  if (by_rows) require_solvable_by_rows(config, *assembled);
  return std::move(*assembled);
}

// The first step's problem in the report (whose description the last step's replaces) and on the console.
void describe_problem(const Config& config, const LinearProblem& problem, bool by_rows, double seconds,
                      RunRecord& record) {
  record.problem_seconds = seconds;
  record.problem_description = problem.description;
  record.problem_type = name_of(config.problem.type);
  record.assembled_by_rows = by_rows;
  if (by_rows)
    describe_distributed_matrix(*problem.A, *problem.global_rows, record);
  else
    describe_matrix(*problem.A, record);
  progress("problem: %s\n         %d rows, %lld nonzeros, assembled in %.3f s%s\n", problem.description.c_str(),
           record.rows, static_cast<long long>(record.nnz), record.problem_seconds,
           by_rows ? " (each rank its rows)" : "");
  if (!problem.more_b.empty())
    progress("         %zu right-hand sides (load cases, the columns of %s), solved one after another\n",
             problem.more_b.size() + 1, config.problem.matrix_market.rhs.c_str());
}

// This rank's rows as the solver takes them; the block becomes the rank's only copy of its rows.
RowBlock take_rows(LinearProblem& problem) {
  RowBlock block{*problem.global_rows, *problem.A};
  problem.A.reset();
  return block;
}

// The first step sets up the solver, each later one re-sets it up for its values (the aggregates kept).
void set_up_or_rebuild(const Config& config, LinearProblem& problem, bool by_rows, std::unique_ptr<AmgSolver>& solver,
                       RunRecord& record) {
  const bool compare_spgemm = config.compare_spgemm;
  if (!solver && by_rows)
    solver = AmgSolver::create(config, take_rows(problem), compare_spgemm, record.setup, record.spgemm_comparison);
  else if (!solver)
    solver = AmgSolver::create(config, problem.A, compare_spgemm, record.setup, record.spgemm_comparison);
  else if (by_rows)
    solver->rebuild(take_rows(problem), record.setup);
  else
    solver->rebuild(problem.A, record.setup);
}

// What rank 0 writes where the ranks hold their rows of the vectors: the solutions (for the VTK file or
// output.solution) and b and the exact solution (the VTK file's), gathered there whole, with the grid.
// Collective.
struct GatheredOutputs {
  LinearProblem problem;
  std::vector<Vector<double>> solutions;

  GatheredOutputs(const Config& config, const LinearProblem& mine, const std::vector<const Vector<double>*>& rows) {
    const bool vtk = !config.output.vtk.empty();
    if (vtk || !config.output.solution.empty())
      for (const Vector<double>* x : rows) solutions.push_back(gather_on_first(*x));
    if (vtk) {
      problem.b = gather_on_first(mine.b);
      if (mine.exact) problem.exact = gather_on_first(*mine.exact);
    }
    problem.grid = mine.grid;
    problem.unknowns_per_point = mine.unknowns_per_point;
  }
  std::vector<const Vector<double>*> written() const {
    std::vector<const Vector<double>*> all;
    for (const Vector<double>& x : solutions) all.push_back(&x);
    return all;
  }
};

// After the last step: the error against an exact solution, the summary lines, the outputs, the exit status.
// by_rows: the problem's vectors and the solutions are each rank's rows.
int finish_run(const Config& config, const LinearProblem& problem, const AmgSolver& solver,
               const std::vector<const Vector<double>*>& solutions, bool by_rows, RunRecord& record) {
  const Vector<double>& x = *solutions.front();
  if (problem.exact) record.relative_error = relative_error(x, *problem.exact, by_rows);
  // What rank 0 writes, gathered before the peak memory is taken (rank 0's includes it).
  std::optional<GatheredOutputs> whole;
  if (by_rows) whole.emplace(config, problem, solutions);
  const Array<Index> aggregates = config.output.vtk.empty() ? Array<Index>{} : aggregates_to_write(solver, record.setup);
  record.peak_memory_bytes = peak_resident_bytes();

  const SolveResult& s = record.solve;
  if (record.load_cases.empty()) print_solve_summary(s);
  // A run of load cases: every column's solve, as the mouse run counts its solves.
  CommunicationStats solving = s.communication;
  if (!record.load_cases.empty()) {
    solving = {};
    for (const SolveResult& c : record.load_cases) solving = solving + c.communication;
  }
  record_rank_loads(record.setup.communication, solving, record.load_cases.empty() ? "the solve's" : "the solves'",
                    record);
  if (record.relative_error) progress("relative error against the exact solution: %.3e\n", *record.relative_error);
  if (!record.load_cases.empty()) {
    double solves = 0;
    for (const SolveResult& c : record.load_cases) solves += c.seconds;
    progress("total setup %.3f s + %zu solves %.3f s = %.3f s, peak memory %s\n", record.setup.seconds,
             record.load_cases.size(), solves, record.setup.seconds + solves,
             format_bytes(record.peak_memory_bytes).c_str());
  } else if (record.steps.empty()) {
    progress("total setup + solve %.3f s, peak memory %s\n", record.setup.seconds + s.seconds,
             format_bytes(record.peak_memory_bytes).c_str());
  } else {  // every step's, not the last one's (which the report's setup and solve hold)
    double setups = 0, solves = 0;
    for (const StepRecord& step : record.steps) {
      setups += step.setup_seconds;
      solves += step.solve.seconds;
    }
    progress("total over %zu steps: setups %.3f s + solves %.3f s = %.3f s, peak memory %s\n", record.steps.size(),
             setups, solves, setups + solves, format_bytes(record.peak_memory_bytes).c_str());
  }

  // Rank 0 writes; a write that fails there (a full disk) ends every rank with its error, not rank 0 alone.
  collectively([&] {
    if (!Ranks::prints()) return;
    if (whole)
      write_outputs(config, record, whole->problem, aggregates, whole->solutions.empty() ? solutions : whole->written());
    else
      write_outputs(config, record, problem, aggregates, solutions);
  });
  std::vector<SolveResult> solves = record.load_cases;
  for (const StepRecord& step : record.steps) solves.push_back(step.solve);
  if (solves.empty()) solves.push_back(s);
  return exit_status(config, solves, !record.load_cases.empty());
}

// A x = b with the iterations shown, from x where from_x; b and x each rank's rows where by_rows.
SolveResult solve_one(AmgSolver& solver, bool by_rows, const Vector<double>& b, Vector<double>& x, bool from_x) {
  return by_rows ? solver.solve_rows(b, x, true, from_x) : solver.solve(b, x, true, from_x);
}

// problem.rhs's further columns (load cases), each solved with the hierarchy of the first, whose solve is
// record.solve; their solutions, in order (each from its problem.x0 column, moved into it, where given).
std::vector<Vector<double>> solve_further_columns(LinearProblem& problem, AmgSolver& solver, bool by_rows,
                                                  RunRecord& record) {
  std::vector<Vector<double>> solutions;
  if (problem.more_b.empty()) return solutions;
  const std::size_t columns = problem.more_b.size() + 1;
  const auto summary = [&](std::size_t column) {
    print_solve_summary(record.load_cases.back(),
                        ("load case " + std::to_string(column) + " of " + std::to_string(columns) + ": ").c_str());
  };
  record.load_cases.push_back(record.solve);
  summary(1);
  for (std::size_t c = 1; c < columns; ++c) {  // column c: more_b[c - 1], x0[c] (x0[0] was b's)
    const bool from_x0 = !problem.x0.empty();
    solutions.push_back(from_x0 ? std::move(problem.x0[c]) : Vector<double>{});
    record.load_cases.push_back(solve_one(solver, by_rows, problem.more_b[c - 1], solutions.back(), from_x0));
    summary(c + 1);
  }
  return solutions;
}

}  // namespace

int run(const RunOptions& options) {
  set_quiet(options.quiet || !Ranks::prints());
  if (options.threads > 0) omp_set_num_threads(options.threads);
  Config config = load_run_config(options);
  attach_near_nullspace(config);
  RunRecord record = start_record(config);
  if (config.problem.type == ProblemType::mouse) return run_mouse(config, record);

  // problem.steps: the same pattern at every step, the hierarchy re-set-up with its aggregates kept (the
  // config reader implies amg.keep_structure unless it is given).
  const std::int64_t steps = config.problem.type == ProblemType::poisson ? config.problem.poisson.steps : 1;
  const bool by_rows = rows_made_apart(config);
  std::unique_ptr<AmgSolver> solver;
  LinearProblem problem;
  Vector<double> x;
  for (std::int64_t step = 1; step <= steps; ++step) {
    ProblemSpec spec = config.problem;
    if (steps > 1) {
      spec.poisson.contrast = std::pow(config.problem.poisson.contrast, static_cast<double>(step) / steps);
      progress("step %lld of %lld: checkerboard contrast %.4g\n", static_cast<long long>(step),
               static_cast<long long>(steps), spec.poisson.contrast);
    }
    Timer timer;
    problem = assemble_step(config, spec, by_rows);
    if (step == 1) describe_problem(config, problem, by_rows, timer.seconds(), record);
    if (step == steps) record.problem_description = problem.description;  // the report's results are its own
    try {
      set_up_or_rebuild(config, problem, by_rows, solver, record);
    } catch (const NumericalError& e) {  // what the setup found wrong with a matrix is its file's
      if (config.problem.type != ProblemType::matrix_market) throw;
      throw NumericalError("problem.matrix " + config.problem.matrix_market.matrix + ": " + e.what());
    } catch (const MatrixEntryError& e) {
      if (config.problem.type != ProblemType::matrix_market) throw;
      throw InputError("problem.matrix " + config.problem.matrix_market.matrix + ": " + e.what());
    }
    const bool from_previous = step > 1 && config.initial_guess == InitialGuess::previous_step;
    const bool from_x0 = !problem.x0.empty();  // problem.x0 (a matrix_market problem: one step)
    if (from_x0) x = std::move(problem.x0.front());  // the start becomes the solution: no second copy
    progress("%s solve to relative residual %.1e%s%s:\n",
             config.solver.type == SolverType::pcg ? "PCG (V-cycle preconditioner)" : "AMG V-cycle",
             config.solver.tolerance, absolute_tolerance_text(config.solver).c_str(),
             from_previous ? ", from the step before's solution"
             : from_x0     ? (", from " + config.problem.matrix_market.x0).c_str()
                           : "");
    record.solve = solve_one(*solver, by_rows, problem.b, x, from_previous || from_x0);
    if (steps > 1) {
      record.steps.push_back({static_cast<int>(step), spec.poisson.contrast, record.setup.seconds, record.setup.reused,
                              step == 1 ? "the first setup" : record.setup.rebuild_note, record.solve});
      if (step < steps) print_solve_summary(record.solve);
    }
  }
  const std::vector<Vector<double>> further_solutions = solve_further_columns(problem, *solver, by_rows, record);
  return finish_run(config, problem, *solver, in_column_order(x, further_solutions), by_rows, record);
}

}  // namespace amgsolve
