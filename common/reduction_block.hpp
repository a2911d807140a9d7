#pragma once
// The size of the fixed blocks every deterministic reduction sums separately before adding the blocks' sums
// exactly (common/parallel.hpp on the CPU, the block sums of backend/cuda/vector_kernels.cuh on a GPU), and
// the unit in which rows are dealt out to MPI ranks (distributed/partition.hpp). Plain C++17: nvcc reads it.
#include <cstdint>

namespace amgsolve {

inline constexpr std::int64_t kReductionBlock = 8192;

}  // namespace amgsolve
