#pragma once
// Step 1 of smoothed aggregation for systems (Vanek, Mandel & Brezina, Computing 56, 1996, section 3): the
// strength of connection between nodes, the unknowns of one mesh point. The block A_IJ of nodes I and J counts
// by its Frobenius norm s_IJ, and J is a strong neighbour of I when s_IJ >= theta sqrt(s_II s_JJ): the scalar
// test (amg/strength.hpp) on the amalgamated matrix. Every entry of a strong block, and of a node's own block,
// is strong.
#include <cstdint>
#include <vector>

#include "amg/strength.hpp"
#include "sparse/csr.hpp"

namespace amgsolve {

// Step 1 for a level whose rows are grouped by node_ptr: the nodes' graph (for MIS-2) and the rows' strength
// (every entry classified; the rows' graph names each row's strong off-diagonal entries, but none for a node
// without strong neighbours, whose rows then count as isolated in the filtered matrix, amg/filtered_matrix.hpp).
struct NodeStrength {
  StrengthGraph nodes;
  Strength rows;
};
template <class Value>
NodeStrength node_strength(const CsrMatrix<Value>& A, const Array<Index>& node_ptr, double theta);
// The same on a rank's rows, whose columns name other ranks' nodes too: how its columns map to nodes.
struct NodeColumns {
  Array<Index> node_ptr = {0};          // the own nodes' rows
  Array<Index> node_of_column;          // each local column's node: own nodes first, ghost nodes after them
  Index nodes_with_ghosts = 0;
  std::vector<std::int64_t> global_node;  // each node's global number (empty: the local one, one process)
  Vector<double> node_norms;            // s_JJ of every node, own and ghost: the amalgamated diagonal
};
template <class Value>
NodeStrength node_strength(const CsrMatrix<Value>& A, const NodeColumns& nodes, double theta);
// s_II, the Frobenius norm of each own node's diagonal block (node_of_column: each column's node).
template <class Value>
Vector<double> diagonal_block_norms(const CsrMatrix<Value>& A, const Array<Index>& node_ptr,
                                    const Array<Index>& node_of_column);

}  // namespace amgsolve
