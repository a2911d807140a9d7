#pragma once
// The distributed SpGEMM algorithms as SpGEMM backends of the registry (amg.spgemm, --compare-spgemm):
//   rowwise   distributed/spgemm/rowwise.hpp (fetch the B rows A references; gustavson locally)
//   summa2d   Sparse SUMMA on a q x q grid (split3d.hpp with c = 1)
//   split3d   Split-3D on a q x q x c grid, c from AMGSOLVE_SPLIT3D_LAYERS (default: the c >= 2 that puts
//             the most ranks on the grid, the smaller on a tie)
// The distributed setup (backend/mpi/mpi_backend.hpp) calls multiply_rows: A and B distributed by rows, C
// returned by rows; summa2d and split3d move the operands onto their grid and C back (phases "to the grid"
// and "to the rows"). As registry backends (SpgemmBackend::multiply) they take the whole A and B that every
// rank holds (each rank cuts out its part: no communication), and give every rank the whole C ("gather C"):
// how --compare-spgemm and spgemm-bench run them. A rank count that does not fill the grid leaves the last
// ranks idle, as the stats' `choice` says. Every rank must call them together.
#include "distributed/communicator.hpp"
#include "distributed/distributed_matrix.hpp"
#include "distributed/spgemm/rowwise.hpp"
#include "spgemm/registry.hpp"

namespace amgsolve {

// Adds rowwise, summa2d and split3d to the registry (once; later calls do nothing).
void register_distributed_spgemm_backends(SpgemmRegistry& registry = SpgemmRegistry::instance());

// C = A B, A and B distributed by rows (A's column partition B's row partition), C by A's rows, with any
// SpGEMM backend of the cpu: a local one multiplies after the B rows this rank's A references are fetched
// (rowwise_multiply_numbered, on A's own local numbering and compact columns), rowwise is that with
// gustavson, summa2d and split3d run their grids. Collective; `stats` holds the ranks' phases (the slowest
// rank's seconds, everybody's bytes), products and nnz.
template <class V>
DistributedMatrix<V> multiply_rows(const DistributedMatrix<V>& A, const DistributedMatrix<V>& B,
                                   const SpgemmBackend& spgemm, SpgemmStats& stats);

// C = A B formed again by the numeric phase alone, for operands with new values on the patterns of a kept
// rowwise product (distributed/spgemm/rowwise.hpp: only B's values fetched, C in the kept layout), as
// gustavson sums it. Collective; `stats` as above.
template <class V>
DistributedMatrix<V> multiply_rows_into(const DistributedMatrix<V>& A, const DistributedMatrix<V>& B,
                                        const RowwisePattern<V>& pattern, SpgemmStats& stats);

}  // namespace amgsolve
