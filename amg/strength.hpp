#pragma once
// Strength of connection for smoothed aggregation (Vanek, Mandel & Brezina, Computing 56, 1996, eq. 3.2):
//     j is strongly connected to i  <=>  |a_ij| >= theta * sqrt(|a_ii| |a_jj|),  i != j.
// The measure is symmetric, so the strength graph of a symmetric matrix is undirected.
#include <algorithm>
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

// How far a classification kept for a re-setup (amg/resetup.hpp) is from what A's values give now: of the
// off-diagonal entries of about `sampled_rows` rows spread over A (every rows / sampled_rows-th), the share
// the test classifies otherwise than `kept` (A has kept's pattern). Where it is large, the kept aggregates
// follow couplings the matrix no longer has (a full setup fits it better); a sample costs little beside the
// re-setup.
template <class Value>
double strength_drift(const CsrMatrix<Value>& A, double theta, const Strength& kept, Index sampled_rows);
template <class Value>
double strength_drift(const CpuBackend&, const CsrMatrix<Value>& A, double theta, const Strength& kept,
                      Index sampled_rows) {
  return strength_drift(A, theta, kept, sampled_rows);
}
// Its counts over a rank's rows (their first global row `first_row`): the rows whose global number is a
// multiple of `stride` (drift_stride of all ranks' rows, so that the ranks' counts add up to one process's),
// a_jj from column_diagonal (own columns and ghosts) or, where it is empty, from row j of `rows`.
struct DriftCount {
  Offset couplings = 0, changed = 0;
  double share() const { return couplings == 0 ? 0.0 : static_cast<double>(changed) / static_cast<double>(couplings); }
};
inline std::int64_t drift_stride(std::int64_t rows, std::int64_t sampled_rows) {
  return std::max<std::int64_t>(1, rows / std::max<std::int64_t>(1, sampled_rows));
}
template <class Value>
DriftCount strength_drift_count(const CsrMatrix<Value>& rows, double theta, const Strength& kept,
                                std::int64_t first_row, std::int64_t stride, const Vector<Value>& column_diagonal);

// The setup calls it through its backend (amg/smoothed_aggregation.hpp); on the cpu backend it is the
// function above, on the cuda backend its device version (amg/cuda/device_setup.hpp).
template <class Value>
Strength strength_of_connection(const CpuBackend&, const CsrMatrix<Value>& A, double theta) {
  return strength_of_connection(A, theta);
}
// With A's diagonal as the backend's positive_diagonal found it.
template <class Value>
Strength strength_of_connection(const CpuBackend&, const CsrMatrix<Value>& A, double theta,
                                const Vector<Value>& diagonal) {
  return strength_of_connection(A, theta, diagonal);
}

// A re-setup keeps a level's strength (amg/kept_structure.hpp's LevelStructure): the part it stores, its memory,
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
