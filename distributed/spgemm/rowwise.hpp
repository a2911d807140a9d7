#pragma once
// Row-wise distributed SpGEMM, the way hypre (hypre_ParCSRMatMat) and PETSc (MatMatMult for MPIAIJ) form
// C = A B: A and B are distributed by rows (distributed/partition.hpp); each rank fetches the rows of B
// that its rows of A reference on other ranks, in one all-to-all, and multiplies its rows locally with any
// local SpGEMM backend. Only B moves. Each row of C is formed from the same products in the same order as
// on one process (A's rows keep their order, the fetched rows theirs), so with the same local backend the
// result is the single-process product bit for bit.
#include "distributed/communicator.hpp"
#include "spgemm/spgemm.hpp"

namespace amgsolve {

// This rank's rows of C = A B (columns numbered globally). A_rows: this rank's rows of A (global columns,
// A.cols = the inner dimension); B_rows: this rank's rows of B by BlockPartition(inner, ranks). Phases go
// to `stats` with this rank's seconds and bytes.
template <class V>
CsrMatrix<V> rowwise_multiply(const Communicator& comm, const CsrMatrix<V>& A_rows, const CsrMatrix<V>& B_rows,
                              const SpgemmBackend& local, SpgemmStats& stats);

// The same with A's columns in local numbers, as a DistributedMatrix holds them: this rank's inner indices
// (its range of BlockPartition(inner, ranks)) first, then `ghosts`, the other inner indices A references,
// sorted. No renumbering, no copy of A.
// B_rows is taken over: the fetched rows are appended to it. With `pattern` (C's rows as an earlier product
// on the same patterns left them) the local product is the numeric phase into it, not `local`.
template <class V>
CsrMatrix<V> rowwise_multiply_local(const Communicator& comm, const CsrMatrix<V>& A_local,
                                    const std::vector<std::int64_t>& ghosts, std::int64_t inner, CsrMatrix<V> B_rows,
                                    const SpgemmBackend& local, SpgemmStats& stats,
                                    const CsrMatrix<V>* pattern = nullptr);

}  // namespace amgsolve
