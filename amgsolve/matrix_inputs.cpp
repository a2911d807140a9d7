#include "amgsolve/matrix_inputs.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string_view>

#include "amg/near_nullspace.hpp"
#include "amgsolve/matrix_scale.hpp"
#include "amgsolve/parameter_ranges.hpp"
#include "amgsolve/vector_scale.hpp"
#include "common/error.hpp"
#include "common/parallel.hpp"
#include "sparse/csr_ops.hpp"
#ifdef AMGSOLVE_WITH_MPI
#include "distributed/communicator.hpp"
#endif

namespace amgsolve {
namespace {

// Where A / 2^exponent (the scale the solver uses it on, matrix_exponent) has an entry that float cannot hold
// (solver.precision: mixed sets up and cycles in float): beyond its range, or a diagonal entry below its
// normal numbers (rows would lose their scale), each with 2^24 of headroom for what the coarse levels'
// Galerkin sums and the smoothers' products grow or shrink to (a matrix of 1e37 passed and its float cycle
// broke down). "" when none. Rows and columns counted from first_index, and said so.
// Its text starts with kEntryProblem, which tells it from the other problems a rank may send
// (require_agreed_blocks).
constexpr std::string_view kEntryProblem = "entry (";
std::string float_range_problem(const CsrMatrix<double>& A, int exponent, Index first_row = 0, int first_index = 1) {
  constexpr double headroom = 16777216.0;  // 2^24
  constexpr double largest = std::numeric_limits<float>::max() / headroom;  // 2.0e31
  constexpr double smallest = std::numeric_limits<float>::min() * headroom;  // 2.0e-31
  // |a| / 2^exponent as ldexp forms it, without a libm call per entry where it can (docs/BENCHMARKS.md,
  // "Serial passes before and around the setup").
  const PowerOfTwo power(-exponent);
  const auto outside = [&](Index i, Offset k) {
    const double magnitude = power.times(std::abs(A.val[k]));
    const bool too_small = A.col[k] == first_row + i && magnitude < smallest;
    return magnitude > largest || too_small;
  };
  const auto row = static_cast<Index>(first_index_where(A.rows, [&](std::int64_t i) {
    for (Offset k = A.row_begin(static_cast<Index>(i)); k < A.row_end(static_cast<Index>(i)); ++k)
      if (outside(static_cast<Index>(i), k)) return true;
    return false;
  }));
  if (row == A.rows) return "";
  Offset k = A.row_begin(row);
  while (!outside(row, k)) ++k;
  return std::string(kEntryProblem) + std::to_string(first_row + row + first_index) + ", " +
         std::to_string(A.col[k] + first_index) + ") (counted from " + std::to_string(first_index) +
         ") = " + format_number(A.val[k]) +
         " is outside what the float cycle of solver.precision: mixed holds (" + format_number(smallest) +
         " to " + format_number(largest) +
         (exponent == 0 ? std::string() : " times 2^" + std::to_string(exponent) + ", about the largest diagonal entry") +
         "); use solver.precision: double";
}

}  // namespace

int require_representable(const CsrMatrix<double>& A, const Parameters& params) {
  const DiagonalMagnitudes diagonal = diagonal_magnitudes(A);
  const int exponent = matrix_exponent(diagonal.largest);
  if (const std::string problem = diagonal_range_problem(diagonal, exponent); !problem.empty())
    throw MatrixEntryError(problem);
  if (params.solver.precision == Precision::mixed)
    if (const std::string problem = float_range_problem(A, exponent); !problem.empty()) throw MatrixEntryError(problem);
  return exponent;
}

std::string mixed_precision_problem(const CsrMatrix<double>& A, int first_index) {
  return float_range_problem(A, matrix_exponent(largest_diagonal(A)), 0, first_index);  // on A's own scale
}

void require_solvable_matrix(const CsrMatrix<double>* A, const char* who) {
  if (!A) throw InputError(std::string(who) + ": no matrix");
  if (!A->is_square())
    throw InputError(std::string(who) + ": A is " + std::to_string(A->rows) + " x " + std::to_string(A->cols) +
                     ", not square");
  if (A->rows == 0) throw InputError(std::string(who) + ": A is empty (0 rows): nothing to solve");
  if (const std::string problem = csr_structure_problem(*A); !problem.empty()) {
    const bool numbered = problem.find("row ") != std::string::npos || problem.find("column ") != std::string::npos;
    throw InputError(std::string(who) + ": A is not a valid CSR matrix: " + problem +
                     (numbered ? " (counted from 0)" : ""));
  }
}

void require_system_supported(const CsrMatrix<double>& A, const Parameters& params, BackendKind kind) {
  if (const std::string problem = system_support_problem(kind); !problem.empty()) throw InputError(problem);
  require_system_nullspace_choice(params.amg.nullspace);
  if (const std::string problem = near_nullspace_problem(A.rows, params.amg.block_size, params.amg.near_nullspace);
      !problem.empty())
    throw InputError(problem);
  const NearNullspaceVectors& given = params.amg.near_nullspace;
  if (given.count > 0)
    if (const std::string problem = zero_vector_problem(largest_entries(*given.values, given.count)); !problem.empty())
      throw InputError(problem);
}

void require_whole_block(const RowBlock& block) {
  if (block.global_rows != block.rows.rows || block.rows.cols != block.rows.rows)
    throw InputError("Solver: on one process the row block is the whole matrix, but it has " +
                     std::to_string(block.rows.rows) + " x " + std::to_string(block.rows.cols) + " entries of " +
                     std::to_string(block.global_rows) + " rows");
}

#ifdef AMGSOLVE_WITH_MPI
namespace {

// What is wrong with this rank's block, or "": the shape every rank must agree on, then the values.
std::string block_problem(const RowBlock& block, int block_size, int rank) {
  const std::string mine = "Solver: rank " + std::to_string(rank) + "'s row block ";
  if (block.global_rows < 0 || block.global_rows > std::numeric_limits<Index>::max())
    return mine + "is of a matrix of " + std::to_string(block.global_rows) + " rows (at most 2^31 - 1)";
  if (block.rows.cols != block.global_rows)
    return mine + "has rows of " + std::to_string(block.rows.cols) + " columns for a matrix of " +
           std::to_string(block.global_rows) + " (columns are global)";
  const auto [first, last] = owned_rows(block.global_rows, block_size);
  if (block.rows.rows != last - first)
    return mine + "has " + std::to_string(block.rows.rows) + " rows where rows [" + std::to_string(first) + ", " +
           std::to_string(last) + ") are this rank's (owned_rows" +
           (block_size > 1 ? " with amg.block_size " + std::to_string(block_size) : std::string()) + ")";
  if (const std::string problem = csr_structure_problem(block.rows); !problem.empty())
    return mine + "is not valid CSR: " + problem + " (this rank's rows, counted from 0)";
  return "";
}

}  // namespace

void require_agreed_blocks(const RowBlock& block, const Parameters& params, BackendKind kind) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::string problem = parameter_problem(params);
  const AmgParams& amg = params.amg;
  if (problem.empty() && amg.is_system()) {
    problem = system_support_problem(kind);
    if (problem.empty())
      problem = rank_near_nullspace_problem(block.rows.rows, block.global_rows, amg.block_size, amg.near_nullspace);
  }
  if (problem.empty()) problem = block_problem(block, amg.block_size, rank);
  // The row counts' least and most, and whether each near-nullspace vector is nonzero on some rank's rows
  // (one reduction, of the same size on every rank).
  std::array<std::int64_t, 2 + kMaxNearNullspaceVectors> agreed{block.global_rows, -block.global_rows};
  const NearNullspaceVectors& given = amg.near_nullspace;
  const int vectors = given.values ? std::clamp(given.count, 0, kMaxNearNullspaceVectors) : 0;
  const std::vector<double> largest = largest_entries(vectors > 0 ? *given.values : Vector<double>{}, vectors);
  for (int v = 0; v < vectors; ++v) agreed[2 + v] = largest[static_cast<std::size_t>(v)] > 0 ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, agreed.data(), static_cast<int>(agreed.size()), MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
  if (problem.empty() && agreed[0] != -agreed[1]) problem = "Solver: the ranks disagree on the matrix's row count";
  if (problem.empty()) problem = zero_vector_problem(std::vector<double>(agreed.begin() + 2, agreed.begin() + 2 + vectors));
  // On the scale of the whole matrix (matrix_exponent): its diagonal, and in mixed precision every entry.
  const Index first = static_cast<Index>(owned_rows(block.global_rows, amg.block_size).first);
  const DiagonalMagnitudes diagonal = problem.empty() ? diagonal_magnitudes(block.rows, first) : DiagonalMagnitudes{};
  double largest_diagonal_entry = diagonal.largest;
  MPI_Allreduce(MPI_IN_PLACE, &largest_diagonal_entry, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  const int exponent = matrix_exponent(largest_diagonal_entry);
  if (problem.empty()) problem = diagonal_range_problem(diagonal, exponent);
  if (problem.empty() && params.solver.precision == Precision::mixed)
    problem = float_range_problem(block.rows, exponent, first);
  if (RankProblem first = first_rank_problem(MPI_COMM_WORLD, problem); first.rank >= 0) {
    // float_range_problem's and diagonal_range_problem's: the matrix's entries (global rows and columns)
    if (first.text.starts_with(kEntryProblem) || first.text.starts_with(kDiagonalRangeProblem))
      throw MatrixEntryError(first.text);
    throw InputError(first.text);
  }
}
#endif

}  // namespace amgsolve
