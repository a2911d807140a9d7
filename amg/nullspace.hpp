#pragma once
// The constant nullspace of a singular SPD-on-its-range matrix (amg.nullspace): a pure-Neumann Laplacian or
// a graph Laplacian, whose rows sum to zero (A 1 = 0). Smoothed aggregation keeps the constant exactly on
// every level (amg/tentative_prolongation.hpp), the coarsest solve is the pseudo-inverse on the range
// (sparse/sparse_ldlt.hpp), and the outer iteration keeps its vectors orthogonal to the constant and checks
// that b is (amgsolve/solver.cpp): the setting of Kaasschieter, "Preconditioned conjugate gradients for
// solving singular systems", J. Comput. Appl. Math. 24, 1988, where PCG converges for a consistent b.
//
// `auto` takes the nullspace to be constant when every row sums to zero to rounding, and only then; it
// needs the matrix's graph to be connected (otherwise each part has its own constant, a nullspace of more
// than one vector that this does not handle, and the solve refuses it).
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "amg/params.hpp"
#include "common/error.hpp"
#include "sparse/csr.hpp"

namespace amgsolve {

class CpuBackend;
struct NearNullspace;

// The row whose sum is largest relative to its entries, |sum_j a_ij| / sum_j |a_ij| (0 for an empty row).
struct RowSum {
  Index row = -1;
  double relative = 0.0;
};

// Rows summing to zero within this relative amount (a few hundred roundings of the row's entries in the
// matrix's precision) count as zero for amg.nullspace: auto.
template <class Value>
constexpr double zero_row_sum_tolerance() {
  return 512 * std::numeric_limits<Value>::epsilon();
}

template <class Value>
RowSum largest_relative_row_sum(const CsrMatrix<Value>& A);
// Whether some row's relative sum is above `tolerance` (or not a number, as a row of infinite entries gives;
// the input checks refuse those before): the question amg.nullspace: auto asks,
// answered at the first such row found, where a nonsingular matrix has one among its first rows as a rule
// (a boundary), instead of after a pass over every row.
template <class Value>
bool some_row_sum_beyond(const CsrMatrix<Value>& A, double tolerance);
// Row i's |sum_j a_ij| / sum_j |a_ij| (0 for an empty row), summed on the scale of its largest entry.
template <class Value>
double relative_row_sum(const CsrMatrix<Value>& A, Index i);

// Through the setup's backend (the cuda one in amg/cuda/device_setup.hpp).
template <class Value>
RowSum largest_relative_row_sum(const CpuBackend&, const CsrMatrix<Value>& A) {
  return largest_relative_row_sum(A);
}

// Connected components of the matrix's graph (its nonzero entries, taken as undirected; a stored zero links
// nothing). With `node_ptr` (a system's nodes: rows [node_ptr[n], node_ptr[n + 1])), the rows of a node
// count as joined: a system's parts are of nodes, whatever couples the unknowns within one.
Index connected_components(const CsrMatrix<double>& A, const Array<Index>* node_ptr = nullptr);

// Why a matrix that is not singular as a whole may still be: a part of it that no other row couples to
// (a connected component of its graph, not the whole) whose rows all sum to zero, singular on its own (a
// floating part of a structure or a domain, a Neumann subdomain). For a system (B, its finest near-nullspace:
// parts of whole nodes), a part that A moves freely as one of B's vectors: A b_v zero on each of its rows, to
// kNullspaceRowTolerance of sum_j |a_ij b_jv| (a body held nowhere moves as a rigid-body mode), b_v not
// zero on it. Names the first such part by its first row and size, as a clause for an error message; ""
// where there is none. Asked only after a setup or solve has failed: it costs a pass of union-find over the
// entries.
std::string floating_part(const CsrMatrix<double>& A, const NearNullspace* B = nullptr);
// That clause for the part whose smallest row (from 0) is `first_row`, of `rows` rows, free as B's `vector`
// (-1: the constant; the ranks' overload in amg/mpi/distributed_setup.hpp names it alike).
std::string floating_part_clause(std::int64_t first_row, std::int64_t rows, int vector = -1);

// What floating_part finds of a row, or of a part (its rows' together): for each vector (B's, or the constant),
// whether it moves there (is not zero) and whether A holds it there (A b_v is not zero).
struct PartModes {
  std::int64_t rows = 0;
  std::vector<char> moves, holds;
  explicit PartModes(int vectors = 1) : moves(static_cast<std::size_t>(vectors)), holds(moves.size()) {}
  // More rows of the part, with their vectors' moves and holds (as many as the part's).
  void add(std::int64_t more_rows, const char* more_moves, const char* more_holds);
  void add(const PartModes& other) { add(other.rows, other.moves.data(), other.holds.data()); }
  int free_vector() const;  // the first vector the part moves as and nothing holds, or -1
};
// The clause for the first of `parts` (by name, its first row) that one of its vectors moves and nothing holds
// (vector numbers named only for a `system`, whose vectors are B's); "" where there is none.
std::string first_floating_part(const std::map<Index, PartModes>& parts, bool system);
// Row i of A's modes into moves and holds (one per vector); B_columns: B's rows over A's columns (a rank's own
// rows first), or null for the constant.
void row_modes(const CsrMatrix<double>& A, Index i, const NearNullspace* B_columns, char* moves, char* holds);

// An error that names a floating part of A (floating_part): a property of the matrix, so no other cause (a
// parameter, float's rounding) is suggested beside it.
class FloatingPartError : public NumericalError {
 public:
  using NumericalError::NumericalError;
};

// The union-find both counts start from: each row its own part, or with `node_ptr` each node's rows one part
// rooted at its first row; returns the number of parts.
Index parts_of_nodes(std::vector<Index>& parent, Index rows, const Array<Index>* node_ptr);

// amg.nullspace near_nullspace is a system's (amg/system_nullspace.hpp): an InputError for a scalar problem.
void require_scalar_nullspace_choice(NullspaceChoice choice);

// amg.nullspace for a host matrix in double, checked: `constant` on a matrix whose rows do not sum to zero,
// or a singular matrix whose graph falls apart, is an InputError saying which row or how many parts.
// Returns none or constant.
NullspaceChoice resolve_nullspace(const CsrMatrix<double>& A, NullspaceChoice choice);
// Through a backend (the mpi one's in amg/mpi/distributed_setup.hpp).
inline NullspaceChoice resolve_nullspace(const CpuBackend&, const CsrMatrix<double>& A, NullspaceChoice choice) {
  return resolve_nullspace(A, choice);
}
// The same decision from the matrix's largest relative row sum and a count of its graph's connected parts
// (asked only when needed): what the mpi backend's overload decides from the ranks' rows
// (amg/mpi/distributed_setup.hpp).
NullspaceChoice resolve_nullspace(const RowSum& largest_row_sum, const std::function<Index()>& count_components,
                                  NullspaceChoice choice);
// The constant where the rows all sum to zero: the graph's parts counted, more than one an InputError.
NullspaceChoice constant_if_connected(const std::function<Index()>& count_components);

// b's part along the constant, |sum b| / (sqrt(n) ||b||) from b's sum and norm (0 for b = 0): no x brings the
// residual of a singular A (A 1 = 0) below it.
double constant_part(double sum, double norm, std::size_t n);
// Above the solve's tolerance that is an InputError saying so (`what` names b's source).
void require_consistent_rhs(double sum, double norm, std::size_t n, double tolerance, const std::string& what);
// The tolerance on b's range part r (||r||^2 = ||b||^2 (1 - c^2), c = constant_part) that makes the
// residual of b itself, sqrt(||r - A x||^2 + c^2 ||b||^2), at most `tolerance` ||b||: a constant part just
// below the tolerance leaves the range part almost nothing (before, the range part alone met the tolerance,
// and b's residual was above it: 1.3e-8 reported as 8.8e-9). A system's nullspace part counts alike.
double range_tolerance(double tolerance, double constant_part);

inline std::string to_string(NullspaceChoice choice) { return name_of(choice); }

}  // namespace amgsolve
