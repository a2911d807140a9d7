#pragma once
// Rows [first, last) of a matrix: what one MPI rank assembles of a distributed problem.
#include <cstdint>

namespace amgsolve {

struct RowRange {
  std::int64_t first = 0, last = 0;
  bool contains(std::int64_t row) const { return row >= first && row < last; }
};

}  // namespace amgsolve
