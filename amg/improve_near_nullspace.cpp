#include "amg/improve_near_nullspace.hpp"

#include <numeric>
#include <string>

#include "common/error.hpp"
#include "common/parallel.hpp"
#include "sparse/block_diagonal.hpp"

namespace amgsolve {
namespace {

// AB = A B, row by row as B (values[i * vectors + v]).
template <class Value>
void multiply_vectors(const CsrMatrix<Value>& A, const NearNullspace& B, Vector<double>& AB) {
#pragma omp parallel for schedule(static) if (worth_a_team(static_cast<std::uint64_t>(A.nnz()), kSerialMatrixEntries))
  for (Index i = 0; i < A.rows; ++i) product_row(A, i, B, AB.data() + static_cast<std::size_t>(i) * B.vectors);
}

}  // namespace

std::shared_ptr<const Array<Index>> single_row_nodes(Index rows) {
  auto nodes = std::make_shared<Array<Index>>(static_cast<std::size_t>(rows) + 1);
  std::iota(nodes->begin(), nodes->end(), Index{0});
  return nodes;
}

template <class Value>
void improve_near_nullspace(const CsrMatrix<Value>& A, std::shared_ptr<const Array<Index>> nodes, double omega,
                            int sweeps, NearNullspace& B, const GhostRows& ghost_rows) {
  if (B.rows() != A.rows) throw Error("internal: a near-nullspace of " + std::to_string(B.rows()) + " rows for a matrix of " + std::to_string(A.rows));
  if (sweeps <= 0 || A.rows == 0) return;
  const BlockDiagonal<double> damped_inverse = inverse_node_blocks<double>(A, std::move(nodes), BlockInverse::inverse, omega);
  const std::size_t k = static_cast<std::size_t>(B.vectors);
  Vector<double> AB(B.values.size());
  NearNullspace columns;  // B over A's columns, where they name other ranks' rows
  columns.vectors = B.vectors;
  for (int sweep = 0; sweep < sweeps; ++sweep) {
    if (ghost_rows) ghost_rows(B.values, B.vectors, columns.values);
    multiply_vectors(A, ghost_rows ? columns : B, AB);
    // b_I -= omega D_I^-1 (A b)_I node by node, each vector in turn.
#pragma omp parallel for schedule(static) if (worth_a_team(B.values.size()))
    for (Index n = 0; n < damped_inverse.nodes(); ++n) {
      const Index first = damped_inverse.first_row(n), size = damped_inverse.node_rows(n);
      double residual[kMaxNodeRows];
      for (std::size_t v = 0; v < k; ++v) {
        for (Index i = 0; i < size; ++i) residual[i] = AB[static_cast<std::size_t>(first + i) * k + v];
        damped_inverse.multiply_block(n, residual, -1.0,
                                      [&](Index row, double t) { B.values[static_cast<std::size_t>(row) * k + v] += t; });
      }
    }
  }
}

template void improve_near_nullspace(const CsrMatrix<double>&, std::shared_ptr<const Array<Index>>, double, int,
                                     NearNullspace&, const GhostRows&);
template void improve_near_nullspace(const CsrMatrix<float>&, std::shared_ptr<const Array<Index>>, double, int,
                                     NearNullspace&, const GhostRows&);

}  // namespace amgsolve
