#pragma once
// The block-wide merge operations of bin group 5 (Liu & Vinter 2015, section 4.1, "the third stage",
// Figure 3), on sorted, duplicate-free sequences of (column, value) pairs. One thread block owns one row of
// C; the row grows by merging one *input sequence* at a time into the *resulting sequence*:
//   (1) each input entry binary-searches its column in the resulting sequence; a hit is a duplicate,
//       whose value is fused (added) into the resulting entry;
//   (2) a block-wide prefix sum over the non-duplicate flags gives each new entry its rank, and the total
//       tells whether the merged sequence fits the space the row has (else nothing is changed and the
//       caller re-allocates: see long_rows.cuh);
//   (3) the new entries are compacted, in rank order, next to the resulting sequence;
//   (4) the two sorted sequences are merged with GPU merge path (O. Green, R. McColl, D. A. Bader, "GPU
//       merge path", ICS 2012), the merge section 4.2 of the paper selects.
// The merge of step (4) runs in place, from the back, in tiles of kMergeTile outputs: the resulting
// sequence a's buffer has room for the merged one and the new entries b lie elsewhere. The tile of outputs
// [s, e) consumes a[i, i') and b[j, j') with i + j = s and i' + j' = e; what is left to merge afterwards,
// a[0, i) and b[0, j), lies below s (i <= s) or outside a's buffer, and the tile's own inputs lie below e
// (i' <= e), where the tiles written before it (all at e and above) never reach. Each thread loads its outputs into
// registers before the block writes the tile, so a tile may overwrite its own inputs.
//
// The same steps merge a long row's shared-memory level-1 sequence into its global resulting sequence
// (merge_sequence_into); the pointers are generic, so either sequence may be in shared or global memory.
// Every function here is called by all threads of the block in uniform control flow (it contains barriers).
#include <cub/block/block_scan.cuh>

#include "spgemm/cuda/bhsparse/device_views.cuh"

namespace amgsolve::bhsparse {

constexpr int kMergeThreads = 256;  // threads per long row; also the longest input sequence (one chunk)
constexpr int kMergeItemsPerThread = 8;
constexpr Offset kMergeTile = Offset(kMergeThreads) * kMergeItemsPerThread;  // outputs per in-place tile
constexpr Offset kNoRoom = -1;  // "the merged sequence would not fit": nothing was changed

using MergeScan = cub::BlockScan<int, kMergeThreads>;

// A sorted, duplicate-free sequence of (column, value) pairs, anywhere in memory.
template <class Value>
struct Sequence {
  Index* col;
  Value* val;
};

// One entry of an input sequence, held in a thread's registers (thread t holds entry t).
template <class Value>
struct InputEntry {
  bool present;
  Index col;
  Value val;
};

// Shared memory the merge steps need besides the sequences themselves.
template <class Value>
struct MergeScratch {
  Index* new_col;  // kMergeThreads slots for step (3)
  Value* new_val;
  MergeScan::TempStorage* scan;
};

// Merge path split: how many of a's entries are among the first `diagonal` outputs of merging a and b,
// where a's entry goes first exactly when its column is smaller (a and b share no column here, so the tie
// rule never applies, but it must match the serial merge in merge_in_place_from_the_back).
__device__ inline Offset merge_path_split(const Index* a, Offset a_length, const Index* b, Offset b_length,
                                          Offset diagonal) {
  Offset low = diagonal > b_length ? diagonal - b_length : 0;
  Offset high = smaller(diagonal, a_length);
  while (low < high) {
    const Offset middle = low + (high - low) / 2;  // middle < a_length, diagonal - 1 - middle in [0, b_length)
    if (a[middle] < b[diagonal - 1 - middle])
      low = middle + 1;
    else
      high = middle;
  }
  return low;
}

// a[0, a_length + b_length) <- merge of a[0, a_length) and b[0, b_length); b must not overlap a's buffer.
template <class Value>
__device__ void merge_in_place_from_the_back(Sequence<Value> a, Offset a_length, const Index* b_col,
                                             const Value* b_val, Offset b_length) {
  for (Offset tile_end = a_length + b_length; tile_end > 0;) {
    const Offset tile_begin = tile_end > kMergeTile ? tile_end - kMergeTile : 0;
    const Offset first = tile_begin + Offset(threadIdx.x) * kMergeItemsPerThread;  // this thread's outputs
    Index col[kMergeItemsPerThread];
    Value val[kMergeItemsPerThread];
    int count = 0;
    if (first < tile_end) {
      Offset i = merge_path_split(a.col, a_length, b_col, b_length, first);
      Offset j = first - i;
      count = static_cast<int>(smaller<Offset>(kMergeItemsPerThread, tile_end - first));
#pragma unroll
      for (int v = 0; v < kMergeItemsPerThread; ++v) {
        if (v >= count) break;
        const bool take_a = j >= b_length || (i < a_length && a.col[i] < b_col[j]);
        if (take_a) {
          col[v] = a.col[i];
          val[v] = a.val[i];
          ++i;
        } else {
          col[v] = b_col[j];
          val[v] = b_val[j];
          ++j;
        }
      }
    }
    __syncthreads();  // every input of this tile is in registers before any output overwrites it
#pragma unroll
    for (int v = 0; v < kMergeItemsPerThread; ++v) {
      if (v >= count) break;
      a.col[first + v] = col[v];
      a.val[first + v] = val[v];
    }
    __syncthreads();  // the next tile's splits read what lies below this one
    tile_end = tile_begin;
  }
}

// Steps (1)-(4) for one input sequence of at most kMergeThreads entries: merges it into seq[0, length),
// whose buffer holds `capacity` entries. Returns the merged length, or kNoRoom (seq unchanged).
template <class Value>
__device__ Offset merge_input_into(Sequence<Value> seq, Offset length, Offset capacity, const InputEntry<Value>& in,
                                   const MergeScratch<Value>& scratch) {
  const Offset position = in.present ? lower_bound_column(seq.col, length, in.col) : 0;
  const bool duplicate = in.present && position < length && seq.col[position] == in.col;
  const int is_new = in.present && !duplicate;
  int rank = 0, new_entries = 0;
  MergeScan(*scratch.scan).ExclusiveSum(is_new, rank, new_entries);
  if (length + new_entries > capacity) {
    __syncthreads();  // the scan storage is reused by the caller's next step
    return kNoRoom;
  }
  if (duplicate) seq.val[position] += in.val;  // distinct input columns: one writer per position
  if (is_new) {
    scratch.new_col[rank] = in.col;
    scratch.new_val[rank] = in.val;
  }
  __syncthreads();
  if (new_entries > 0) merge_in_place_from_the_back(seq, length, scratch.new_col, scratch.new_val, new_entries);
  __syncthreads();  // also orders the scan storage's reuse when nothing was merged
  return length + new_entries;
}

// The same steps for a whole sequence `part` (any length, e.g. a long row's level-1 sequence in shared
// memory): merges part[0, part_length) into seq[0, length) of `capacity` entries. `part` is consumed (its
// new entries are compacted to its front). Returns the merged length, or kNoRoom (seq and part unchanged).
template <class Value>
__device__ Offset merge_sequence_into(Sequence<Value> seq, Offset length, Offset capacity, Sequence<Value> part,
                                      Offset part_length, const MergeScratch<Value>& scratch) {
  // Count part's columns that seq lacks, to decide before changing anything.
  int mine = 0;
  for (Offset p = threadIdx.x; p < part_length; p += kMergeThreads) {
    const Offset position = lower_bound_column(seq.col, length, part.col[p]);
    mine += !(position < length && seq.col[position] == part.col[p]);
  }
  int ignored = 0, new_entries = 0;
  MergeScan(*scratch.scan).ExclusiveSum(mine, ignored, new_entries);
  __syncthreads();
  if (length + new_entries > capacity) return kNoRoom;

  // Fuse duplicates into seq; compact the new entries to part's front in order (stable and in place: an
  // entry moves to a position no later than its own, and later blocks of part are read after this one).
  Offset compacted = 0;  // the same in every thread
  for (Offset base = 0; base < part_length; base += kMergeThreads) {
    const Offset p = base + threadIdx.x;
    InputEntry<Value> in{p < part_length, 0, Value(0)};
    bool is_new = false;
    if (in.present) {
      in.col = part.col[p];
      in.val = part.val[p];
      const Offset position = lower_bound_column(seq.col, length, in.col);
      if (position < length && seq.col[position] == in.col)
        seq.val[position] += in.val;
      else
        is_new = true;
    }
    int rank = 0, block_new = 0;
    MergeScan(*scratch.scan).ExclusiveSum(static_cast<int>(is_new), rank, block_new);
    __syncthreads();  // this block of part is read before it is overwritten
    if (is_new) {
      part.col[compacted + rank] = in.col;
      part.val[compacted + rank] = in.val;
    }
    compacted += block_new;
    __syncthreads();
  }
  if (new_entries > 0) merge_in_place_from_the_back(seq, length, part.col, part.val, new_entries);
  return length + new_entries;
}

}  // namespace amgsolve::bhsparse
