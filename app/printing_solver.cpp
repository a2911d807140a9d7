// The program's AmgSolver: the library's Solver with the output a person watches (the level table as it is
// built, the SpGEMM comparison, the setup's summary and the storage of each level, a line per iteration).
#include "app/amg_solver.hpp"

#include <cstdio>

#include "amgsolve/solver.hpp"
#include "app/ranks.hpp"
#include "common/error.hpp"
#include "common/log.hpp"
#include "common/memory.hpp"
#include "config/solver_parameters.hpp"
#include "spgemm/comparison.hpp"

namespace amgsolve {
namespace {

// One row of the level table, as the level is built.
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

// Each level's storage in the SpMV formats, and the one the solve uses with why.
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

// The AmgSolver of the file's first lines: the library's Solver, with callbacks that print.
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

std::unique_ptr<AmgSolver> AmgSolver::create(const Config& config, std::shared_ptr<const CsrMatrix<double>> A,
                                             bool compare_spgemm, SetupRecord& setup,
                                             std::vector<SpgemmComparisonRow>& comparison) {
  return std::make_unique<PrintingSolver>(config, std::move(A), compare_spgemm, setup, comparison);
}

std::unique_ptr<AmgSolver> AmgSolver::create(const Config& config, RowBlock block, bool compare_spgemm,
                                             SetupRecord& setup, std::vector<SpgemmComparisonRow>& comparison) {
  return std::make_unique<PrintingSolver>(config, std::move(block), compare_spgemm, setup, comparison);
}

}  // namespace amgsolve
