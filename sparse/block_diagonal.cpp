#include "sparse/block_diagonal.hpp"

#include <Eigen/Cholesky>
#include <Eigen/Core>

#include <string>

#include "common/error.hpp"
#include "common/parallel.hpp"

namespace amgsolve {
namespace {

// A_II: the entries of node n's rows in node n's columns, each row scanned whole (a rank's rows hold their
// ghost columns after the own ones, so their columns need not be sorted).
template <class Value>
void gather_block(const CsrMatrix<Value>& A, Index first, Index size, Eigen::MatrixXd& block) {
  block.setZero(size, size);
  for (Index i = 0; i < size; ++i)
    for (Offset k = A.row_begin(first + i); k < A.row_end(first + i); ++k) {
      const Index j = A.col[k] - first;
      if (j >= 0 && j < size) block(i, j) = static_cast<double>(A.val[k]);
    }
}

std::string block_not_positive_definite(std::int64_t first, Index size) {
  return "the diagonal block of the node of rows " + std::to_string(first + 1) + " to " +
         std::to_string(first + size) + " is not positive definite, so the matrix is not";
}

}  // namespace

template <class V, class Value>
BlockDiagonal<V> inverse_node_blocks(const CsrMatrix<Value>& A, std::shared_ptr<const Array<Index>> nodes,
                                     BlockInverse what, double scale, std::int64_t first_row) {
  BlockDiagonal<V> D;
  D.node_ptr = std::move(nodes);
  const Index count = D.nodes();
  if (D.rows() != A.rows) throw Error("internal: node blocks of " + std::to_string(D.rows()) + " rows on a matrix of " + std::to_string(A.rows));
  D.block_ptr.resize(static_cast<std::size_t>(count) + 1);
  D.block_ptr[0] = 0;
  for (Index n = 0; n < count; ++n) {
    const Offset size = D.node_rows(n);
    if (size < 1 || size > kMaxNodeRows) throw Error("internal: a node of " + std::to_string(size) + " rows");
    D.block_ptr[n + 1] = D.block_ptr[n] + size * size;
  }
  D.values.resize(static_cast<std::size_t>(D.block_ptr.back()));
  // The first node whose block is not positive definite (the same on any thread count), named after the loop.
  Index failed = count;
#pragma omp parallel reduction(min : failed) if (worth_a_team(static_cast<std::uint64_t>(A.nnz()), kSerialMatrixEntries))
  {
    Eigen::MatrixXd block, inverse;
#pragma omp for schedule(static)
    for (Index n = 0; n < count; ++n) {
      const Index first = D.first_row(n), size = D.node_rows(n);
      gather_block(A, first, size, block);
      Eigen::LLT<Eigen::MatrixXd> cholesky(block);
      // (A NaN on the diagonal passes Eigen's pivot test, x <= 0, unnoticed.)
      if (cholesky.info() != Eigen::Success || !(block.diagonal().array() > 0).all()) {
        failed = std::min(failed, n);
        continue;
      }
      const Eigen::MatrixXd identity = Eigen::MatrixXd::Identity(size, size);
      if (what == BlockInverse::inverse)
        inverse = scale * cholesky.solve(identity);
      else
        inverse = scale * cholesky.matrixL().solve(identity);
      V* out = D.values.data() + D.block_ptr[n];
      for (Index i = 0; i < size; ++i)
        for (Index k = 0; k < size; ++k) out[i * size + k] = static_cast<V>(inverse(i, k));
    }
  }
  if (failed < count)
    throw NumericalError(block_not_positive_definite(first_row + D.first_row(failed), D.node_rows(failed)));
  return D;
}

#define AMGSOLVE_BLOCK_DIAGONAL(V, Value)                                                                          \
  template BlockDiagonal<V> inverse_node_blocks<V, Value>(const CsrMatrix<Value>&, std::shared_ptr<const Array<Index>>, \
                                                          BlockInverse, double, std::int64_t);
AMGSOLVE_BLOCK_DIAGONAL(double, double)
AMGSOLVE_BLOCK_DIAGONAL(float, float)
AMGSOLVE_BLOCK_DIAGONAL(double, float)
#undef AMGSOLVE_BLOCK_DIAGONAL

}  // namespace amgsolve
