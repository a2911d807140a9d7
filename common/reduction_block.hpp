#pragma once
// The sizes of the fixed blocks every deterministic reduction sums separately before adding the blocks' sums
// exactly (common/parallel.hpp on the CPU, the block sums of backend/cuda/vector_kernels.cuh on a GPU), which
// are also the units in which a level's rows are dealt out to MPI ranks (distributed/partition.hpp, and
// coarse_partition for the coarse levels): the finest level's and a coarse level's. Plain C++17: nvcc reads
// it.
#include <cstdint>

namespace amgsolve {

// The finest level's: its rows' blocks, and the unit of its rows on the ranks (a system's: this many nodes).
// Small enough that a rank's share is even to a few percent (a million rows on 16 ranks: 30 or 31 blocks
// each; blocks of 8192 gave 7 or 8, and split elasticity's 60,000 nodes 55 : 45 on 2 ranks);
// large enough that the exact adds of the blocks' sums stay small beside a pass over the vector, also where
// a rank's GPU sends them to the host (backend/cuda/cuda_backend.cu: 8,192 sums a dot for 16 M rows).
inline constexpr std::int64_t kReductionBlock = 2048;

// A coarse level's: its rows are the aggregates of the level above (a system's, their nodes), and it is cut
// into blocks of this many aggregates, which are also the unit its rows go to the ranks in. Small, so that a
// rank's part of a coarse level can follow where its fine rows' aggregates fall and a small level still
// spreads evenly (amg/mpi/distributed_setup.hpp, coarse_partition); the setup's estimates on a coarse level
// sum in these blocks, on one process as on ranks.
inline constexpr std::int64_t kAggregateBlock = 64;

// The reduction block of a scalar problem's level `level` (0: the finest).
inline constexpr std::int64_t level_reduction_block(int level) { return level == 0 ? kReductionBlock : kAggregateBlock; }

}  // namespace amgsolve
