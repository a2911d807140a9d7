#include "amg/node_strength.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "common/error.hpp"
#include "common/thread_errors.hpp"
#include "spgemm/product_memory.hpp"

namespace amgsolve {

namespace {

Array<Index> node_of_rows(const Array<Index>& node_ptr) {
  Array<Index> node(static_cast<std::size_t>(node_ptr.back()));
  const Index nodes = static_cast<Index>(node_ptr.size()) - 1;
#pragma omp parallel for schedule(static)
  for (Index n = 0; n < nodes; ++n)
    for (Index i = node_ptr[n]; i < node_ptr[n + 1]; ++i) node[i] = n;
  return node;
}

// The amalgamated matrix of a level's (a rank's) own nodes: entry (I, J) the Frobenius norm of A's block of
// nodes I and J, over A's pattern, each row's entries in the nodes' global order (its squares summed in A's).
template <class Value>
CsrMatrix<double> block_norms(const CsrMatrix<Value>& A, const NodeColumns& nodes) {
  const Array<Index>& node_ptr = nodes.node_ptr;
  const Array<Index>& node_of = nodes.node_of_column;
  const Index own = static_cast<Index>(node_ptr.size()) - 1, all = nodes.nodes_with_ghosts;
  const auto before = [&](Index I, Index J) {
    return nodes.global_node.empty() ? I < J : nodes.global_node[static_cast<std::size_t>(I)] < nodes.global_node[static_cast<std::size_t>(J)];
  };
  CsrMatrix<double> M(own, all);
  // Each thread's markers and sums span every node: checked first, so that what does not fit is named (and
  // out of memory inside the threads is an exception, not the end of the process).
  require_thread_arrays(static_cast<std::uint64_t>(all), sizeof(Index) + sizeof(double), "the node strength's markers",
                        "nodes");
  ThreadErrors errors;
#pragma omp parallel
  {
    std::vector<Index> marker;
    errors.run([&] { marker.assign(static_cast<std::size_t>(all), -1); });
#pragma omp for schedule(static)
    for (Index I = 0; I < own; ++I) {
      if (errors.failed()) continue;
      Offset length = 0;
      for (Index i = node_ptr[I]; i < node_ptr[I + 1]; ++i)
        for (Offset k = A.row_begin(i); k < A.row_end(i); ++k) {
          const Index J = node_of[A.col[k]];
          length += marker[J] != I;
          marker[J] = I;
        }
      M.row_ptr[static_cast<std::size_t>(I) + 1] = length;
    }
  }
  errors.rethrow();
  allocate_from_row_lengths(M);
#pragma omp parallel
  {
    std::vector<Index> marker;
    std::vector<double> squares;
    errors.run([&] {
      marker.assign(static_cast<std::size_t>(all), -1);
      squares.assign(static_cast<std::size_t>(all), 0.0);
    });
#pragma omp for schedule(static)
    for (Index I = 0; I < own; ++I) {
      if (errors.failed()) continue;
      Index* columns = M.col.data() + M.row_begin(I);
      Index length = 0;
      for (Index i = node_ptr[I]; i < node_ptr[I + 1]; ++i)
        for (Offset k = A.row_begin(i); k < A.row_end(i); ++k) {
          const Index J = node_of[A.col[k]];
          if (marker[J] != I) columns[length++] = J;
          marker[J] = I;
          squares[J] += static_cast<double>(A.val[k]) * static_cast<double>(A.val[k]);
        }
      std::sort(columns, columns + length, before);
      for (Index n = 0; n < length; ++n) {
        M.val[M.row_begin(I) + n] = std::sqrt(squares[columns[n]]);
        squares[columns[n]] = 0.0;
      }
    }
  }
  errors.rethrow();
  return M;
}

}  // namespace

template <class Value>
Vector<double> diagonal_block_norms(const CsrMatrix<Value>& A, const Array<Index>& node_ptr,
                                    const Array<Index>& node_of_column) {
  const Index nodes = static_cast<Index>(node_ptr.size()) - 1;
  Vector<double> norms(static_cast<std::size_t>(nodes));
#pragma omp parallel for schedule(static)
  for (Index I = 0; I < nodes; ++I) {
    double squares = 0.0;  // in A's order, as block_norms sums them
    for (Index i = node_ptr[I]; i < node_ptr[I + 1]; ++i)
      for (Offset k = A.row_begin(i); k < A.row_end(i); ++k)
        if (node_of_column[A.col[k]] == I) squares += static_cast<double>(A.val[k]) * static_cast<double>(A.val[k]);
    norms[I] = std::sqrt(squares);
  }
  return norms;
}

template <class Value>
NodeStrength node_strength(const CsrMatrix<Value>& A, const Array<Index>& node_ptr, double theta) {
  if (node_ptr.empty() || node_ptr.back() != A.rows)
    throw Error("internal: node_strength: the nodes cover " + std::to_string(node_ptr.empty() ? 0 : node_ptr.back()) +
                " rows of " + std::to_string(A.rows));
  NodeColumns nodes;
  nodes.node_ptr = node_ptr;
  nodes.node_of_column = node_of_rows(node_ptr);
  nodes.nodes_with_ghosts = static_cast<Index>(node_ptr.size()) - 1;
  nodes.node_norms = diagonal_block_norms(A, node_ptr, nodes.node_of_column);
  return node_strength(A, nodes, theta);
}

template <class Value>
NodeStrength node_strength(const CsrMatrix<Value>& A, const NodeColumns& nodes, double theta) {
  const Array<Index>& node_ptr = nodes.node_ptr;
  const Array<Index>& node_of = nodes.node_of_column;
  const CsrMatrix<double> M = block_norms(A, nodes);
  NodeStrength s;
  Strength between_nodes = strength_of_connection(M, theta, nodes.node_norms);
  s.nodes = std::move(between_nodes.graph);
  // An entry of A is strong where its nodes' block is (a node's own block included).
  Strength& rows = s.rows;
  rows.keep.resize(static_cast<std::size_t>(A.nnz()));
  StrengthGraph& g = rows.graph;
  g.nodes = A.rows;
  g.row_ptr.assign(static_cast<std::size_t>(A.rows) + 1, 0);
  // The row graph names a row's strong off-diagonal entries, its own node's too, but none of an isolated
  // node's rows (no strong neighbour node).
  const auto in_row_graph = [&](Index i, Offset k) {
    const Index I = node_of[i];
    return rows.keep[k] && A.col[k] != i && !(s.nodes.degree(I) == 0 && node_of[A.col[k]] == I);
  };
  Offset weak = 0;
  ThreadErrors errors;  // strong_of spans every node, on each thread
#pragma omp parallel reduction(+ : weak)
  {
    std::vector<Index> strong_of;
    errors.run([&] { strong_of.assign(static_cast<std::size_t>(nodes.nodes_with_ghosts), -1); });
#pragma omp for schedule(static)
    for (Index I = 0; I < M.rows; ++I) {
      if (errors.failed()) continue;
      for (Offset k = M.row_begin(I); k < M.row_end(I); ++k)
        if (between_nodes.keep[k]) strong_of[M.col[k]] = I;
      for (Index i = node_ptr[I]; i < node_ptr[I + 1]; ++i) {
        Offset neighbours = 0;
        for (Offset k = A.row_begin(i); k < A.row_end(i); ++k) {
          const bool strong = strong_of[node_of[A.col[k]]] == I;
          rows.keep[k] = strong;
          neighbours += in_row_graph(i, k);
          weak += !strong;
        }
        g.row_ptr[static_cast<std::size_t>(i) + 1] = neighbours;
      }
    }
  }
  errors.rethrow();
  for (Index i = 0; i < A.rows; ++i) g.row_ptr[i + 1] += g.row_ptr[i];
  g.adj.resize(static_cast<std::size_t>(g.row_ptr.back()));
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < A.rows; ++i) {
    Offset out = g.row_ptr[i];
    for (Offset k = A.row_begin(i); k < A.row_end(i); ++k)
      if (in_row_graph(i, k)) g.adj[out++] = A.col[k];
  }
  rows.weak_entries = weak;
  return s;
}

template NodeStrength node_strength(const CsrMatrix<double>&, const Array<Index>&, double);
template NodeStrength node_strength(const CsrMatrix<float>&, const Array<Index>&, double);
template NodeStrength node_strength(const CsrMatrix<double>&, const NodeColumns&, double);
template NodeStrength node_strength(const CsrMatrix<float>&, const NodeColumns&, double);
template Vector<double> diagonal_block_norms(const CsrMatrix<double>&, const Array<Index>&, const Array<Index>&);
template Vector<double> diagonal_block_norms(const CsrMatrix<float>&, const Array<Index>&, const Array<Index>&);

}  // namespace amgsolve
