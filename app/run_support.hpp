#pragma once
// Pieces of the application shared by the problem families' run paths (run.cpp, mouse_run.cpp).
#include <string>
#include <vector>

#include "app/amg_solver.hpp"
#include "app/ranks.hpp"
#include "common/parallel.hpp"
#include "problems/problem.hpp"
#include "problems/row_range.hpp"

namespace amgsolve {

// rows, nnz and the row-length histogram of the system matrix into the record.
void describe_matrix(const CsrMatrix<double>& A, RunRecord& record);
// The same for a matrix whose rows the ranks hold (this rank's `rows` of global_rows): the counts summed
// over the ranks (collective).
void describe_distributed_matrix(const CsrMatrix<double>& rows, std::int64_t global_rows, RunRecord& record);

// Whether the solve is spread over the ranks (several ranks, Parameters::distribute), each rank assembling
// only its rows of the matrix.
bool solve_distributed(const Config& config);
// Whether each rank makes or reads its rows of this problem's matrix apart from the others': a distributed
// solve of a Poisson, elasticity or Matrix Market problem (the mouse's operators are made by rows in
// mouse_run.cpp).
bool rows_made_apart(const Config& config);
// The rows of a Matrix Market problem's matrix, from its file's header (before the matrix is read).
std::int64_t matrix_file_rows(const MatrixMarketParams& p);
// This rank's rows of a problem whose generator makes any rows alone: a Poisson problem's, the elasticity
// problem's whole nodes.
RowRange generated_rows(const ProblemSpec& spec);

// The solver's finest aggregates whole on rank 0 for the VTK file: gathered there where the solver is
// distributed over the ranks (`setup` its summary), each rank holding its rows. Collective.
Array<Index> aggregates_to_write(const AmgSolver& solver, const SetupRecord& setup);

// The sum of f(i) over a vector's entries i: a whole vector's, or (by_rows) over the ranks' rows of it
// (collective). Exact either way, so the same on any number of ranks.
template <class F>
double sum_of(const Vector<double>& v, F&& f, bool by_rows) {
  const ExactSum partial = deterministic_partial_sum(static_cast<std::int64_t>(v.size()), f);
  return by_rows ? Ranks::sum(partial) : partial.value();
}

// "converged after N iterations: ..." line.
void print_solve_summary(const SolveResult& s, const char* what = "");
// " or residual 1.0e-12" where solver.absolute_tolerance is set, for the line that starts a solve; "" otherwise.
std::string absolute_tolerance_text(const SolverParams& solver);

// Each rank's rows and communication (this rank's in the setups and in the solves, `what` naming the
// solves: "the solve's"), gathered on rank 0 into the record and summarised in a line. Collective; nothing
// on one process.
void record_rank_loads(const CommunicationStats& setups, const CommunicationStats& solves, const char* what,
                       RunRecord& record);

// output.spgemm_csv, where the run compared the SpGEMM backends; its line for the list of written files.
void write_comparison_if_asked(const OutputParams& out, const RunRecord& record, std::vector<std::string>& written);

// kExitOk, or kExitNotConverged with a message on stderr when any of the solves did not converge (named by
// their column where they are problem.rhs's load cases).
int exit_status(const Config& config, const std::vector<SolveResult>& solves, bool load_cases = false);

// The diffuse-optical mouse (problem.type: mouse): phantom, sources, one hierarchy per wavelength,
// a solve per source, fluorescence, VTK of the animal.
int run_mouse(const Config& config, RunRecord& record);

}  // namespace amgsolve
