#pragma once
// Rows (and vector entries) in contiguous blocks over the ranks, each rank's range starting on a multiple of
// kReductionBlock: then a rank's blocks of a deterministic reduction (common/parallel.hpp) are the global
// blocks, and a distributed dot product equals the single-process one bit for bit. The partition is a
// function of the size and the rank count only, so every rank computes every other rank's range without
// asking. A level of fewer than `ranks` blocks leaves the last ranks without rows: the coarse levels
// gather onto the first ranks by construction.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "common/parallel.hpp"

namespace amgsolve {

class BlockPartition {
 public:
  BlockPartition() = default;
  BlockPartition(std::int64_t size, int ranks) : offsets_(static_cast<std::size_t>(ranks) + 1, 0) {
    // Each rank gets blocks / ranks blocks, the first blocks % ranks one more.
    const std::int64_t blocks = (size + kReductionBlock - 1) / kReductionBlock;
    const std::int64_t each = blocks / ranks, extra = blocks % ranks;
    for (int r = 0; r <= ranks; ++r)
      offsets_[static_cast<std::size_t>(r)] = std::min(size, (each * r + std::min<std::int64_t>(r, extra)) * kReductionBlock);
  }

  int ranks() const { return static_cast<int>(offsets_.size()) - 1; }
  std::int64_t size() const { return offsets_.back(); }
  std::int64_t begin(int rank) const { return offsets_[static_cast<std::size_t>(rank)]; }
  std::int64_t end(int rank) const { return offsets_[static_cast<std::size_t>(rank) + 1]; }
  std::int64_t count(int rank) const { return end(rank) - begin(rank); }
  // The rank whose range holds the global index g (0 <= g < size()).
  int owner(std::int64_t g) const {
    return static_cast<int>(std::upper_bound(offsets_.begin(), offsets_.end(), g) - offsets_.begin()) - 1;
  }
  const std::vector<std::int64_t>& offsets() const { return offsets_; }

 private:
  std::vector<std::int64_t> offsets_{0};
};

}  // namespace amgsolve
