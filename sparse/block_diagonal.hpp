#pragma once
// The node-block diagonal of a matrix whose rows are grouped in nodes (a system's unknowns per mesh point,
// amg/system_setup.hpp): D_b = diag(A_11, ..., A_NN), A_II the block of node I's rows and columns, and its
// inverse block by block. Scaling by D_b^-1 rather than by the pointwise diagonal couples the unknowns of a
// node, as point-block Jacobi does (PETSc's PCPBJACOBI, PyAMG's block_jacobi, AMGCL's Jacobi on block
// values): for elasticity, whose displacements at a point are strongly coupled to each other, it is the
// scaling the smoothers need (docs/BENCHMARKS.md, "Systems").
//
// Each block is factorised by Cholesky in double (A_II is a principal submatrix of an SPD matrix, so SPD
// itself), the inverse or the inverse factor rounded to the value type. Nodes are independent: every loop is
// the same on any thread count.
#include <cstdint>
#include <memory>
#include <utility>

#include "common/allocator.hpp"
#include "sparse/csr.hpp"

namespace amgsolve {

// Rows of the largest node block (amg.block_size's bound and kMaxNearNullspaceVectors').
inline constexpr Index kMaxNodeRows = 64;

template <class V>
struct BlockDiagonal {
  std::shared_ptr<const Array<Index>> node_ptr;  // node n's rows are [node_ptr[n], node_ptr[n + 1])
  Array<Offset> block_ptr = {0};  // node n's block: values[block_ptr[n], block_ptr[n + 1]), row by row
  Vector<V> values;

  Index nodes() const { return static_cast<Index>(node_ptr->size()) - 1; }
  Index rows() const { return node_ptr->back(); }
  Index first_row(Index n) const { return (*node_ptr)[n]; }
  Index node_rows(Index n) const { return (*node_ptr)[n + 1] - (*node_ptr)[n]; }
  std::uint64_t bytes() const { return block_ptr.size() * sizeof(Offset) + values.size() * sizeof(V); }

  // then(i, t_i) for the rows i of node n, with t = c D_n x_n formed for all of them first (so that `then`
  // may overwrite the node's x, the smoothers' in-place update).
  template <class Then>
  void multiply_node(Index n, const V* x, V c, Then&& then) const {
    multiply_block(n, x + first_row(n), c, std::forward<Then>(then));
  }
  // The same with the node's entries of x alone (x_node[0] is its first row's).
  template <class Then>
  void multiply_block(Index n, const V* x_node, V c, Then&& then) const {
    const Index first = first_row(n), size = node_rows(n);
    const V* block = values.data() + block_ptr[n];
    V t[kMaxNodeRows];
    for (Index i = 0; i < size; ++i) {
      V s = 0;
      for (Index k = 0; k < size; ++k) s += block[i * size + k] * x_node[k];
      t[i] = c * s;
    }
    for (Index i = 0; i < size; ++i) then(first + i, t[i]);
  }
};

// What a block of the diagonal holds.
enum class BlockInverse {
  inverse,         // scale A_II^-1 (the smoothers' scaling)
  cholesky_factor  // L_I^-1 with A_II = L_I L_I^T, lower triangular (the symmetric form L^-1 A L^-T of D_b^-1 A)
};

// The inverses of A's node blocks (nodes: at most kMaxNodeRows rows each, covering A's rows), in double and
// rounded to V. A NumericalError naming the node's rows where a block is not positive definite: then neither
// is A (rows counted from first_row: a rank's rows' global numbers).
template <class V, class Value>
BlockDiagonal<V> inverse_node_blocks(const CsrMatrix<Value>& A, std::shared_ptr<const Array<Index>> nodes,
                                     BlockInverse what, double scale = 1.0, std::int64_t first_row = 0);

}  // namespace amgsolve
