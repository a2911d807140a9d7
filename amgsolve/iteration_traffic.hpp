#pragma once
// The memory traffic one iteration of the solve must move at the least: every level's matrices in CSR as
// often as the V-cycle multiplies with them (smoothing, residual, restriction, prolongation), the vectors
// each pass reads and writes, the coarse solve, and the outer iteration's own product and vector updates
// in double. Each matrix and vector is counted once per pass, as if every reused entry came from cache
// (the code-balance model of Kreutzer et al., ../shared/papers/pjds-kreutzer-2011.txt, section IV.B, on
// the CPU). Divided by the STREAM triad bandwidth it is the time one iteration cannot beat; the measured
// time over it says how close the solve is to the memory-bandwidth bound (bench/amgcl-compare.py).
#include <cstdint>
#include <vector>

#include "amg/hierarchy.hpp"
#include "amg/params.hpp"
#include "solver/solve_result.hpp"

namespace amgsolve {

// levels: the hierarchy's level table (rows, nnz, and P's nnz in prolongator_product); cycle_value_bytes:
// 4 for a float V-cycle (mixed precision), 8 for double.
std::uint64_t model_bytes_per_iteration(const std::vector<LevelInfo>& levels, const AmgParams& amg,
                                        const SolverParams& solver, int cycle_value_bytes);

}  // namespace amgsolve
