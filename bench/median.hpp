#pragma once
// The benchmarks' median of repeated runs: the middle value, or the mean of the two middle ones of an even
// count (0 for none).
#include <algorithm>
#include <vector>

namespace amgsolve {

inline double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n == 0 ? 0.0 : 0.5 * (values[(n - 1) / 2] + values[n / 2]);
}

}  // namespace amgsolve
