#pragma once
// MIS-2's node tuple (state, priority, index) packed into one integer so that "max tuple" is "max integer",
// shared by the CPU's rounds (amg/mis2_aggregation.cpp, also over ranks) and the GPU's kernels
// (amg/cuda/mis2_aggregation.cu), so both draw the same priorities and decide alike by construction.
// Bits 62-63 hold the state, bits 32-61 the hashed priority, bits 0-31 the node's index (a unique tie-break).
// Round r's priorities come from seeded_hash(round_seed(level seed, r), global index): Luby's fresh draw.
#include <cstdint>

#include "common/hash.hpp"
#include "common/host_device.hpp"

namespace amgsolve::mis2_tuples {

using Tuple = std::uint64_t;
enum State : std::uint64_t { kOut = 0, kUndecided = 1, kIn = 2 };

AMGSOLVE_HOST_DEVICE constexpr Tuple make_tuple(State state, std::uint64_t seed, std::int64_t i) {
  const std::uint64_t priority = seeded_hash(seed, static_cast<std::uint64_t>(i)) & 0x3fffffffULL;
  return (static_cast<std::uint64_t>(state) << 62) | (priority << 32) | static_cast<std::uint32_t>(i);
}
AMGSOLVE_HOST_DEVICE constexpr State state_of(Tuple t) { return static_cast<State>(t >> 62); }
AMGSOLVE_HOST_DEVICE constexpr Tuple with_state(Tuple t, State s) {
  return (t & ~(3ULL << 62)) | (static_cast<std::uint64_t>(s) << 62);
}
// The seed of round `round`'s priorities (rounds count from 1).
AMGSOLVE_HOST_DEVICE constexpr std::uint64_t round_seed(std::uint64_t seed, int round) {
  return seeded_hash(seed, static_cast<std::uint64_t>(round));
}

// The packing orders by state first, then priority, then index.
static_assert(make_tuple(kIn, 0, 0) > make_tuple(kUndecided, 0, 0x7fffffff));
static_assert(make_tuple(kUndecided, 0, 0) > make_tuple(kOut, 0, 0x7fffffff));
static_assert(with_state(make_tuple(kUndecided, 5, 77), kIn) == make_tuple(kIn, 5, 77));

}  // namespace amgsolve::mis2_tuples
