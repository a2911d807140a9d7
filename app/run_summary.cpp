#include "app/run_summary.hpp"

#include <algorithm>
#include <cstdio>

#include "amg/params.hpp"
#include "app/ranks.hpp"
#include "app/run.hpp"
#include "common/error.hpp"
#include "common/log.hpp"
#include "common/memory.hpp"

namespace amgsolve {

void print_solve_summary(const SolveResult& s, const char* what) {
  progress("%s%s after %s: relative residual %.3e, average factor %.3f, solve %.3f s\n", what,
           s.converged ? "converged" : "NOT CONVERGED", counted(s.iterations, "iteration").c_str(), s.relative_residual,
           s.convergence_factor(), s.seconds);
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
  // x = 0 has relative residual 1: where no iterate came below it after many iterations (CG's residual may
  // rise in its first few; the solve then returns the start, its least), CG has been driven by a component of
  // b that A cannot produce (a singular A whose nullspace is not the constants, which amg.nullspace: auto does
  // not detect) or, where it still moves, A is so ill-conditioned that CG's residual has not come down while
  // its A-norm error does (a shell's stiffness matrix, whose rigid-body modes the constants do not stand for).
  if (s.relative_residual >= 1 && s.stagnated)
    return ": the residual stagnates above the right-hand side's, so A is probably singular (or nearly) with "
           "b outside its range";
  if (s.relative_residual >= 1 && s.iterations >= 10)
    return ": the residual never came below the right-hand side's: A is singular or nearly so with b outside its "
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
    std::fprintf(stderr, "amgsolve: %s: %s after %s (relative residual %.3e > %.1e)%s\n",
               config.source.c_str(), what.c_str(), counted(s.iterations, "iteration").c_str(), s.relative_residual, s.tolerance,
               why_not_converged(s, config).c_str());
  return kExitNotConverged;
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

}  // namespace amgsolve
