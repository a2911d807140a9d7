#pragma once
// OpenMP helpers shared by all CPU kernels.
//
// Reductions are deterministic: the range is cut into fixed blocks (kReductionBlock, a coarse level's
// kAggregateBlock: common/reduction_block.hpp; independent of the thread count), each block is summed
// sequentially, and the block sums are added exactly (ExactSum), so the order in which blocks are combined does
// not matter. The same input therefore gives bit-identical dot products, norms and hence iteration counts on 1
// or N threads, and on any number of ranks whose ranges start on a block boundary (distributed/partition.hpp):
// a rank sums its blocks, the ranks merge the limbs.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "common/exact_sum.hpp"
#include "common/reduction_block.hpp"

namespace amgsolve {

inline int max_threads() { return omp_get_max_threads(); }

// Whether a loop is worth starting the thread team for: a vector loop over more than 8192 entries, a
// sparse-matrix loop over more than 2^17 stored entries (about a megabyte, tens of microseconds on one core).
// Below, the loop takes about what starting and joining the team does, and on a machine whose cores are busy
// with other work the team's closing barrier waits for a descheduled thread: a small system's solve, hundreds
// of iterations of a dozen such loops, ran many times slower on 2 threads than on 1 (docs/BENCHMARKS.md,
// "Small systems on a busy machine"). The results are the same either way: no loop's arithmetic depends on
// its thread count.
inline constexpr std::uint64_t kSerialMatrixEntries = std::uint64_t{1} << 17;
inline constexpr std::uint64_t kSerialVectorEntries = 8192;
inline bool worth_a_team(std::uint64_t n, std::uint64_t serial_limit = kSerialVectorEntries) { return n > serial_limit; }

// The exact sum of the block sums of f(i) over i in [0, n), in blocks of `block` (a coarse level's are
// smaller: common/reduction_block.hpp): what a rank contributes to a global reduction.
template <class F>
ExactSum deterministic_partial_sum(std::int64_t n, F&& f, std::int64_t block = kReductionBlock) {
  const std::int64_t blocks = (n + block - 1) / block;
  std::vector<double> partial(static_cast<std::size_t>(blocks));
#pragma omp parallel for schedule(static) if (blocks > 1 && worth_a_team(static_cast<std::uint64_t>(n)))
  for (std::int64_t b = 0; b < blocks; ++b) {
    const std::int64_t end = std::min(n, (b + 1) * block);
    double s = 0;
    for (std::int64_t i = b * block; i < end; ++i) s += f(i);
    partial[static_cast<std::size_t>(b)] = s;
  }
  ExactSum sum;
  for (double p : partial) sum.add(p);
  return sum;
}

// Sum over i in [0, n) of f(i), reproducible for any thread count.
template <class Real, class F>
Real deterministic_sum(std::int64_t n, F&& f) {
  return static_cast<Real>(deterministic_partial_sum(n, std::forward<F>(f)).value());
}

// Part `block` of [0, n) cut into `blocks` contiguous parts of nearly equal size (OpenMP's static schedule
// with one part per thread, where a loop needs to know its part: to count, then write, what it produced).
struct BlockRange {
  std::int64_t begin, end;
};
inline BlockRange static_block(std::int64_t n, int block, int blocks) {
  return {n * block / blocks, n * (block + 1) / blocks};
}

// The smallest i in [0, n) for which bad(i) holds, or n if none does: all threads search, and the answer is
// the same on any thread count (a check that names the first row it fails on).
template <class Bad>
std::int64_t first_index_where(std::int64_t n, Bad&& bad) {
  std::int64_t first = n;
#pragma omp parallel for schedule(static) reduction(min : first) if (worth_a_team(static_cast<std::uint64_t>(n)))
  for (std::int64_t i = 0; i < n; ++i)
    if (bad(i)) first = std::min(first, i);
  return first;
}

// Whether pred(i) holds for some i in [0, n), answered as soon as one is found: the first rows serially
// (where a check that usually fails, such as a row sum that is not zero, fails at once), then the rest in
// chunks by all threads, each skipping its chunks once any has found one. The same answer on any thread
// count; which i was found is not said.
template <class Pred>
bool any_index_where(std::int64_t n, Pred&& pred) {
  constexpr std::int64_t kChunk = 4096;
  const std::int64_t serial = std::min(n, kChunk);
  for (std::int64_t i = 0; i < serial; ++i)
    if (pred(i)) return true;
  const std::int64_t chunks = (n - serial + kChunk - 1) / kChunk;
  bool found = false;
#pragma omp parallel for schedule(dynamic, 1) if (worth_a_team(static_cast<std::uint64_t>(n - serial)))
  for (std::int64_t c = 0; c < chunks; ++c) {
    bool seen;
#pragma omp atomic read relaxed
    seen = found;
    if (seen) continue;
    const std::int64_t begin = serial + c * kChunk, end = std::min(n, begin + kChunk);
    for (std::int64_t i = begin; i < end; ++i)
      if (pred(i)) {
#pragma omp atomic write relaxed
        found = true;
        break;
      }
  }
  return found;
}

// to = from, converted to To element by element, written by all threads: a large copy's fresh pages are
// faulted in on every core (a serial copy takes them all on one).
template <class To, class From, class ToAllocator, class FromAllocator>
void parallel_convert(const std::vector<From, FromAllocator>& from, std::vector<To, ToAllocator>& to) {
  to.resize(from.size());
  const auto n = static_cast<std::int64_t>(from.size());
#pragma omp parallel for schedule(static) if (worth_a_team(static_cast<std::uint64_t>(n)))
  for (std::int64_t i = 0; i < n; ++i) to[static_cast<std::size_t>(i)] = static_cast<To>(from[static_cast<std::size_t>(i)]);
}

// Exclusive prefix sum in place: a[i] <- a[0] + ... + a[i-1]; returns the total.
template <class T>
T exclusive_scan_inplace(std::vector<T>& a) {
  T running = 0;
  for (auto& x : a) {
    const T v = x;
    x = running;
    running += v;
  }
  return running;
}

}  // namespace amgsolve
