#pragma once
// Aggregation by a distance-2 maximal independent set (MIS-2).
//
// N. Bell, S. Dalton, L. Olson, "Exposing fine-grained parallelism in algebraic multigrid methods",
// SIAM J. Sci. Comput. 34(4), 2012, section 4 (parallel MIS(k) and aggregation), and
// A. Azad et al., "Exploiting multiple levels of parallelism in sparse matrix-matrix multiplication",
// SIAM J. Sci. Comput. 38(6), 2016, section 5.3, Algorithm 3.
//
// Luby-style MIS-2: every node carries a tuple (state, random, index) with state OUT < UNDECIDED < IN;
// each round takes the maximum tuple over the distance-2 neighbourhood (two max-propagation sweeps);
// an undecided node that is its own distance-2 maximum joins the set, one that sees an IN node within
// distance 2 leaves it. Rounds are synchronous (double-buffered) and the random part is a seeded hash
// of the round and the node's global index, so the set depends only on the graph and the seed, not on
// the thread count, the rank count or the device. As in Luby's algorithm (M. Luby, "A simple parallel
// algorithm for the maximal independent set problem", SIAM J. Comput. 15(4), 1986), the undecided nodes
// draw their priorities afresh every round: with fixed priorities a node waits until every larger undecided
// node within distance 2 has decided, and such chains of waits span many rounds; a fresh draw breaks them,
// so fewer rounds find a set of comparable quality (docs/BENCHMARKS.md).
//
// Aggregates: every root (MIS-2 node) with its strong neighbours forms one aggregate (roots are at
// distance >= 3, so no node neighbours two roots); the remaining nodes are at distance 2 from a root
// and join the aggregate of a neighbour. Nodes with no strong neighbour at all (e.g. rows that are
// dominated by their diagonal) are left out of the coarse space (id -1), as in AMGCL and ML: the
// smoother alone reduces their error.
#include <cstdint>
#include <vector>

#include "amg/strength.hpp"

namespace amgsolve {

inline constexpr Index kNotAggregated = -1;

struct Aggregates {
  Index count = 0;          // number of aggregates (columns of the tentative prolongator)
  Array<Index> id;    // aggregate of each node, or kNotAggregated
  std::vector<Index> root;  // the MIS-2 root of each aggregate (of this rank's, by global node number)
  // How many of root's are MIS-2's (numbered after the ranks before this one's); the others, left-out nodes
  // aggregated alone (aggregate_left_out_nodes), are numbered after every rank's MIS-2 aggregates.
  Index mis2_roots = 0;
};

// Where a graph's nodes are: all in this process (this class), or this rank's block of a graph distributed
// over MPI ranks (amg/mpi/distributed_setup.hpp), whose adjacency also names ghost nodes, numbered after the
// own ones, that other ranks own. The algorithms below read a ghost's tuple after fill_ghosts and count
// and number over all ranks, so every rank finds the set and the aggregates one process finds.
class GraphLayout {
 public:
  virtual ~GraphLayout() = default;
  virtual std::int64_t first_node() const { return 0; }  // the global number of own node 0
  virtual Index ghosts() const { return 0; }
  // values[nodes + k] <- the owner's values[] of ghost k (values holds nodes + ghosts entries).
  virtual void fill_ghosts(Array<std::uint64_t>& /*values*/) const {}
  virtual void fill_ghosts(Array<Index>& /*values*/) const {}
  // The sum of a count over the ranks, and over the ranks before this one.
  virtual std::int64_t sum(std::int64_t count) const { return count; }
  virtual std::int64_t sum_before(std::int64_t /*count*/) const { return 0; }
};

// Distance-2 maximal independent set of the graph's non-isolated nodes: 1 = in the set.
Array<std::uint8_t> mis2(const StrengthGraph& graph, std::uint64_t seed, int* rounds = nullptr,
                         const GraphLayout& layout = GraphLayout{});

// The aggregates, numbered in the global order of their roots (ids of the own nodes; count: all ranks').
Aggregates mis2_aggregation(const StrengthGraph& graph, std::uint64_t seed, const GraphLayout& layout = GraphLayout{});

// Makes every node MIS-2 left out (isolated in the strength graph: all its couplings weak) an aggregate of its
// own (its own root), numbered after the others in node order. A singular matrix needs every node in an
// aggregate, or its nullspace would not reach the coarse levels exactly (amg/nullspace.hpp).
void aggregate_left_out_nodes(Aggregates& aggregates, const GraphLayout& layout = GraphLayout{});

// Through the setup's backend (amg/smoothed_aggregation.hpp): the aggregates of the strength graph, and
// (moved out, for the host: the finest level's aggregates go into the VTK output) every node's aggregate.
inline Aggregates mis2_aggregation(const CpuBackend&, const Strength& strength, std::uint64_t seed) {
  return mis2_aggregation(strength.graph, seed);
}
inline Array<Index> aggregate_ids(const CpuBackend&, Aggregates& aggregates) { return std::move(aggregates.id); }
inline void aggregate_left_out_nodes(const CpuBackend&, Aggregates& aggregates) { aggregate_left_out_nodes(aggregates); }

}  // namespace amgsolve
