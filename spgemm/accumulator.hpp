#pragma once
// Shared policy of the dense accumulators (gustavson, magnus): how to list a row's touched columns in
// order once its products are accumulated.
#include <cmath>

#include "sparse/csr.hpp"

namespace amgsolve {

// Sorting the n touched columns costs about n log2 n comparisons; scanning the accumulator's whole
// column range costs one cheap sequential load per column. A row that touches a good part of the
// range (uniform random products, dense rows) is listed faster by the scan; measured on a uniform
// random product with 2^16 columns and 38 k nonzeros per row, the sort took most of gustavson's time.
inline bool scan_beats_sort(Index touched, Index range) {
  return touched > 64 && static_cast<double>(touched) * std::log2(static_cast<double>(touched)) > range;
}

}  // namespace amgsolve
