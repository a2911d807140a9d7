#include "app/run.hpp"

#include <omp.h>

#include <cmath>
#include <cstdio>
#include <optional>
#include <thread>

#include "app/amg_solver.hpp"
#include "app/mouse_run.hpp"
#include "app/near_nullspace_input.hpp"
#include "app/outputs.hpp"
#include "app/problem_input.hpp"
#include "app/ranks.hpp"
#include "app/run_summary.hpp"
#include "app/version.hpp"
#include "common/device.hpp"
#include "common/environment.hpp"
#include "common/error.hpp"
#include "common/log.hpp"
#include "common/memory.hpp"
#include "common/parallel.hpp"
#include "common/timer.hpp"
#include "config/config.hpp"
#include "solver/iteration.hpp"
#include "spgemm/registry.hpp"

namespace amgsolve {
namespace {

// ||x - exact|| / ||exact||, of whole vectors or (by_rows) of the ranks' rows of them (collective).
double relative_error(const Vector<double>& x, const Vector<double>& exact, bool by_rows) {
  const double d = sum_of(x, [&](std::int64_t i) { return (x[i] - exact[i]) * (x[i] - exact[i]); }, by_rows);
  const double r = sum_of(exact, [&](std::int64_t i) { return exact[i] * exact[i]; }, by_rows);
  return r > 0 ? std::sqrt(d / r) : std::sqrt(d);
}

// " or residual 1.0e-12" where solver.absolute_tolerance is set, for the line that starts a solve; "" otherwise.
std::string absolute_tolerance_text(const SolverParams& solver) {
  if (solver.absolute_tolerance <= 0) return "";
  char text[64];
  std::snprintf(text, sizeof text, " or residual %.1e", solver.absolute_tolerance);
  return text;
}

// How the work is spread: threads, and ranks under mpirun.
std::string parallelism(int threads) {
  const std::string team = counted(threads, "thread");
  return Ranks::size() > 1 ? std::to_string(Ranks::size()) + " ranks x " + team : team;
}

// Where the threads outnumber the cores (each rank taking every core, as OpenMP does where mpirun binds
// nothing and OMP_NUM_THREADS is unset), a line that says so: every thread then waits for the others at each
// barrier (the setup ran 60 times slower in a 4-rank run of 2 threads each on 2 cores). "" otherwise.
std::string oversubscription(int threads) {
  const int ranks = Ranks::size();
  const long on_node = static_cast<long>(ranks_on_this_node()) * threads;
  const auto cores = static_cast<long>(std::thread::hardware_concurrency());
  std::string where, remedy = "fewer with --threads";
  if (cores > 0 && on_node > cores) {
    where = ranks > 1 ? std::to_string(on_node) + " threads on this node's " + counted(cores, "core")
                      : counted(threads, "thread") + " on " + counted(cores, "core");
    if (ranks > 1)
      remedy = threads > 1 ? "fewer threads a rank, OMP_NUM_THREADS or --threads, or fewer ranks a node" : "fewer ranks a node";
  } else if (threads > omp_get_num_procs()) {  // more than the cores mpirun (or taskset) bound this process to
    where = counted(threads, "thread") + " on the " + counted(omp_get_num_procs(), "core") + " this process may use";
  } else {
    return "";
  }
  return "oversubscribed: " + where + ", each waiting for the others: far slower (" + remedy + ")";
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
  if (const std::string note = oversubscription(record.threads); !note.empty()) progress("  %s\n", note.c_str());
  record.solver_type = name_of(config.solver.type);
  record.precision = name_of(config.solver.precision);
  record.tolerance = config.solver.tolerance;
  record.absolute_tolerance = config.solver.absolute_tolerance;
  const bool x0_file = config.problem.type == ProblemType::matrix_market && !config.problem.matrix_market.x0.empty();
  record.initial_guess = x0_file ? "file" : name_of(config.initial_guess);
  record.spgemm_compared = config.compare_spgemm;
  return record;
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

// Runs `work` (a problem's setup or solve): what it finds wrong with a Matrix Market problem's matrix (not
// positive definite, an entry the setup cannot take) is said of problem.matrix's file. A preconditioner's
// breakdown is the settings' as much as the matrix's: it passes as it is.
template <class Work>
decltype(auto) naming_the_matrix_file(const Config& config, Work&& work) {
  if (config.problem.type != ProblemType::matrix_market) return work();
  try {
    return work();
  } catch (const PreconditionerBreakdown&) {
    throw;
  } catch (const NumericalError& e) {
    throw NumericalError("problem.matrix " + config.problem.matrix_market.matrix + ": " + e.what());
  } catch (const MatrixEntryError& e) {
    throw InputError("problem.matrix " + config.problem.matrix_market.matrix + ": " + e.what());
  }
}

// A x = b with the iterations shown, from x where from_x; b and x each rank's rows where by_rows.
SolveResult solve_one(const Config& config, AmgSolver& solver, bool by_rows, const Vector<double>& b,
                      Vector<double>& x, bool from_x) {
  return naming_the_matrix_file(config, [&] {
    return by_rows ? solver.solve_rows(b, x, true, from_x) : solver.solve(b, x, true, from_x);
  });
}

// problem.rhs's further columns (load cases), each solved with the hierarchy of the first, whose solve is
// record.solve; their solutions, in order (each from its problem.x0 column, moved into it, where given).
std::vector<Vector<double>> solve_further_columns(const Config& config, LinearProblem& problem, AmgSolver& solver,
                                                  bool by_rows, RunRecord& record) {
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
    record.load_cases.push_back(
        solve_one(config, solver, by_rows, problem.more_b[c - 1], solutions.back(), from_x0));
    summary(c + 1);
  }
  return solutions;
}

}  // namespace

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
    naming_the_matrix_file(config, [&] { set_up_or_rebuild(config, problem, by_rows, solver, record); });
    const bool from_previous = step > 1 && config.initial_guess == InitialGuess::previous_step;
    const bool from_x0 = !problem.x0.empty();  // problem.x0 (a matrix_market problem: one step)
    if (from_x0) x = std::move(problem.x0.front());  // the start becomes the solution: no second copy
    progress("%s solve to relative residual %.1e%s%s:\n",
             config.solver.type == SolverType::pcg ? "PCG (V-cycle preconditioner)" : "AMG V-cycle",
             config.solver.tolerance, absolute_tolerance_text(config.solver).c_str(),
             from_previous ? ", from the step before's solution"
             : from_x0     ? (", from " + config.problem.matrix_market.x0).c_str()
                           : "");
    record.solve = solve_one(config, *solver, by_rows, problem.b, x, from_previous || from_x0);
    if (steps > 1) {
      record.steps.push_back({static_cast<int>(step), spec.poisson.contrast, record.setup.seconds, record.setup.reused,
                              step == 1 ? "the first setup" : record.setup.rebuild_note, record.solve});
      if (step < steps) print_solve_summary(record.solve);
    }
  }
  const std::vector<Vector<double>> further_solutions =
      solve_further_columns(config, problem, *solver, by_rows, record);
  return finish_run(config, problem, *solver, in_column_order(x, further_solutions), by_rows, record);
}

}  // namespace amgsolve
