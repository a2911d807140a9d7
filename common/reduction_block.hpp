#pragma once
// The size of the fixed blocks every deterministic reduction sums separately before adding the blocks' sums
// exactly (common/parallel.hpp on the CPU, the block sums of backend/cuda/vector_kernels.cuh on a GPU), and
// the unit in which rows are dealt out to MPI ranks (distributed/partition.hpp). Plain C++17: nvcc reads it.
#include <cstdint>

namespace amgsolve {

// The finest level's: its rows' blocks, and the unit of its rows on the ranks.
inline constexpr std::int64_t kReductionBlock = 8192;

// A coarse level's: its rows are the aggregates of the level above (a system's, their nodes), and it is cut
// into blocks of this many aggregates, which are also the unit its rows go to the ranks in. Small, so that a
// rank's part of a coarse level can follow where its fine rows' aggregates fall and a small level still
// spreads evenly (amg/mpi/distributed_setup.hpp, coarse_partition); the setup's estimates on a coarse level
// sum in these blocks, on one process as on ranks.
inline constexpr std::int64_t kAggregateBlock = 256;

// The reduction block of a scalar problem's level `level` (0: the finest).
inline constexpr std::int64_t level_reduction_block(int level) { return level == 0 ? kReductionBlock : kAggregateBlock; }

}  // namespace amgsolve
