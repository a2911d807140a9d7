#pragma once
// ELLPACK-R sparse storage (F. Vázquez, J. J. Fernández, E. M. Garzón, "A new approach for sparse matrix
// vector product on NVIDIA GPUs", Concurrency Computat.: Pract. Exper. 23, 2011; as described in
// M. Kreutzer et al., "Sparse matrix-vector multiplication on GPGPU clusters: a new storage format and a
// scalable implementation", IPDPSW 2012 (../shared/papers/pjds-kreutzer-2011.txt), section II, Listing 1).
//
// Every row is shifted left and the N x width rectangle (width = longest row) is stored column by column,
// so thread i of a warp reads element j of row i at val[j * padded_rows + i]: consecutive threads touch
// consecutive addresses. row_length[i] stops each thread at its own row's end. Rows are padded to a
// multiple of the warp size. This is the CPU reference the CUDA kernels are tested against.
#include "sparse/csr.hpp"

namespace amgsolve {

// rows rounded up to a multiple of `multiple` (the warp size, pJDS's block_rows); an Error when that no
// longer fits the 32-bit row index of the padded formats.
Index padded_row_count(Index rows, Index multiple);

template <class Value>
struct EllpackR {
  Index rows = 0, cols = 0;
  Index padded_rows = 0;  // rows rounded up to a multiple of the warp size
  Index width = 0;        // longest row
  Array<Index> row_length;  // padded_rows entries (0 for padding rows)
  Array<Index> col;         // width * padded_rows, column-major; padding entries point at column 0
  Array<Value> val;         // same layout; padding entries are 0

  std::uint64_t bytes() const {
    return row_length.size() * sizeof(Index) + col.size() * sizeof(Index) + val.size() * sizeof(Value);
  }
};

template <class Value>
EllpackR<Value> ellpack_r_from_csr(const CsrMatrix<Value>& A, Index warp = 32);

template <class Value>
CsrMatrix<Value> csr_from_ellpack_r(const EllpackR<Value>& E);

// y = E x (Listing 1 of the paper), OpenMP over rows.
template <class Value>
void spmv(const EllpackR<Value>& E, const Vector<Value>& x, Vector<Value>& y);

}  // namespace amgsolve
