#include "amg/mis2_aggregation.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "common/hash.hpp"

namespace amgsolve {
namespace {

// A node's tuple packed into one integer so that "max tuple" is "max integer":
// bits 62-63 state, bits 32-61 hashed priority, bits 0-31 node index (unique tie-break).
using Tuple = std::uint64_t;
enum State : std::uint64_t { kOut = 0, kUndecided = 1, kIn = 2 };

constexpr Tuple make_tuple(State state, std::uint64_t seed, std::int64_t i) {
  const std::uint64_t priority = seeded_hash(seed, static_cast<std::uint64_t>(i)) & 0x3fffffffULL;
  return (static_cast<std::uint64_t>(state) << 62) | (priority << 32) | static_cast<std::uint32_t>(i);
}
constexpr State state_of(Tuple t) { return static_cast<State>(t >> 62); }
constexpr Tuple with_state(Tuple t, State s) { return (t & ~(3ULL << 62)) | (static_cast<std::uint64_t>(s) << 62); }

// out[i] = max(in[i], max over neighbours j of in[j]), for all (own) nodes.
void propagate_max(const StrengthGraph& g, const Array<Tuple>& in, Array<Tuple>& out) {
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < g.nodes; ++i) {
    Tuple m = in[i];
    for (Offset k = g.row_ptr[i]; k < g.row_ptr[i + 1]; ++k) m = std::max(m, in[g.adj[k]]);
    out[i] = m;
  }
}

// The same on the rows a later step can read, those undecided or next to an undecided node (ghosts' states
// are this round's), dropping the others from `live` for good: a state only leaves undecided, so a row
// that is not live never becomes live again (the distributed sweeps, where the 2-hop walk below cannot
// reach the ghosts' neighbours).
void propagate_max_live(const StrengthGraph& g, const Array<Tuple>& in, Array<Index>& live, Array<Tuple>& out) {
  Array<std::uint8_t> keep(live.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t n = 0; n < static_cast<std::int64_t>(live.size()); ++n) {
    const Index i = live[n];
    Tuple m = in[i];
    bool near_undecided = state_of(m) == kUndecided;
    for (Offset k = g.row_ptr[i]; k < g.row_ptr[i + 1]; ++k) {
      const Tuple t = in[g.adj[k]];
      m = std::max(m, t);
      near_undecided = near_undecided || state_of(t) == kUndecided;
    }
    out[i] = m;
    keep[n] = near_undecided;
  }
  std::size_t kept = 0;
  for (std::size_t n = 0; n < live.size(); ++n)
    if (keep[n]) live[kept++] = live[n];
  live.resize(kept);
}

// Maximum tuple within distance 2 of every undecided node (other entries of max2 are left stale); tuple's
// ghosts are filled. While many nodes are undecided, two sweeps over the whole graph are cheapest (with the
// first sweep's ghosts filled in between); once few are left, walking the 2-hop neighbourhood of just those
// nodes is (deg^2 per node instead of 2 deg per node), where the whole graph is here.
void distance2_max(const StrengthGraph& g, const Array<Tuple>& tuple, std::int64_t undecided, const GraphLayout& layout,
                   Array<Index>& live, Array<Tuple>& max1, Array<Tuple>& max2) {
  const bool few = !layout.distributed() && undecided * 8 < g.nodes;
  if (layout.distributed()) {
    propagate_max_live(g, tuple, live, max1);
    layout.fill_ghosts(max1);
  } else if (!few) {
    propagate_max(g, tuple, max1);
  }
#pragma omp parallel for schedule(dynamic, 1024)
  for (Index i = 0; i < g.nodes; ++i) {
    if (state_of(tuple[i]) != kUndecided) continue;
    Tuple m = few ? tuple[i] : max1[i];
    for (Offset k = g.row_ptr[i]; k < g.row_ptr[i + 1]; ++k) {
      const Index j = g.adj[k];
      if (!few) {
        m = std::max(m, max1[j]);
        continue;
      }
      m = std::max(m, tuple[j]);
      for (Offset l = g.row_ptr[j]; l < g.row_ptr[j + 1]; ++l) m = std::max(m, tuple[g.adj[l]]);
    }
    max2[i] = m;
  }
}

}  // namespace

Array<std::uint8_t> mis2(const StrengthGraph& g, std::uint64_t seed, int* rounds, const GraphLayout& layout) {
  const auto with_ghosts = static_cast<std::size_t>(g.nodes) + static_cast<std::size_t>(layout.ghosts());
  Array<Tuple> tuple(with_ghosts);
  const std::int64_t first = layout.first_node();
  Index undecided = 0;
#pragma omp parallel for schedule(static) reduction(+ : undecided)
  for (Index i = 0; i < g.nodes; ++i) {
    const bool isolated = g.degree(i) == 0;
    tuple[i] = make_tuple(isolated ? kOut : kUndecided, seed, first + i);
    undecided += isolated ? 0 : 1;
  }

  Array<Tuple> max1(with_ghosts), max2(static_cast<std::size_t>(g.nodes));
  Array<Index> live;  // the distributed sweeps' rows (propagate_max_live)
  if (layout.distributed())
    for (Index i = 0; i < g.nodes; ++i) live.push_back(i);
  int round = 0;
  for (std::int64_t everywhere = layout.sum(undecided); everywhere > 0; everywhere = layout.sum(undecided)) {
    ++round;
    layout.fill_ghosts(tuple);
    distance2_max(g, tuple, everywhere, layout, live, max1, max2);
    undecided = 0;
#pragma omp parallel for schedule(static) reduction(+ : undecided)
    for (Index i = 0; i < g.nodes; ++i) {
      if (state_of(tuple[i]) != kUndecided) continue;
      if (max2[i] == tuple[i]) {
        tuple[i] = with_state(tuple[i], kIn);
      } else if (state_of(max2[i]) == kIn) {
        tuple[i] = with_state(tuple[i], kOut);
      } else {
        ++undecided;
      }
    }
  }
  if (rounds) *rounds = round;

  Array<std::uint8_t> in_set(static_cast<std::size_t>(g.nodes));
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < g.nodes; ++i) in_set[i] = state_of(tuple[i]) == kIn ? 1 : 0;
  return in_set;
}

Aggregates mis2_aggregation(const StrengthGraph& g, std::uint64_t seed, const GraphLayout& layout) {
  const Array<std::uint8_t> is_root = mis2(g, seed, nullptr, layout);
  const auto with_ghosts = static_cast<std::size_t>(g.nodes) + static_cast<std::size_t>(layout.ghosts());
  Aggregates agg;
  Array<Index> root_id(with_ghosts, kNotAggregated);  // the aggregate of each root, kNotAggregated elsewhere

  // Roots are numbered in global index order, so aggregate ids depend neither on threads nor on ranks.
  Index roots = 0;
  for (Index i = 0; i < g.nodes; ++i) roots += is_root[i];
  Index next = static_cast<Index>(layout.sum_before(roots));
  agg.count = static_cast<Index>(layout.sum(roots));
  for (Index i = 0; i < g.nodes; ++i) {
    if (!is_root[i]) continue;
    root_id[i] = next++;
    agg.root.push_back(static_cast<Index>(layout.first_node() + i));
  }
  layout.fill_ghosts(root_id);

  // Pass 1: neighbours of a root join its aggregate (at most one root is adjacent, see the header).
  Array<Index> first_pass = root_id;
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < g.nodes; ++i) {
    if (is_root[i]) continue;
    for (Offset k = g.row_ptr[i]; k < g.row_ptr[i + 1]; ++k) {
      if (root_id[g.adj[k]] != kNotAggregated) {
        first_pass[i] = root_id[g.adj[k]];
        break;
      }
    }
  }
  layout.fill_ghosts(first_pass);

  // Pass 2: a node still unassigned is at distance 2 from a root; it joins the aggregate that most of
  // its strong neighbours belong to (ties: the smaller aggregate id). Reads only pass-1 results.
  agg.id.assign(first_pass.begin(), first_pass.begin() + g.nodes);
  Index leftovers = 0;
#pragma omp parallel for schedule(static) reduction(+ : leftovers)
  for (Index i = 0; i < g.nodes; ++i) {
    if (first_pass[i] != kNotAggregated || g.degree(i) == 0) continue;
    Index best = kNotAggregated, best_votes = 0;
    for (Offset k = g.row_ptr[i]; k < g.row_ptr[i + 1]; ++k) {
      const Index candidate = first_pass[g.adj[k]];
      if (candidate == kNotAggregated) continue;
      Index votes = 0;
      for (Offset m = g.row_ptr[i]; m < g.row_ptr[i + 1]; ++m) votes += first_pass[g.adj[m]] == candidate ? 1 : 0;
      if (votes > best_votes || (votes == best_votes && candidate < best)) {
        best = candidate;
        best_votes = votes;
      }
    }
    agg.id[i] = best;
    leftovers += best == kNotAggregated ? 1 : 0;
  }
  // Impossible for a maximal MIS-2 of a symmetric graph; a non-symmetric strength graph could cause it.
  if (const std::int64_t everywhere = layout.sum(leftovers); everywhere > 0) {
    throw NumericalError("MIS-2 aggregation left " + std::to_string(everywhere) +
                         " nodes unassigned: the strength graph is not symmetric (is the matrix symmetric?)");
  }
  return agg;
}

void aggregate_left_out_nodes(Aggregates& aggregates, const GraphLayout& layout) {
  const auto nodes = static_cast<Index>(aggregates.id.size());
  const auto left_out = static_cast<Index>(std::count(aggregates.id.begin(), aggregates.id.end(), kNotAggregated));
  Index next = aggregates.count + static_cast<Index>(layout.sum_before(left_out));
  aggregates.count += static_cast<Index>(layout.sum(left_out));
  for (Index i = 0; i < nodes; ++i)
    if (aggregates.id[i] == kNotAggregated) {
      aggregates.id[i] = next++;
      aggregates.root.push_back(static_cast<Index>(layout.first_node() + i));
    }
}

}  // namespace amgsolve
