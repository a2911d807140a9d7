// Aggregation by a distance-2 maximal independent set (MIS-2) on the GPU, the device version of
// amg/mis2_aggregation.cpp and tested against it (tests/test_gpu_setup.cpp):
// N. Bell, S. Dalton, L. Olson, "Exposing fine-grained parallelism in algebraic multigrid methods",
// SIAM J. Sci. Comput. 34(4), 2012, section 4 (parallel MIS(k) and aggregation), and
// A. Azad et al., "Exploiting multiple levels of parallelism in sparse matrix-matrix multiplication",
// SIAM J. Sci. Comput. 38(6), 2016, section 5.3, Algorithm 3.
//
// The result is the CPU's bit for bit, because every step computes the same function of the same data:
//  - tuples: the CPU's own packing and priorities (amg/mis2_tuple.hpp, one __host__ __device__ definition,
//    with the constexpr seeded_hash of common/hash.hpp compiled for the device with --expt-relaxed-constexpr,
//    see amg/CMakeLists.txt); isolated nodes start OUT, all others UNDECIDED; each round from the second
//    gives the undecided nodes their new priorities (Luby's fresh draw) before it propagates;
//  - a round: max1 = max over {i} u N(i) of the round's tuples (kernel 1, all nodes), then for each
//    undecided node max2 = max over {i} u N(i) of max1, i.e. the maximum over {i} u N(i) u N(N(i)), and the
//    CPU's decision: IN if max2 is the node's own tuple, OUT if max2 is IN, else undecided (kernel 2).
//    Kernel 2 reads only max1, a complete snapshot of the round's start written by kernel 1, and writes
//    only its own node's tuple, so a round is synchronous (double-buffered through max1) and its outcome
//    does not depend on thread scheduling. The CPU visits only the rows that can still change (a row
//    whose closed neighbourhood is decided keeps its max1 for good), which takes the same maxima, so the
//    GPU, sweeping every row, finds the same set;
//  - rounds run until no node is undecided (a count after each round), so the round count matches too;
//  - roots are numbered in index order: an exclusive scan of the root flags gives root i the number of
//    roots before it, the CPU's sequential counter;
//  - pass 1: a non-root joins the aggregate of its FIRST root neighbour in adjacency order (the CPU's
//    break), reading only the root numbers; pass 2: an unassigned non-isolated node takes the aggregate
//    most of its neighbours joined in pass 1 (ties: the smaller id), reading only pass 1's output, which
//    is a separate array. Both are one thread per node with the CPU's loops unchanged.
#include <thrust/count.h>
#include <thrust/execution_policy.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/reduce.h>
#include <thrust/scan.h>
#include <thrust/transform.h>

#include <string>

#include "amg/cuda/device_setup.hpp"
#include "amg/cuda/setup.cuh"
#include "amg/gpu_setup.hpp"
#include "common/cuda/check.cuh"
#include "common/device.hpp"
#include "common/error.hpp"
#include "amg/mis2_tuple.hpp"
#include "amg/mis2_vote.hpp"

namespace amgsolve {
namespace {

// ---- the node tuple: amg/mis2_tuple.hpp, the CPU's
using namespace mis2_tuples;

struct IsUndecided {
  __host__ __device__ bool operator()(Tuple t) const { return state_of(t) == kUndecided; }
};

__device__ inline Tuple max_tuple(Tuple a, Tuple b) { return a < b ? b : a; }

// ---- MIS-2 rounds

__global__ void initial_tuples_kernel(Index nodes, const Offset* __restrict__ row_ptr, std::uint64_t seed,
                                      Tuple* __restrict__ tuple) {
  const std::int64_t node = setup_thread_node();
  if (node >= nodes) return;
  const Index i = static_cast<Index>(node);
  const bool isolated = row_ptr[i + 1] == row_ptr[i];
  tuple[i] = make_tuple(isolated ? kOut : kUndecided, seed, i);
}

// Before a round from the second: the undecided nodes' tuples with the round's priorities.
__global__ void draw_priorities_kernel(Index nodes, std::uint64_t seed, Tuple* __restrict__ tuple) {
  const std::int64_t node = setup_thread_node();
  if (node >= nodes) return;
  const Index i = static_cast<Index>(node);
  if (state_of(tuple[i]) == kUndecided) tuple[i] = make_tuple(kUndecided, seed, i);
}

// Kernel 1 of a round: out[i] = max(in[i], max over neighbours j of in[j]), every node.
__global__ void propagate_max_kernel(Index nodes, const Offset* __restrict__ row_ptr, const Index* __restrict__ adj,
                                     const Tuple* __restrict__ in, Tuple* __restrict__ out) {
  const std::int64_t node = setup_thread_node();
  if (node >= nodes) return;
  const Index i = static_cast<Index>(node);
  Tuple m = in[i];
  for (Offset k = row_ptr[i]; k < row_ptr[i + 1]; ++k) m = max_tuple(m, in[adj[k]]);
  out[i] = m;
}

// Kernel 2 of a round: the distance-2 maximum of each undecided node from max1, and its decision. Reads
// max1 (finished by kernel 1) and the node's own tuple; writes only the node's own tuple.
__global__ void decide_kernel(Index nodes, const Offset* __restrict__ row_ptr, const Index* __restrict__ adj,
                              const Tuple* __restrict__ max1, Tuple* __restrict__ tuple) {
  const std::int64_t node = setup_thread_node();
  if (node >= nodes) return;
  const Index i = static_cast<Index>(node);
  const Tuple own = tuple[i];
  if (state_of(own) != kUndecided) return;
  Tuple max2 = max1[i];
  for (Offset k = row_ptr[i]; k < row_ptr[i + 1]; ++k) max2 = max_tuple(max2, max1[adj[k]]);
  if (max2 == own)
    tuple[i] = with_state(own, kIn);
  else if (state_of(max2) == kIn)
    tuple[i] = with_state(own, kOut);
}

__global__ void in_set_kernel(Index nodes, const Tuple* __restrict__ tuple, std::uint8_t* __restrict__ in_set) {
  const std::int64_t node = setup_thread_node();
  if (node >= nodes) return;
  in_set[node] = state_of(tuple[node]) == kIn ? 1 : 0;
}

// ---- aggregates

// rank[i] = 1 for roots, 0 otherwise (scanned into the root numbers afterwards).
__global__ void root_flags_kernel(Index nodes, const std::uint8_t* __restrict__ is_root, Index* __restrict__ rank) {
  const std::int64_t node = setup_thread_node();
  if (node >= nodes) return;
  rank[node] = is_root[node] ? 1 : 0;
}

// Pass 1: roots get their number (and are listed in root[]); other nodes the aggregate of their first root
// neighbour in adjacency order, or kNotAggregated. Reads only is_root and rank.
__global__ void first_pass_kernel(Index nodes, const Offset* __restrict__ row_ptr, const Index* __restrict__ adj,
                                  const std::uint8_t* __restrict__ is_root, const Index* __restrict__ rank,
                                  Index* __restrict__ first_pass, Index* __restrict__ root) {
  const std::int64_t node = setup_thread_node();
  if (node >= nodes) return;
  const Index i = static_cast<Index>(node);
  if (is_root[i]) {
    first_pass[i] = rank[i];
    root[rank[i]] = i;
    return;
  }
  Index id = kNotAggregated;
  for (Offset k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
    if (is_root[adj[k]]) {
      id = rank[adj[k]];
      break;
    }
  }
  first_pass[i] = id;
}

// Pass 2: a non-isolated node left unassigned by pass 1 joins the aggregate that most of its neighbours
// joined in pass 1 (ties: the smaller id), or stays kNotAggregated if none did. Reads only first_pass.
__global__ void second_pass_kernel(Index nodes, const Offset* __restrict__ row_ptr, const Index* __restrict__ adj,
                                   const Index* __restrict__ first_pass, Index* __restrict__ id) {
  const std::int64_t node = setup_thread_node();
  if (node >= nodes) return;
  const Index i = static_cast<Index>(node);
  const Offset begin = row_ptr[i], end = row_ptr[i + 1];
  id[i] = first_pass[i] != kNotAggregated || begin == end
              ? first_pass[i]
              : mis2_vote::most_joined_aggregate(begin, end, adj, first_pass);
}

// A node with neighbours that no aggregate took (the CPU's "leftovers").
struct Unassigned {
  const Offset* row_ptr;
  const Index* id;
  __host__ __device__ bool operator()(Index i) const {
    return id[i] == kNotAggregated && row_ptr[i + 1] != row_ptr[i];
  }
};

// row_ptr and adj consistent and in range: a malformed graph would make the kernels read out of bounds,
// and a device fault spoils the CUDA context of the whole process. Host-side, before anything is copied.
void check_graph(const StrengthGraph& g, const std::string& what) {
  bool valid = g.nodes >= 0 && g.row_ptr.size() == static_cast<std::size_t>(g.nodes) + 1 && g.row_ptr[0] == 0 &&
               static_cast<std::size_t>(g.row_ptr.back()) == g.adj.size();
  for (Index i = 0; valid && i < g.nodes; ++i) valid = g.row_ptr[i] <= g.row_ptr[i + 1];
  for (std::size_t k = 0; valid && k < g.adj.size(); ++k) valid = g.adj[k] >= 0 && g.adj[k] < g.nodes;
  if (!valid) throw InputError(what + ": malformed strength graph (row_ptr or adj out of range)");
}

}  // namespace

DeviceArray<std::uint8_t> device_mis2(const DeviceStrengthGraph& g, std::uint64_t seed, int* rounds) {
  const Index n = g.nodes;
  DeviceArray<std::uint8_t> in_set(static_cast<std::size_t>(n));
  if (rounds) *rounds = 0;
  if (n == 0) return in_set;
  const Offset* row_ptr = raw_data(g.row_ptr);
  const Index* adj = raw_data(g.adj);

  DeviceArray<Tuple> tuple(static_cast<std::size_t>(n)), max1(static_cast<std::size_t>(n));
  initial_tuples_kernel<<<setup_blocks(n), kSetupBlock>>>(n, row_ptr, round_seed(seed, 1), raw_data(tuple));
  AMGSOLVE_CUDA_CHECK_LAUNCH();
  auto undecided = thrust::count_if(thrust::device, tuple.begin(), tuple.end(), IsUndecided{});
  int round = 0;
  while (undecided > 0) {
    // Every round decides at least the undecided node with the largest tuple, so n rounds always suffice.
    if (round >= n) throw Error("MIS-2 on the GPU made no progress after " + std::to_string(round) + " rounds");
    ++round;
    if (round > 1) {
      draw_priorities_kernel<<<setup_blocks(n), kSetupBlock>>>(n, round_seed(seed, round), raw_data(tuple));
      AMGSOLVE_CUDA_CHECK_LAUNCH();
    }
    propagate_max_kernel<<<setup_blocks(n), kSetupBlock>>>(n, row_ptr, adj, raw_data(tuple), raw_data(max1));
    AMGSOLVE_CUDA_CHECK_LAUNCH();
    decide_kernel<<<setup_blocks(n), kSetupBlock>>>(n, row_ptr, adj, raw_data(max1), raw_data(tuple));
    AMGSOLVE_CUDA_CHECK_LAUNCH();
    undecided = thrust::count_if(thrust::device, tuple.begin(), tuple.end(), IsUndecided{});
  }
  if (rounds) *rounds = round;

  in_set_kernel<<<setup_blocks(n), kSetupBlock>>>(n, raw_data(tuple), raw_data(in_set));
  AMGSOLVE_CUDA_CHECK_LAUNCH();
  return in_set;
}

DeviceAggregates device_mis2_aggregation(const DeviceStrengthGraph& g, std::uint64_t seed) {
  const Index n = g.nodes;
  DeviceAggregates agg;
  agg.id.resize(static_cast<std::size_t>(n));
  if (n == 0) return agg;
  const Offset* row_ptr = raw_data(g.row_ptr);
  const Index* adj = raw_data(g.adj);
  const DeviceArray<std::uint8_t> is_root = device_mis2(g, seed);

  // Root numbers in index order: rank = exclusive scan of the root flags, with one extra entry (flag 0)
  // whose scanned value is the number of roots.
  DeviceArray<Index> rank(static_cast<std::size_t>(n) + 1);
  root_flags_kernel<<<setup_blocks(n), kSetupBlock>>>(n, raw_data(is_root), raw_data(rank));
  AMGSOLVE_CUDA_CHECK_LAUNCH();
  AMGSOLVE_CUDA_CHECK(cudaMemset(raw_data(rank) + n, 0, sizeof(Index)));
  thrust::exclusive_scan(thrust::device, rank.begin(), rank.end(), rank.begin());
  AMGSOLVE_CUDA_CHECK(cudaMemcpy(&agg.count, raw_data(rank) + n, sizeof(Index), cudaMemcpyDeviceToHost));
  agg.mis2_roots = agg.count;
  agg.root.resize(static_cast<std::size_t>(agg.count));

  DeviceArray<Index> first_pass(static_cast<std::size_t>(n));
  first_pass_kernel<<<setup_blocks(n), kSetupBlock>>>(n, row_ptr, adj, raw_data(is_root), raw_data(rank),
                                                      raw_data(first_pass), raw_data(agg.root));
  AMGSOLVE_CUDA_CHECK_LAUNCH();
  second_pass_kernel<<<setup_blocks(n), kSetupBlock>>>(n, row_ptr, adj, raw_data(first_pass), raw_data(agg.id));
  AMGSOLVE_CUDA_CHECK_LAUNCH();

  const auto leftovers = thrust::count_if(thrust::device, thrust::counting_iterator<Index>(0),
                                          thrust::counting_iterator<Index>(n), Unassigned{row_ptr, raw_data(agg.id)});
  if (leftovers > 0) {
    // The CPU's error, word for word (amg/mis2_aggregation.cpp).
    throw NumericalError("MIS-2 aggregation left " + std::to_string(leftovers) +
                         " nodes unassigned: the strength graph is not symmetric (is the matrix symmetric?)");
  }
  return agg;
}

// ---- host entry points (amg/gpu_setup.hpp)

Array<std::uint8_t> gpu_mis2(const StrengthGraph& graph, std::uint64_t seed, int* rounds) {
  const std::string what = "MIS-2 on the GPU";
  require_gpu(what);
  check_graph(graph, what);
  return rethrow_as_error(what, [&] {
    Array<std::uint8_t> in_set;
    download(device_mis2(to_device(graph), seed, rounds), in_set);
    return in_set;
  });
}

Aggregates gpu_mis2_aggregation(const StrengthGraph& graph, std::uint64_t seed) {
  const std::string what = "MIS-2 aggregation on the GPU";
  require_gpu(what);
  check_graph(graph, what);
  return rethrow_as_error(what, [&] { return to_host(device_mis2_aggregation(to_device(graph), seed)); });
}

// ---- the cuda backend's step (amg/cuda/device_setup.hpp)

CudaAggregates mis2_aggregation(const CudaBackend&, const CudaStrength& strength, std::uint64_t seed) {
  return rethrow_as_error("MIS-2 aggregation on the GPU", [&] {
    auto aggregates = std::make_shared<const DeviceAggregates>(device_mis2_aggregation(strength.device->graph, seed));
    return CudaAggregates{aggregates, aggregates->count};
  });
}

namespace {

struct LeftOut {
  __device__ Index operator()(Index id) const { return id == kNotAggregated ? 1 : 0; }
};

// The left-out nodes numbered after the MIS-2 aggregates in node order (the CPU's order): count + the
// exclusive scan of the left-out flags.
__global__ void number_left_out_kernel(Index nodes, Index count, const Index* __restrict__ order,
                                       Index* __restrict__ id, Index* __restrict__ root) {
  const std::int64_t node = setup_thread_node();
  if (node >= nodes || id[node] != kNotAggregated) return;
  id[node] = count + order[node];
  root[count + order[node]] = static_cast<Index>(node);
}

}  // namespace

void aggregate_left_out_nodes(const CudaBackend& backend, CudaAggregates& aggregates) {
  rethrow_as_error("aggregating the left-out nodes on the GPU", [&] {
    const DeviceAggregates& from = *aggregates.device;
    const Index n = static_cast<Index>(from.id.size());
    if (n == 0) return;
    DeviceArray<Index> order(static_cast<std::size_t>(n));
    thrust::transform(thrust::device, from.id.begin(), from.id.end(), order.begin(), LeftOut{});
    const Index left_out = thrust::reduce(thrust::device, order.begin(), order.end(), Index{0});
    backend.count_to_host(sizeof(Index));
    if (left_out == 0) return;
    thrust::exclusive_scan(thrust::device, order.begin(), order.end(), order.begin());
    auto to = std::make_shared<DeviceAggregates>();
    to->count = from.count + left_out;
    to->mis2_roots = from.mis2_roots;
    to->id = from.id;
    to->root = DeviceArray<Index>(static_cast<std::size_t>(to->count));
    if (from.count > 0)
      AMGSOLVE_CUDA_CHECK(cudaMemcpy(raw_data(to->root), raw_data(from.root), sizeof(Index) * from.count,
                                     cudaMemcpyDeviceToDevice));
    number_left_out_kernel<<<setup_blocks(n), kSetupBlock>>>(n, from.count, raw_data(order), raw_data(to->id),
                                                             raw_data(to->root));
    AMGSOLVE_CUDA_CHECK_LAUNCH();
    const Index count = to->count;
    aggregates = CudaAggregates{std::move(to), count};  // releases `from`
  });
}

Array<Index> aggregate_ids(const CudaBackend& backend, CudaAggregates& aggregates) {
  Array<Index> ids;
  rethrow_as_error("copying the aggregates from the GPU", [&] { download(aggregates.device->id, ids); });
  backend.count_to_host(sizeof(Index) * ids.size());
  return ids;
}

}  // namespace amgsolve
