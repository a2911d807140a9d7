#include "app/run.hpp"

#include <omp.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <type_traits>

#include "amg/hierarchy.hpp"
#include "common/atomic_file.hpp"
#include "common/device.hpp"
#include "common/error.hpp"
#include "common/log.hpp"
#include "common/memory.hpp"
#include "common/parallel.hpp"
#include "common/timer.hpp"
#include "config/config.hpp"
#include "output/report.hpp"
#include "output/vtk_writer.hpp"
#include "solver/pcg.hpp"
#include "sparse/csr_ops.hpp"
#include "sparse/matrix_market.hpp"
#include "spgemm/registry.hpp"

namespace amgsolve {
namespace {

// Fails fast, before any long computation, on output paths that cannot be written.
void check_outputs(const Config& config) {
  const OutputParams& out = config.output;
  if (!out.report.empty()) require_writable(out.report, "report file");
  if (!out.solution.empty()) require_writable(out.solution, "solution file");
  if (!out.spgemm_csv.empty()) require_writable(out.spgemm_csv, "SpGEMM comparison file");
  if (!out.vtk.empty()) {
    if (config.problem.type != ProblemType::poisson)
      throw InputError("output.vtk: VTK output needs a grid, and a matrix_market problem has none "
                       "(use output.solution to save the solution vector)");
    if (std::filesystem::path(out.vtk).extension() != ".vti")
      throw InputError("output.vtk: grid problems are written as VTK image data; use a .vti file name, not " +
                       out.vtk);
    require_writable(out.vtk, "VTK file");
  }
}

void print_level(const LevelInfo& l, const std::string& backend) {
  const double per_row = l.rows > 0 ? static_cast<double>(l.nnz) / l.rows : 0.0;
  // A delegating backend (auto) says what it chose for the Galerkin product P^T (A P).
  const std::string shown = l.rap_product.choice.empty() ? backend : backend + " -> " + l.rap_product.choice;
  progress("  %5d %12d %14lld %8.2f %9.3f  %s\n", l.level, l.rows, static_cast<long long>(l.nnz), per_row, l.seconds,
           l.coarsest ? "(coarsest: direct LDL^T)" : shown.c_str());
}

// The --compare-spgemm table: level x product x backend.
void print_comparison(const std::vector<SpgemmComparisonRow>& rows) {
  progress("SpGEMM comparison (every backend on every setup product; agrees = same pattern and values):\n");
  progress("  %5s %-12s %-10s %9s %9s %12s %7s %10s  %s\n", "level", "product", "backend", "seconds", "GFLOP/s",
           "nnz", "compr.", "extra MiB", "agrees");
  for (const SpgemmComparisonRow& r : rows)
    progress("  %5d %-12s %-10s %9.4f %9.3f %12lld %7.2f %10.1f  %s\n", r.level, r.product.c_str(), r.backend.c_str(),
             r.stats.seconds(), r.stats.gflops(), static_cast<long long>(r.stats.nnz), r.stats.compression_factor(),
             static_cast<double>(r.stats.extra_bytes) / (1 << 20), r.agrees ? "yes" : ("NO " + r.error).c_str());
}

double relative_error(const Vector<double>& x, const Vector<double>& exact) {
  const auto n = static_cast<std::int64_t>(x.size());
  const double diff = deterministic_sum<double>(n, [&](std::int64_t i) { return (x[i] - exact[i]) * (x[i] - exact[i]); });
  const double ref = deterministic_sum<double>(n, [&](std::int64_t i) { return exact[i] * exact[i]; });
  return ref > 0 ? std::sqrt(diff / ref) : std::sqrt(diff);
}

void write_outputs(const Config& config, const RunRecord& record, const LinearProblem& problem,
                   const Array<Index>& aggregates, const Vector<double>& x) {
  const OutputParams& out = config.output;
  if (!out.solution.empty()) {
    write_matrix_market_vector(out.solution, x);
    progress("solution written to %s\n", out.solution.c_str());
  }
  if (!out.vtk.empty()) {
    std::vector<ScalarField> scalars = {{"solution", x}, {"rhs", problem.b}};
    if (problem.exact) {
      scalars.push_back({"exact", *problem.exact});
      Vector<double> error(x.size());
      for (std::size_t i = 0; i < x.size(); ++i) error[i] = x[i] - (*problem.exact)[i];
      scalars.push_back({"error", std::move(error)});
    }
    std::vector<IntegerField> integers;
    if (!aggregates.empty()) integers.push_back({"aggregate", aggregates});
    write_vti(out.vtk, *problem.grid, scalars, integers);
    progress("VTK image data written to %s\n", out.vtk.c_str());
  }
  if (!out.spgemm_csv.empty() && !record.spgemm_comparison.empty()) {
    write_spgemm_comparison_csv(out.spgemm_csv, record.spgemm_comparison);
    progress("SpGEMM comparison written to %s\n", out.spgemm_csv.c_str());
  }
  if (!out.report.empty()) {
    write_report(out.report, record);
    progress("report written to %s\n", out.report.c_str());
  }
}

// Builds the hierarchy in CycleValue precision (double, or float for solver.precision = mixed), prints
// the level table, and runs the configured outer iteration in double. Returns the finest aggregates.
template <class CycleValue>
Array<Index> setup_and_solve(const Config& config, bool compare_spgemm, const LinearProblem& problem,
                             RunRecord& record, Vector<double>& x) {
  progress("AMG setup (smoothed aggregation, MIS-2, SpGEMM %s, %s precision):\n", config.amg.spgemm.c_str(),
           std::is_same_v<CycleValue, float> ? "float" : "double");
  progress("  %5s %12s %14s %8s %9s  %s\n", "level", "rows", "nnz", "nnz/row", "seconds", "spgemm");
  Timer timer;
  std::shared_ptr<const CsrMatrix<CycleValue>> A;
  if constexpr (std::is_same_v<CycleValue, double>)
    A = problem.A;
  else
    A = std::make_shared<const CsrMatrix<CycleValue>>(cast_values<CycleValue>(*problem.A));
  typename AmgHierarchy<CycleValue>::ProductCallback compare;
  if (compare_spgemm)
    compare = [&record](int level, const std::string& product, const CsrMatrix<CycleValue>& a,
                        const CsrMatrix<CycleValue>& b, const CsrMatrix<CycleValue>& c) {
      for (SpgemmComparisonRow& row : compare_spgemm_backends(level, product, a, b, c))
        record.spgemm_comparison.push_back(std::move(row));
    };
  const AmgHierarchy<CycleValue> amg(
      A, config.amg, [&](const LevelInfo& l) { print_level(l, config.amg.spgemm); }, compare);
  record.levels = amg.info();
  record.setup_seconds = timer.seconds();
  record.operator_complexity = amg.operator_complexity();
  record.grid_complexity = amg.grid_complexity();
  record.spgemm_backend = amg.spgemm_backend();
  record.hierarchy_bytes = amg.bytes();
  double spgemm_seconds = 0;
  for (const LevelInfo& l : amg.info()) spgemm_seconds += l.spgemm_seconds;
  progress("  %zu levels, operator complexity %.3f, grid complexity %.3f\n", amg.levels(), record.operator_complexity,
           record.grid_complexity);
  progress("  setup %.3f s (SpGEMM %.3f s%s), hierarchy %s\n", record.setup_seconds, spgemm_seconds,
           compare_spgemm ? "; setup time includes the backend comparison" : "",
           format_bytes(record.hierarchy_bytes).c_str());
  if (compare_spgemm) print_comparison(record.spgemm_comparison);

  const bool use_pcg = config.solver.type == SolverType::pcg;
  record.solver_type = use_pcg ? "pcg" : "amg";
  record.precision = std::is_same_v<CycleValue, float> ? "mixed" : "double";
  record.tolerance = config.solver.tolerance;
  progress("%s solve to relative residual %.1e:\n", use_pcg ? "PCG (V-cycle preconditioner)" : "AMG V-cycle",
           config.solver.tolerance);
  Vector<CycleValue> r_cycle, z_cycle;  // the V-cycle's vectors when it runs in float
  const Preconditioner<double> vcycle = [&](const Vector<double>& r, Vector<double>& z) {
    if constexpr (std::is_same_v<CycleValue, double>) {
      amg.apply(r, z);
    } else {
      r_cycle.assign(r.begin(), r.end());
      amg.apply(r_cycle, z_cycle);
      z.assign(z_cycle.begin(), z_cycle.end());
    }
  };
  double previous = 1.0;
  const IterationCallback show = [&](int k, double relres) {
    if (config.print_every > 0 && k % config.print_every == 0)
      progress("  iteration %4d   relative residual %.3e   factor %.3f\n", k, relres, relres / previous);
    previous = relres;
  };
  record.solve = use_pcg ? pcg(*problem.A, problem.b, x, vcycle, config.solver, show)
                         : stationary_iteration(*problem.A, problem.b, x, vcycle, config.solver, show);
  return amg.finest_aggregates();
}

}  // namespace

void print_backends() {
  std::printf("%-12s %-6s %-10s %s\n", "backend", "device", "available", "description");
  for (const SpgemmBackend* b : SpgemmRegistry::instance().all()) {
    const std::string reason = b->unavailable_reason();
    std::printf("%-12s %-6s %-10s %s%s\n", b->name().c_str(), to_string(b->device()), reason.empty() ? "yes" : "no",
                b->description().c_str(), reason.empty() ? "" : (" [" + reason + "]").c_str());
  }
  const GpuStatus gpu = gpu_status();
  std::printf("GPU: %s\n", gpu.usable() ? gpu.name.c_str() : gpu.unavailable_reason.c_str());
}

int run(const RunOptions& options) {
  set_quiet(options.quiet);
  if (options.threads > 0) omp_set_num_threads(options.threads);

  Config config = load_config(options.config, options.overrides);
  if (!options.report.empty()) config.output.report = options.report;
  if (!options.vtk.empty()) config.output.vtk = options.vtk;
  check_outputs(config);
  // amg.spgemm: compare means --compare-spgemm with the reference backend building the hierarchy.
  const bool compare_spgemm = options.compare_spgemm || config.amg.spgemm == "compare";
  if (config.amg.spgemm == "compare") config.amg.spgemm = "gustavson";
  if (!config.output.spgemm_csv.empty() && !compare_spgemm)
    throw InputError("output.spgemm_csv needs --compare-spgemm (or amg.spgemm: compare)");
  SpgemmRegistry::instance().get(config.amg.spgemm);  // unknown or unavailable backend: fail now

  RunRecord record;
  record.config_file = config.source;
  record.threads = max_threads();
  progress("amgsolve %s  (%d threads)\n", config.source.c_str(), record.threads);

  Timer timer;
  const LinearProblem problem = make_problem(config.problem);
  record.problem_seconds = timer.seconds();
  record.problem_description = problem.description;
  record.problem_type = config.problem.type == ProblemType::poisson ? "poisson" : "matrix_market";
  record.rows = problem.A->rows;
  record.nnz = problem.A->nnz();
  progress("problem: %s\n         %d rows, %lld nonzeros, assembled in %.3f s\n", problem.description.c_str(),
           record.rows, static_cast<long long>(record.nnz), record.problem_seconds);

  Vector<double> x;
  const Array<Index> aggregates = config.solver.precision == Precision::mixed
                                      ? setup_and_solve<float>(config, compare_spgemm, problem, record, x)
                                      : setup_and_solve<double>(config, compare_spgemm, problem, record, x);
  if (problem.exact) record.relative_error = relative_error(x, *problem.exact);
  record.peak_memory_bytes = peak_resident_bytes();

  const SolveResult& s = record.solve;
  progress("%s after %d iterations: relative residual %.3e, average factor %.3f, solve %.3f s\n",
           s.converged ? "converged" : "NOT CONVERGED", s.iterations, s.relative_residual, s.convergence_factor(),
           s.seconds);
  if (record.relative_error) progress("relative error against the exact solution: %.3e\n", *record.relative_error);
  progress("total setup + solve %.3f s, peak memory %s\n", record.setup_seconds + s.seconds,
           format_bytes(record.peak_memory_bytes).c_str());

  write_outputs(config, record, problem, aggregates, x);
  if (!s.converged) {
    std::fprintf(stderr, "amgsolve: %s: not converged after %d iterations (relative residual %.3e > %.1e)%s\n",
                 config.source.c_str(), s.iterations, s.relative_residual, config.solver.tolerance,
                 s.stagnated ? ": the true residual stagnates, the tolerance is below the attainable accuracy" : "");
    return kExitNotConverged;
  }
  return kExitOk;
}

}  // namespace amgsolve
