#pragma once
// The lines that close a solve and a run: each solve's summary, the ranks' loads, and the exit status with
// the reason a solve that did not converge may not have.
#include <string>
#include <vector>

#include "config/config.hpp"
#include "output/report.hpp"
#include "solver/solve_result.hpp"

namespace amgsolve {

// "converged after N iterations: ..." line.
void print_solve_summary(const SolveResult& s, const char* what = "");

// Each rank's rows and communication (this rank's in the setups and in the solves, `what` naming the
// solves: "the solve's"), gathered on rank 0 into the record and summarised in a line. Collective; nothing
// on one process.
void record_rank_loads(const CommunicationStats& setups, const CommunicationStats& solves, const char* what,
                       RunRecord& record);

// kExitOk, or kExitNotConverged with a message on stderr when any of the solves did not converge (named by
// their column where they are problem.rhs's load cases).
int exit_status(const Config& config, const std::vector<SolveResult>& solves, bool load_cases = false);

}  // namespace amgsolve
