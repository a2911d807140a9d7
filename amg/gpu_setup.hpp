#pragma once
// The first phases of the smoothed-aggregation setup on the GPU, callable from plain C++: each function
// copies its input to the device, runs the device version (amg/cuda/*.cu, device-resident interface in
// amg/cuda/setup.cuh) and copies the result back. The results are bit-identical to the CPU functions of the
// same name without the gpu_ prefix (same seeded hash, same tie-breaking), so a hierarchy built on the GPU
// equals the one built on the CPU; tests/test_gpu_setup.cpp checks exactly that. These entry points exist
// for testing the kernels against the CPU; the device-resident setup chains the device versions directly.
// Without CUDA, or without a device, they throw amgsolve::Error saying why (gpu_status() tells first).
#include <cstdint>

#include "amg/mis2_aggregation.hpp"
#include "amg/strength.hpp"
#include "sparse/csr.hpp"

namespace amgsolve {

// strength_of_connection (amg/strength.hpp) on the GPU. Throws InputError for a non-square A.
template <class Value>
Strength gpu_strength_of_connection(const CsrMatrix<Value>& A, double theta);

// mis2 (amg/mis2_aggregation.hpp) on the GPU: the same set and the same number of rounds.
Array<std::uint8_t> gpu_mis2(const StrengthGraph& graph, std::uint64_t seed, int* rounds = nullptr);

// mis2_aggregation on the GPU: the same aggregate of every node, the same numbering, the same roots.
Aggregates gpu_mis2_aggregation(const StrengthGraph& graph, std::uint64_t seed);

// tentative_prolongation (amg/tentative_prolongation.hpp) on the GPU. Throws InputError for an id outside
// [0, count) other than kNotAggregated.
template <class Value>
CsrMatrix<Value> gpu_tentative_prolongation(const Aggregates& aggregates);

}  // namespace amgsolve
