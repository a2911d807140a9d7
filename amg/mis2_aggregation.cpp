#include "amg/mis2_aggregation.hpp"

#include <algorithm>
#include <numeric>
#include <utility>
#include <vector>

#include "amg/mis2_tuple.hpp"
#include "amg/mis2_vote.hpp"
#include "common/error.hpp"
#include "common/parallel.hpp"

namespace amgsolve {
namespace {

using namespace mis2_tuples;

// Calls visit(entry) for every entry of `list` in parallel and keeps, in order, the entries for which it
// returns true. Each thread compacts its static block in place; then the blocks are moved down in order, each
// onto space that earlier blocks have left (so the list comes out the same for any thread count).
template <class Visit>
void visit_and_compact(Array<Index>& list, Visit&& visit) {
  const auto n = static_cast<std::int64_t>(list.size());
  std::vector<std::int64_t> block_begin(static_cast<std::size_t>(max_threads()) + 1, n), kept(block_begin.size(), 0);
  int team = 1;
#pragma omp parallel
  {
    const int t = omp_get_thread_num(), threads = omp_get_num_threads();
    if (t == 0) team = threads;
    const auto [begin, end] = static_block(n, t, threads);
    std::int64_t out = begin;
    for (std::int64_t e = begin; e < end; ++e)
      if (visit(list[e])) list[out++] = list[e];
    block_begin[t] = begin;
    kept[t] = out - begin;
  }
  std::int64_t total = kept[0];
  for (int t = 1; t < team; ++t) {
    if (total < block_begin[t])  // else the block is where it belongs (std::copy must not start on its source)
      std::copy(list.begin() + block_begin[t], list.begin() + block_begin[t] + kept[t], list.begin() + total);
    total += kept[t];
  }
  list.resize(static_cast<std::size_t>(total));
}

// One round's maximum over the closed neighbourhood, max1[i] = max(tuple[i], tuple[j] for neighbours j), on
// the rows still live: those undecided or next to an undecided node (ghosts' tuples are this round's). The
// others drop out of `live` for good: states only leave undecided and only undecided tuples are drawn
// again, so such a row's maximum is final.
void propagate_max_live(const StrengthGraph& g, const Array<Tuple>& tuple, Array<Index>& live, Array<Tuple>& max1) {
  visit_and_compact(live, [&](Index i) {
    Tuple m = tuple[i];
    bool near_undecided = state_of(m) == kUndecided;
    for (Offset k = g.row_ptr[i]; k < g.row_ptr[i + 1]; ++k) {
      const Tuple t = tuple[g.adj[k]];
      m = std::max(m, t);
      near_undecided = near_undecided || state_of(t) == kUndecided;
    }
    max1[i] = m;
    return near_undecided;
  });
}

// Each undecided node takes the maximum of max1 over its closed neighbourhood (the maximum tuple within
// distance 2) and joins the set if that is its own tuple, or leaves if it is a member's; the others stay in
// `undecided`. Reads max1 and writes only the node's own tuple, so the round stays synchronous.
void decide(const StrengthGraph& g, const Array<Tuple>& max1, Array<Index>& undecided, Array<Tuple>& tuple) {
  visit_and_compact(undecided, [&](Index i) {
    Tuple m = max1[i];
    for (Offset k = g.row_ptr[i]; k < g.row_ptr[i + 1]; ++k) m = std::max(m, max1[g.adj[k]]);
    if (m == tuple[i]) {
      tuple[i] = with_state(tuple[i], kIn);
      return false;
    }
    if (state_of(m) == kIn) {
      tuple[i] = with_state(tuple[i], kOut);
      return false;
    }
    return true;
  });
}

// The undecided nodes' tuples with this round's priorities (Luby's fresh draw; decided nodes keep theirs:
// their state alone decides how they compare).
void draw_priorities(const Array<Index>& undecided, std::uint64_t seed, std::int64_t first, Array<Tuple>& tuple) {
  const auto n = static_cast<std::int64_t>(undecided.size());
#pragma omp parallel for schedule(static) if (worth_a_team(static_cast<std::uint64_t>(n), kSerialVectorEntries))
  for (std::int64_t u = 0; u < n; ++u) tuple[undecided[u]] = make_tuple(kUndecided, seed, first + undecided[u]);
}

// The aggregate of each root (numbered in global index order, so that aggregate ids depend neither on threads
// nor on ranks), kNotAggregated elsewhere, ghosts' filled; the roots' global numbers and counts into `agg`.
// Each block of nodes counts its roots, then numbers them from the count of the blocks before it.
Array<Index> numbered_roots(const Array<std::uint8_t>& is_root, const GraphLayout& layout, Aggregates& agg) {
  const auto nodes = static_cast<std::int64_t>(is_root.size());
  const int blocks = worth_a_team(static_cast<std::uint64_t>(nodes)) ? max_threads() : 1;
  std::vector<Index> roots_before(static_cast<std::size_t>(blocks) + 1, 0);
#pragma omp parallel for schedule(static) if (blocks > 1)
  for (int b = 0; b < blocks; ++b) {
    const auto [begin, end] = static_block(nodes, b, blocks);
    roots_before[static_cast<std::size_t>(b) + 1] =
        static_cast<Index>(std::count(is_root.begin() + begin, is_root.begin() + end, 1));
  }
  std::partial_sum(roots_before.begin(), roots_before.end(), roots_before.begin());
  const Index roots = roots_before.back();
  const auto first_id = static_cast<Index>(layout.sum_before(roots));
  agg.count = static_cast<Index>(layout.sum(roots));
  agg.mis2_roots = roots;
  agg.root.resize(static_cast<std::size_t>(roots));

  Array<Index> root_id(static_cast<std::size_t>(nodes) + static_cast<std::size_t>(layout.ghosts()));
  std::fill(root_id.begin() + nodes, root_id.end(), kNotAggregated);  // the ghosts', until filled
#pragma omp parallel for schedule(static) if (blocks > 1)
  for (int b = 0; b < blocks; ++b) {
    const auto [begin, end] = static_block(nodes, b, blocks);
    Index next = roots_before[static_cast<std::size_t>(b)];
    for (std::int64_t i = begin; i < end; ++i) {
      root_id[i] = is_root[i] ? first_id + next : kNotAggregated;
      if (is_root[i]) agg.root[static_cast<std::size_t>(next++)] = static_cast<Index>(layout.first_node() + i);
    }
  }
  layout.fill_ghosts(root_id);
  return root_id;
}

}  // namespace

Array<std::uint8_t> mis2(const StrengthGraph& g, std::uint64_t seed, int* rounds, const GraphLayout& layout) {
  const auto with_ghosts = static_cast<std::size_t>(g.nodes) + static_cast<std::size_t>(layout.ghosts());
  Array<Tuple> tuple(with_ghosts);
  const std::int64_t first = layout.first_node();
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < g.nodes; ++i)
    tuple[i] = make_tuple(g.degree(i) == 0 ? kOut : kUndecided, round_seed(seed, 1), first + i);

  // Each round's work is on these lists only: the nodes still undecided and the rows whose maximum one of
  // them may read. Both shrink within a few rounds, so a round costs far less than a sweep of every row
  // (docs/BENCHMARKS.md, "The setup's MIS-2 on live lists").
  Array<Index> live(static_cast<std::size_t>(g.nodes)), undecided(static_cast<std::size_t>(g.nodes));
#pragma omp parallel for schedule(static) if (worth_a_team(static_cast<std::uint64_t>(g.nodes)))
  for (Index i = 0; i < g.nodes; ++i) live[i] = undecided[i] = i;
  visit_and_compact(undecided, [&](Index i) { return g.degree(i) > 0; });

  Array<Tuple> max1(with_ghosts);
  int round = 0;
  for (std::int64_t everywhere = layout.sum(static_cast<std::int64_t>(undecided.size())); everywhere > 0;
       everywhere = layout.sum(static_cast<std::int64_t>(undecided.size()))) {
    ++round;
    if (round > 1) draw_priorities(undecided, round_seed(seed, round), first, tuple);
    layout.fill_ghosts(tuple);
    propagate_max_live(g, tuple, live, max1);
    layout.fill_ghosts(max1);
    decide(g, max1, undecided, tuple);
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
  const Array<Index> root_id = numbered_roots(is_root, layout, agg);  // of each root, kNotAggregated elsewhere

  // Pass 1: neighbours of a root join its aggregate (at most one root is adjacent, see the header).
  Array<Index> first_pass(with_ghosts);
  std::fill(first_pass.begin() + g.nodes, first_pass.end(), kNotAggregated);  // the ghosts', until filled
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < g.nodes; ++i) {
    first_pass[i] = root_id[i];
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
  agg.id.resize(static_cast<std::size_t>(g.nodes));
  Index leftovers = 0;
#pragma omp parallel for schedule(static) reduction(+ : leftovers)
  for (Index i = 0; i < g.nodes; ++i) {
    agg.id[i] = first_pass[i];
    if (first_pass[i] != kNotAggregated || g.degree(i) == 0) continue;
    agg.id[i] = mis2_vote::most_joined_aggregate(g.row_ptr[i], g.row_ptr[i + 1], g.adj.data(), first_pass.data());
    leftovers += agg.id[i] == kNotAggregated ? 1 : 0;
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
