#pragma once
// Submatrices as the distributed SpGEMM algorithms move them: cut out of a matrix by row and column ranges,
// packed into flat buffers for a broadcast or an all-to-all, put side by side, and summed by a multiway
// merge (Azad et al. 2016, section 4.3: the rank-b updates and the fiber's partial results are merged row
// by row, repeated indices added in the order of the lists). A block is a CsrMatrix with local row and
// column numbers; its place in the whole matrix is kept by the caller.
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "sparse/csr.hpp"

namespace amgsolve {

// [begin, end) of part `part` when `size` is cut into `parts` nearly equal ranges.
struct Range {
  std::int64_t begin = 0, end = 0;
  std::int64_t size() const { return end - begin; }
};
Range even_range(std::int64_t size, int parts, int part);
// Part `part` of `range` cut into `parts`.
Range even_subrange(Range range, int parts, int part);

// The entries of M in rows [rows) and columns [columns), renumbered from 0.
template <class V>
CsrMatrix<V> cut_block(const CsrMatrix<V>& M, Range rows, Range columns);

// Blocks with the same rows and consecutive column ranges, put side by side (widths: their column counts).
template <class V>
CsrMatrix<V> join_columns(const std::vector<CsrMatrix<V>>& blocks);

// Blocks with the same columns, one below the other; or below M, in place.
template <class V>
CsrMatrix<V> stack_rows(const std::vector<CsrMatrix<V>>& blocks, Index cols);
template <class V>
void append_rows(const std::vector<CsrMatrix<V>>& blocks, CsrMatrix<V>& M);

// Blocks with the same rows whose columns, shifted by offsets[l], come in the blocks' order (each block's
// after the previous one's): each row of the result is the blocks' rows one after the other.
template <class V>
CsrMatrix<V> concatenate_rows(const std::vector<CsrMatrix<V>>& blocks, const std::vector<Index>& offsets, Index cols);

// The sum of blocks of one shape; each row's entries merged by column, equal columns added in list order.
template <class V>
CsrMatrix<V> merge_sum(const std::vector<CsrMatrix<V>>& blocks);

// A block as three buffers and back: what a broadcast or an all-to-all carries.
template <class V>
struct PackedBlocks {
  std::vector<std::int64_t> header;  // per block: rows, cols, nnz
  std::vector<Offset> row_ptr;
  std::vector<Index> col;
  std::vector<V> val;

  void add(const CsrMatrix<V>& M);
  std::vector<CsrMatrix<V>> unpack() const;
  std::uint64_t bytes() const {
    return header.size() * 8 + row_ptr.size() * sizeof(Offset) + col.size() * sizeof(Index) + val.size() * sizeof(V);
  }
};

// Collectives on blocks; each returns the bytes this rank sent.
// The root's block to every rank of comm.
template <class V>
std::uint64_t broadcast_block(CsrMatrix<V>& block, int root, MPI_Comm comm);
// send[r] to rank r of comm; received[r] from rank r.
template <class V>
std::uint64_t all_to_all_blocks(const std::vector<CsrMatrix<V>>& send, std::vector<CsrMatrix<V>>& received, MPI_Comm comm);
// Every rank's blocks, on every rank, in rank order.
template <class V>
std::uint64_t all_gather_blocks(const std::vector<CsrMatrix<V>>& mine, std::vector<CsrMatrix<V>>& all, MPI_Comm comm);

}  // namespace amgsolve
