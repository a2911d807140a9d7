#pragma once
// Split-3D SpGEMM (A. Azad, G. Ballard, A. Buluc, J. Demmel, L. Grigori, O. Schwartz, S. Toledo, S. Williams,
// "Exploiting multiple levels of parallelism in sparse matrix-matrix multiplication", SIAM J. Sci. Comput.
// 38(6), 2016, section 4.4, Algorithm 2) on a q x q x c process grid, and Sparse SUMMA (section 4.1) as
// its c = 1 case. P(i, j, k) owns rows block i and column slice k of column block j of A, B and C (the
// "split", memory-friendly distribution: nothing is replicated). The steps, each a phase of the stats:
//   1. B redistributed along the fiber P(i, j, :) so that layer k holds the inner rows A's slice k needs;
//   2. q SUMMA stages per layer: A_irk broadcast along the process row, B_rjk along the process column,
//      each pair multiplied locally by this project's `auto` SpGEMM (the paper uses heap SpGEMM for its
//      hypersparse blocks at thousands of ranks; here the blocks are not hypersparse, and heap was 2.5-5x
//      slower than gustavson on the AMG products, docs/BENCHMARKS.md);
//   3. the stages' products merged (multiway merge, section 4.3);
//   4. the partial C all-to-all along the fiber, each process merging the c parts of its slice.
// The blocking parameter b is the whole local inner dimension (one broadcast per stage); blocks are CSR
// over the block's rows (the paper's DCSC matters at thousands of ranks, not here).
#include <mpi.h>

#include <memory>

#include "distributed/spgemm/blocks.hpp"
#include "spgemm/spgemm.hpp"

namespace amgsolve {

// The process grid: q x q x c on the first q^2 c ranks of a communicator; the other ranks are idle.
class Grid3d {
 public:
  // layers: c; q is the largest with q^2 c <= ranks. Collective over comm.
  Grid3d(MPI_Comm comm, int layers);
  ~Grid3d();
  Grid3d(const Grid3d&) = delete;
  Grid3d& operator=(const Grid3d&) = delete;

  int q() const { return q_; }
  int c() const { return c_; }
  bool active() const { return active_; }  // this rank is on the grid
  int i() const { return i_; }
  int j() const { return j_; }
  int k() const { return k_; }
  MPI_Comm process_row() const { return row_; }       // P(i, :, k)
  MPI_Comm process_column() const { return column_; } // P(:, j, k)
  MPI_Comm fiber() const { return fiber_; }           // P(i, j, :)

 private:
  int q_ = 1, c_ = 1, i_ = 0, j_ = 0, k_ = 0;
  bool active_ = false;
  MPI_Comm row_ = MPI_COMM_NULL, column_ = MPI_COMM_NULL, fiber_ = MPI_COMM_NULL;
};

// This rank's ranges of a rows x cols matrix on the grid: rows block i, column slice (j, k).
Range grid_rows(const Grid3d& g, std::int64_t rows, int i);
Range grid_columns(const Grid3d& g, std::int64_t cols, int j, int k);

// C_ijk of C = A B from A_ijk and B_ijk (A is m x l, B is l x n). Phases are added to `stats` with this
// rank's seconds and bytes (the caller reduces them over the ranks).
template <class V>
CsrMatrix<V> split3d_multiply(const Grid3d& g, const CsrMatrix<V>& A_block, const CsrMatrix<V>& B_block,
                              std::int64_t inner, SpgemmStats& stats);

}  // namespace amgsolve
