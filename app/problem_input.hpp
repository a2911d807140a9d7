#pragma once
// The run's linear problem: made whole on every rank, or each rank its rows of it in a distributed solve;
// checked for what would make it unsolvable (a singular matrix's right-hand side with a part along its
// nullspace) before the setup; described in the report and on the console.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "output/report.hpp"
#include "problems/problem.hpp"
#include "problems/row_range.hpp"

namespace amgsolve {

// Whether the solve is spread over the ranks (several ranks, Parameters::distribute), each rank assembling
// only its rows of the matrix.
bool solve_distributed(const Config& config);
// Whether each rank makes or reads its rows of this problem's matrix apart from the others': a distributed
// solve of a Poisson or elasticity problem (their generators make any rows alone, at every one of
// problem.steps) or of a Matrix Market file (read on rank 0 and dealt out as it is read). The mouse's
// operators are made by rows in mouse_run.cpp.
bool rows_made_apart(const Config& config);
// The rows of a Matrix Market problem's matrix, from its file's header (before the matrix is read).
std::int64_t matrix_file_rows(const MatrixMarketParams& p);
// This rank's rows of a problem whose generator makes any rows alone: a Poisson problem's, the elasticity
// problem's whole nodes.
RowRange generated_rows(const ProblemSpec& spec);

// One step's problem: the whole matrix on every rank, or (by_rows) each rank's rows of it, its right-hand
// sides checked against a singular matrix's nullspace. Collective.
LinearProblem assemble_step(const Config& config, const ProblemSpec& spec, bool by_rows);

// A problem's type, description, assembly time and system matrix (rows, nonzeros, the row-length histogram)
// into the record: the matrix whole, or with global_rows this rank's rows of it, the counts then summed over
// the ranks (collective).
void record_problem(std::string type, std::string description, double seconds, const CsrMatrix<double>& A,
                    std::optional<std::int64_t> global_rows, RunRecord& record);
// The first step's problem (assembled in `seconds`) in the report, whose description the last step's
// replaces, and on the console.
void describe_problem(const Config& config, const LinearProblem& problem, bool by_rows, double seconds,
                      RunRecord& record);

// first, then each of rest: a load case's vectors in column order (b and more_b, x and the further solutions).
std::vector<const Vector<double>*> in_column_order(const Vector<double>& first, const std::vector<Vector<double>>& rest);

}  // namespace amgsolve
