#pragma once
// OpenMP helpers shared by all CPU kernels.
//
// Reductions are deterministic: the range is cut into fixed blocks (independent of the thread count),
// each block is summed sequentially, and the block sums are added in block order. The same input
// therefore gives bit-identical dot products, norms and hence iteration counts on 1 or N threads.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace amgsolve {

inline constexpr std::int64_t kReductionBlock = 8192;

inline int max_threads() { return omp_get_max_threads(); }

// Sum over i in [0, n) of f(i), reproducible for any thread count.
template <class Real, class F>
Real deterministic_sum(std::int64_t n, F&& f) {
  const std::int64_t blocks = (n + kReductionBlock - 1) / kReductionBlock;
  if (blocks <= 1) {
    Real s = 0;
    for (std::int64_t i = 0; i < n; ++i) s += f(i);
    return s;
  }
  std::vector<Real> partial(static_cast<std::size_t>(blocks));
#pragma omp parallel for schedule(static)
  for (std::int64_t b = 0; b < blocks; ++b) {
    const std::int64_t end = std::min(n, (b + 1) * kReductionBlock);
    Real s = 0;
    for (std::int64_t i = b * kReductionBlock; i < end; ++i) s += f(i);
    partial[static_cast<std::size_t>(b)] = s;
  }
  Real s = 0;
  for (Real p : partial) s += p;
  return s;
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
