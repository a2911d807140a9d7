#pragma once
// The first phases of the smoothed-aggregation setup on the GPU, device-resident: strength of connection
// (amg/cuda/strength.cu), MIS-2 aggregation (amg/cuda/mis2_aggregation.cu) and the tentative prolongator
// (amg/cuda/tentative_prolongation.cu). Each is the device twin of the CPU code of the same name in amg/ and
// gives bit-identical results (tests/test_gpu_setup.cpp), so a hierarchy built on the GPU equals the CPU one.
//
// The functions here take and return device arrays; no host <-> device copies happen inside them except
// single counts (nnz, number of undecided nodes) that size the next step. They report CUDA failures as
// amgsolve::Error (AMGSOLVE_CUDA_CHECK) and let Thrust's exceptions through; callers wrap them in
// rethrow_as_error (common/cuda/check.cuh), as the host entry points of amg/gpu_setup.hpp do.
// Header for .cu files only.
#include <cstdint>

#include "amg/mis2_aggregation.hpp"
#include "amg/strength.hpp"
#include "common/cuda/device_array.cuh"
#include "sparse/cuda/device_csr.cuh"

namespace amgsolve {

// ---- device twins of StrengthGraph, Strength and Aggregates (same fields, same meaning)

struct DeviceStrengthGraph {
  Index nodes = 0;
  DeviceArray<Offset> row_ptr;  // nodes + 1 entries
  DeviceArray<Index> adj;
};

struct DeviceStrength {
  DeviceStrengthGraph graph;
  DeviceArray<std::uint8_t> keep;  // per stored entry of A: 1 diagonal or strong, 0 weak
  Offset weak_entries = 0;
};

struct DeviceAggregates {
  Index count = 0;
  Index mis2_roots = 0;     // Aggregates::mis2_roots: the first count's, before the left-out nodes
  DeviceArray<Index> id;    // per node: aggregate, or kNotAggregated
  DeviceArray<Index> root;  // per aggregate: its MIS-2 root
};

// ---- the phases

// strength_of_connection (amg/strength.hpp) on the device. A must be square (its diagonal is read).
template <class Value>
DeviceStrength device_strength_of_connection(const DeviceCsr<Value>& A, double theta);

// mis2 (amg/mis2_aggregation.hpp) on the device: 1 = in the distance-2 independent set.
DeviceArray<std::uint8_t> device_mis2(const DeviceStrengthGraph& graph, std::uint64_t seed, int* rounds = nullptr);

// mis2_aggregation on the device; throws NumericalError, as the CPU does, when nodes stay unassigned.
DeviceAggregates device_mis2_aggregation(const DeviceStrengthGraph& graph, std::uint64_t seed);

// tentative_prolongation (amg/tentative_prolongation.hpp) on the device: nodes x count, one entry per
// aggregated node, from the level's weights (null: all 1), summed into coarse_weights (count entries).
// The ids must lie in [0, count) or be kNotAggregated.
template <class Value>
DeviceCsr<Value> device_tentative_prolongation(const DeviceAggregates& aggregates, const double* weights,
                                              double* coarse_weights);

// ---- host <-> device copies of the graph and the aggregates

inline DeviceStrengthGraph to_device(const StrengthGraph& g) {
  DeviceStrengthGraph d;
  d.nodes = g.nodes;
  d.row_ptr = upload(g.row_ptr);
  d.adj = upload(g.adj);
  return d;
}

inline StrengthGraph to_host(const DeviceStrengthGraph& d) {
  StrengthGraph g;
  g.nodes = d.nodes;
  download(d.row_ptr, g.row_ptr);
  download(d.adj, g.adj);
  return g;
}

inline DeviceAggregates to_device(const Aggregates& a) {
  DeviceAggregates d;
  d.count = a.count;
  d.mis2_roots = a.mis2_roots;
  d.id = upload(a.id);
  d.root = upload(a.root);
  return d;
}

inline Aggregates to_host(const DeviceAggregates& d) {
  Aggregates a;
  a.count = d.count;
  a.mis2_roots = d.mis2_roots;
  download(d.id, a.id);
  download(d.root, a.root);
  return a;
}

// ---- launch shape shared by the setup kernels: one thread per node (or row), blocks of kSetupBlock

inline constexpr int kSetupBlock = 256;

inline unsigned setup_blocks(Index nodes) {
  return static_cast<unsigned>((static_cast<std::int64_t>(nodes) + kSetupBlock - 1) / kSetupBlock);
}

// This thread's node; compare with the node count before use (the last block has idle threads).
__device__ inline std::int64_t setup_thread_node() {
  return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

}  // namespace amgsolve
