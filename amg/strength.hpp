#pragma once
// Strength of connection for smoothed aggregation (Vanek, Mandel & Brezina, Computing 56, 1996, eq. 3.2):
//     j is strongly connected to i  <=>  |a_ij| >= theta * sqrt(|a_ii| |a_jj|),  i != j.
// The measure is symmetric, so the strength graph of a symmetric matrix is undirected.
#include <cstdint>
#include <vector>

#include "sparse/csr.hpp"

namespace amgsolve {

class CpuBackend;

// Adjacency structure of the strength graph (no self loops), rows sorted.
struct StrengthGraph {
  Index nodes = 0;
  Array<Offset> row_ptr = {0};
  Array<Index> adj;
  Index degree(Index i) const { return static_cast<Index>(row_ptr[i + 1] - row_ptr[i]); }
};

struct Strength {
  StrengthGraph graph;
  // For every stored entry of A: 1 if it is the diagonal or a strong connection, 0 if weak.
  Array<std::uint8_t> keep;
  Offset weak_entries = 0;
};

template <class Value>
Strength strength_of_connection(const CsrMatrix<Value>& A, double theta);
// The same with the diagonal entry a_jj of every column given (row i's is column i's): a rank's rows of a
// distributed matrix, whose ghost columns' diagonal entries other ranks hold. The graph's nodes are the
// rows; its adjacency names columns, ghosts included.
template <class Value>
Strength strength_of_connection(const CsrMatrix<Value>& A, double theta, const Vector<Value>& column_diagonal);

// The filtered matrix of smoothed aggregation: weak connections are dropped and added to the diagonal,
// weighted by the level's near-nullspace vector B (a_ii <- a_ii + sum of weak a_ij B_j / B_i), so that
// A_f B = A B and B stays in A_f's near-kernel (exactly in its kernel for a singular A): on the finest level
// B = 1 and A_f keeps A's row sums. weights holds B^2 (amg/tentative_prolongation.hpp) per column (row i's is
// column i's), empty for B = 1.
// Rows where lumping would leave less than half of a_ii (possible with positive off-diagonals, and in a row
// coupled weakly to very many others) keep their weak entries, or, for a row with no strong off-diagonal
// entry under IsolatedRows::diagonal_alone, a_ii alone.
// filtered_rows (optional): 1 for each row whose weak entries were left out, 0 for one that kept them; with
// the strength, this decides the filtered matrix's pattern (a re-setup checks that it did not change).
enum class IsolatedRows {
  // A singular matrix's (amg.nullspace constant): such a row's node is an aggregate of its own, whose B the
  // smoothed prolongator must carry exactly, which the weak entries do.
  keep_weak,
  // Otherwise: the node is in no aggregate, so P's row is zero with a_ii alone, where its weak entries would
  // fill it (a ground or hub node coupled to every other one made P's row, A P and the coarse level dense).
  diagonal_alone,
};
template <class Value>
CsrMatrix<Value> filtered_matrix(const CsrMatrix<Value>& A, const Strength& strength,
                                 const Vector<double>& weights = {}, Array<std::uint8_t>* filtered_rows = nullptr,
                                 IsolatedRows isolated = IsolatedRows::diagonal_alone);

// The setup calls them through its backend (amg/smoothed_aggregation.hpp); on the cpu backend they are the
// functions above, on the cuda backend their device versions (amg/cuda/device_setup.hpp).
template <class Value>
Strength strength_of_connection(const CpuBackend&, const CsrMatrix<Value>& A, double theta) {
  return strength_of_connection(A, theta);
}
template <class Value>
CsrMatrix<Value> filtered_matrix(const CpuBackend&, const CsrMatrix<Value>& A, const Strength& strength,
                                 const Vector<double>& weights, Array<std::uint8_t>* filtered_rows,
                                 IsolatedRows isolated) {
  return filtered_matrix(A, strength, weights, filtered_rows, isolated);
}

// A re-setup keeps a level's strength (amg/hierarchy.hpp's LevelStructure): the part it stores, its memory,
// and the strength given back to the setup for the level's new matrix (the mpi backend's overloads wrap a
// rank's part).
inline Strength& local_strength(Strength& strength) { return strength; }
inline std::uint64_t strength_bytes(const Strength& strength) {
  return strength.keep.size() + strength.graph.adj.size() * sizeof(Index) +
         strength.graph.row_ptr.size() * sizeof(Offset);
}
template <class Value>
const Strength& kept_strength(const CpuBackend&, const Strength& kept, Offset /*weak_entries: kept's own*/,
                              const CsrMatrix<Value>& /*A*/) {
  return kept;
}

}  // namespace amgsolve
