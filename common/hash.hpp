#pragma once
// Seeded, stateless pseudo-random numbers: value = hash(seed, index). Used wherever an algorithm needs
// "random" choices (MIS-2 priorities, power-iteration start vectors) so that the result depends only on
// the input and the seed, never on the thread count, the schedule or the device.
#include <cstdint>

namespace amgsolve {

// SplitMix64 finaliser (Steele, Lea & Flood 2014): a bijection on 64-bit integers with good avalanche.
constexpr std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

constexpr std::uint64_t seeded_hash(std::uint64_t seed, std::uint64_t index) {
  return mix64(index ^ mix64(seed));
}

// Uniform double in [0, 1) from the top 53 bits of the hash.
constexpr double seeded_uniform(std::uint64_t seed, std::uint64_t index) {
  return static_cast<double>(seeded_hash(seed, index) >> 11) * 0x1.0p-53;
}

}  // namespace amgsolve
