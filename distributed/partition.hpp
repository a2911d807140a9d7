#pragma once
// Rows (and vector entries) in contiguous blocks over the ranks, each rank's range starting on a multiple of
// kReductionBlock: then a rank's blocks of a deterministic reduction (common/parallel.hpp) are the global
// blocks, and a distributed dot product equals the single-process one bit for bit. The partition is a
// function of the size and the rank count (and the unit) only, so every rank computes every other rank's
// range without asking. A size of fewer than `ranks` units leaves the last ranks without rows. (The AMG
// setup cuts its coarse levels in smaller units, where their aggregates fall: coarse_partition in
// amg/mpi/distributed_setup.hpp.)
//
// A matrix carries its partitions (distributed/distributed_matrix.hpp), and what is derived from it takes
// them from it (a product: A's rows, B's columns; a transpose: the two swapped), so a partition may also be
// any ranges (from_offsets): a system's rows owned node by node, whose ranges end between nodes.
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "common/parallel.hpp"

namespace amgsolve {

class BlockPartition {
 public:
  BlockPartition() = default;
  // In whole units of `unit` entries: kReductionBlock rows, a system's node_partition_unit (below), or a
  // coarse level's kAggregateBlock aggregates (common/reduction_block.hpp).
  BlockPartition(std::int64_t size, int ranks, std::int64_t unit = kReductionBlock)
      : offsets_(static_cast<std::size_t>(ranks) + 1, 0) {
    // Each rank gets units / ranks units, the first units % ranks one more.
    const std::int64_t units = (size + unit - 1) / unit;
    const std::int64_t each = units / ranks, extra = units % ranks;
    for (int r = 0; r <= ranks; ++r)
      offsets_[static_cast<std::size_t>(r)] = std::min(size, (each * r + std::min<std::int64_t>(r, extra)) * unit);
  }
  // Rank r's range [offsets[r], offsets[r + 1]): offsets from 0, never decreasing.
  static BlockPartition from_offsets(std::vector<std::int64_t> offsets) {
    BlockPartition p;
    p.offsets_ = std::move(offsets);
    return p;
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
  bool operator==(const BlockPartition&) const = default;

 private:
  std::vector<std::int64_t> offsets_{0};
};

// The unit of a system's finest partition, whose nodes have block_size rows: kReductionBlock nodes, so that
// the rows' reductions (PCG's, in blocks of kReductionBlock rows) and the nodes' (a system's Lanczos
// estimate, amg/system_spectral_radius.hpp) both fall in whole blocks on every rank.
inline std::int64_t node_partition_unit(int block_size) { return kReductionBlock * block_size; }

}  // namespace amgsolve
