#pragma once
// MIS-2 aggregation's second pass (amg/mis2_aggregation.hpp; Bell, Dalton & Olson, SIAM J. Sci. Comput.
// 34(4), 2012, section 4): a node that pass 1 left out (no root beside it, so at distance 2 from one) joins
// the aggregate most of its neighbours joined in pass 1, ties to the smaller id. Shared by the
// CPU's pass (amg/mis2_aggregation.cpp, also over ranks) and the GPU's kernel (amg/cuda/mis2_aggregation.cu),
// so both choose alike by construction.
#include "amg/mis2_aggregation.hpp"
#include "common/host_device.hpp"
#include "sparse/csr.hpp"

namespace amgsolve::mis2_vote {

// The distinct aggregates of a row are counted in one read of it in a list this long (a node of a 27-point
// stencil meets a handful); a row that meets more is counted again per candidate, its cost the row's length
// squared.
inline constexpr int kVoteSlots = 16;

AMGSOLVE_HOST_DEVICE inline bool more_votes(Index candidate, Index votes, Index best, Index best_votes) {
  return votes > best_votes || (votes == best_votes && candidate < best);
}

// The aggregate most of the neighbours adj[begin, end) joined in pass 1 (first_pass), or kNotAggregated.
AMGSOLVE_HOST_DEVICE inline Index most_joined_aggregate(Offset begin, Offset end, const Index* adj,
                                                        const Index* first_pass) {
  Index ids[kVoteSlots], votes[kVoteSlots];
  int distinct = 0;
  bool listed = true;
  for (Offset k = begin; k < end && listed; ++k) {
    const Index candidate = first_pass[adj[k]];
    if (candidate == kNotAggregated) continue;
    int slot = 0;
    while (slot < distinct && ids[slot] != candidate) ++slot;
    if (slot < distinct) {
      ++votes[slot];
    } else if (distinct < kVoteSlots) {
      ids[distinct] = candidate;
      votes[distinct++] = 1;
    } else {
      listed = false;
    }
  }
  Index best = kNotAggregated, best_votes = 0;
  if (listed) {
    for (int slot = 0; slot < distinct; ++slot)
      if (more_votes(ids[slot], votes[slot], best, best_votes)) {
        best = ids[slot];
        best_votes = votes[slot];
      }
    return best;
  }
  for (Offset k = begin; k < end; ++k) {
    const Index candidate = first_pass[adj[k]];
    if (candidate == kNotAggregated) continue;
    Index count = 0;
    for (Offset m = begin; m < end; ++m) count += first_pass[adj[m]] == candidate ? 1 : 0;
    if (more_votes(candidate, count, best, best_votes)) {
      best = candidate;
      best_votes = count;
    }
  }
  return best;
}

}  // namespace amgsolve::mis2_vote
