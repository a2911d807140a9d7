#pragma once
// The distributed SpGEMM algorithms as SpGEMM backends of the registry (amg.spgemm, --compare-spgemm):
//   rowwise   distributed/spgemm/rowwise.hpp (fetch the B rows A references; gustavson locally)
//   summa2d   Sparse SUMMA on a q x q grid (split3d.hpp with c = 1)
//   split3d   Split-3D on a q x q x c grid, c from AMGSOLVE_SPLIT3D_LAYERS (default: the c >= 2 that puts
//             the most ranks on the grid, the smaller on a tie)
// They take the whole A and B that every rank holds while the setup is replicated (each rank cuts out its
// part: no communication), run the algorithm over MPI_COMM_WORLD, and give every rank the whole C (the
// "gather C" phase, which a distributed setup will not need). A rank count that does not fill the grid
// leaves the last ranks idle, as the stats' `choice` says. Every rank must call them together.
#include "spgemm/registry.hpp"

namespace amgsolve {

// Adds rowwise, summa2d and split3d to the registry (once; later calls do nothing).
void register_distributed_spgemm_backends(SpgemmRegistry& registry = SpgemmRegistry::instance());

}  // namespace amgsolve
