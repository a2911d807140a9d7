#pragma once
// Bin group 5 of Liu & Vinter 2015 (section 4.1, "the third stage", last paragraphs): rows with more than
// 512 products, one thread block each, built by the merge method of merge_path.cuh with progressive memory.
//
// Input sequences. The products of row i are merged in the order of A's entries: the input sequence is a
// chunk of at most kMergeThreads consecutive entries of one row k of B, scaled by a_ik (sorted and
// duplicate-free because B's rows are), held one entry per thread in registers as in Figure 3.
//
// Progressive space. Every long row starts with 256 entries of C~ (bins.cuh). A launch of merge_long_rows
// ("a round") works on the rows still unfinished, all with the same space `capacity`:
//   * capacity <= kScratchpadEntries: the resulting sequence lives in shared memory for the whole launch
//     (loaded from global memory at the start). When an input sequence would not fit, the block dumps the
//     sequence to its global space, records the checkpoint (that input's position) and stops;
//   * larger: the resulting sequence stays in global memory and the block merges input sequences into a
//     level-1 sequence of kScratchpadEntries in shared memory, merging the level-1 sequence into the global
//     one whenever it is full and once more at the end of the row. When that merge would not fit, the
//     checkpoint is where the level-1 sequence started (its merges are redone next round; the global
//     sequence was not changed).
// The host then gives every overflowed row a new global space of 2 x capacity, and relaunches for those
// rows; the kernel copies the sequence from its old space (section 5.6: "allocates a larger memory block,
// copies the old data to the newly allocated portion, reloads values and continues processing"). A row
// finishes at the latest in the round whose capacity reaches nnz(C_i) <= B.cols, so there are at most
// about log2(B.cols / 256) + 1 rounds.
//
// Deviations from the paper, both of which only save re-allocations: the fit test uses the exact merged
// size (after the duplicate search) instead of the sum of the two lengths, and a launch merges its level-1
// sequence into the global one as often as the level-1 sequence fills, not only once.
#include <thrust/copy.h>
#include <thrust/sequence.h>

#include <deque>
#include <string>

#include "spgemm/cuda/bhsparse/bins.cuh"
#include "spgemm/cuda/bhsparse/merge_path.cuh"

namespace amgsolve::bhsparse {

// Largest resulting sequence held in shared memory: 2048 x 12 bytes (double) plus the new-entry buffer stay
// under the 48 kB of static shared memory a block may use without opting in (4096 would not). 2048 =
// 256 x 2^3, so the scratchpad rounds are those of capacities 256, 512, 1024 and 2048.
constexpr Offset kScratchpadEntries = 2048;
static_assert(kScratchpadEntries >= kMergeThreads, "an input sequence must fit an empty level-1 sequence");

// The state of every long row j (its position in bin 37), kept in device memory between rounds.
template <class Value>
struct LongRowsView {
  const Index* rows;     // the row of C
  Index** sequence_col;  // where its resulting sequence lives now (C~, later a round's buffer)
  Value** sequence_val;
  Offset* length;         // entries of that sequence
  Offset* next_entry;     // checkpoint: position in A of the first entry a_ik not fully merged
  Offset* next_in_b_row;  //             and the first product in B's row k not merged
  int* overflowed;        // set by a round when the row needs twice its space
};

// Where the merge of a row stands; the same in all threads of the block.
struct InputCursor {
  Offset entry;
  Offset in_b_row;
};

// The next input sequence: entries [b_first, b_first + length) of one row of B, times `scale`.
template <class Value>
struct InputChunk {
  Offset b_first;
  int length;
  Value scale;
  bool ends_b_row;
};

// The input sequence at `cursor` (skipping entries of A whose row of B is empty); false at the row's end.
template <class Value>
__device__ bool next_input(const ProductView<Value>& m, Offset entry_end, InputCursor& cursor, InputChunk<Value>& chunk) {
  while (cursor.entry < entry_end && m.products_of_entry(cursor.entry) == 0) ++cursor.entry;
  if (cursor.entry == entry_end) return false;
  const Index k = m.A.col[cursor.entry];
  const Offset remaining = m.B.length(k) - cursor.in_b_row;
  chunk.b_first = m.B.begin(k) + cursor.in_b_row;
  chunk.length = static_cast<int>(smaller<Offset>(kMergeThreads, remaining));
  chunk.scale = m.A.val[cursor.entry];
  chunk.ends_b_row = chunk.length == remaining;
  return true;
}

template <class Value>
__device__ void advance_past(const InputChunk<Value>& chunk, InputCursor& cursor) {
  if (chunk.ends_b_row) {
    ++cursor.entry;
    cursor.in_b_row = 0;
  } else {
    cursor.in_b_row += chunk.length;
  }
}

// This thread's entry of the input sequence (thread t holds entry t).
template <class Value>
__device__ InputEntry<Value> entry_of_thread(const ProductView<Value>& m, const InputChunk<Value>& chunk) {
  const int t = threadIdx.x;
  if (t >= chunk.length) return {false, 0, Value(0)};
  return {true, m.B.col[chunk.b_first + t], chunk.scale * m.B.val[chunk.b_first + t]};
}

// Block-strided copy of a sequence's first `length` entries (no barrier).
template <class Value>
__device__ void copy_sequence(Sequence<Value> from, Sequence<Value> to, Offset length) {
  for (Offset e = threadIdx.x; e < length; e += kMergeThreads) {
    to.col[e] = from.col[e];
    to.val[e] = from.val[e];
  }
}

// One round for long row j: continues its merge from the checkpoint with `capacity` entries of global space
// at `space` (which may be where the sequence already is). `working` is the block's shared sequence.
template <class Value>
__device__ void merge_long_row(const ProductView<Value>& m, const LongRowsView<Value>& state, Index j, Offset capacity,
                               Sequence<Value> space, Sequence<Value> working, const MergeScratch<Value>& scratch,
                               Offset* row_nnz) {
  const Index row = state.rows[j];
  const Offset entry_end = m.A.end(row);
  const bool in_scratchpad = capacity <= kScratchpadEntries;
  const Offset working_capacity = in_scratchpad ? capacity : kScratchpadEntries;

  // Reload what the previous round left (nothing in the first round).
  const Sequence<Value> previous{state.sequence_col[j], state.sequence_val[j]};
  Offset length = state.length[j];  // of the sequence in global memory
  Offset working_length = 0;
  if (in_scratchpad) {
    copy_sequence(previous, working, length);
    working_length = length;
  } else if (previous.col != space.col) {
    copy_sequence(previous, space, length);
  }
  __syncthreads();

  InputCursor cursor{state.next_entry[j], state.next_in_b_row[j]};
  InputCursor level1_start = cursor;  // level-1 mode: the checkpoint if the level-1 sequence cannot be kept
  bool overflowed = false;
  InputChunk<Value> chunk;
  while (next_input(m, entry_end, cursor, chunk)) {
    const Offset merged =
        merge_input_into(working, working_length, working_capacity, entry_of_thread(m, chunk), scratch);
    if (merged != kNoRoom) {
      working_length = merged;
      advance_past(chunk, cursor);
      continue;
    }
    if (in_scratchpad) {  // checkpoint: this input sequence
      overflowed = true;
      break;
    }
    const Offset flushed = merge_sequence_into(space, length, capacity, working, working_length, scratch);
    if (flushed == kNoRoom) {
      overflowed = true;
      cursor = level1_start;
      break;
    }
    length = flushed;
    working_length = 0;
    level1_start = cursor;  // the loop retries this input against the empty level-1 sequence, where it fits
  }
  if (!overflowed && !in_scratchpad) {  // the row is complete: the final merge into global memory
    const Offset flushed = merge_sequence_into(space, length, capacity, working, working_length, scratch);
    if (flushed == kNoRoom) {
      overflowed = true;
      cursor = level1_start;
    } else {
      length = flushed;
    }
  }
  if (in_scratchpad) {  // dump (overflow) or final store (complete)
    copy_sequence(working, space, working_length);
    length = working_length;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    state.sequence_col[j] = space.col;
    state.sequence_val[j] = space.val;
    state.length[j] = length;
    state.next_entry[j] = cursor.entry;
    state.next_in_b_row[j] = cursor.in_b_row;
    state.overflowed[j] = overflowed;
    if (!overflowed) row_nnz[row] = length;
  }
}

// One round over the long rows active[0, active_count). Space: `round` + a * capacity for the a-th active
// row, or, when round.col is null (the first round), where each sequence already is (C~).
template <class Value>
__global__ void __launch_bounds__(kMergeThreads)
    merge_long_rows(ProductView<Value> m, LongRowsView<Value> state, const Index* active, Offset active_count,
                    Offset capacity, Sequence<Value> round, Offset* row_nnz) {
  __shared__ Index working_col[kScratchpadEntries];
  __shared__ Value working_val[kScratchpadEntries];
  __shared__ Index new_col[kMergeThreads];
  __shared__ Value new_val[kMergeThreads];
  __shared__ MergeScan::TempStorage scan_storage;
  const MergeScratch<Value> scratch{new_col, new_val, &scan_storage};

  for (Offset a = blockIdx.x; a < active_count; a += gridDim.x) {  // uniform in the block
    const Index j = active[a];
    const Sequence<Value> space = round.col ? Sequence<Value>{round.col + a * capacity, round.val + a * capacity}
                                            : Sequence<Value>{state.sequence_col[j], state.sequence_val[j]};
    merge_long_row(m, state, j, capacity, space, Sequence<Value>{working_col, working_val}, scratch, row_nnz);
    __syncthreads();  // the next row reuses the shared memory
  }
}

// Before the first round: every long row's sequence is empty, in its 256 entries of C~.
template <class Value>
__global__ void start_long_rows(ProductView<Value> m, LongRowsView<Value> state, Offset count, RowOutput<Value> c_tilde) {
  const Offset stride = static_cast<Offset>(gridDim.x) * blockDim.x;
  for (Offset j = static_cast<Offset>(blockIdx.x) * blockDim.x + threadIdx.x; j < count; j += stride) {
    const Index row = state.rows[j];
    state.sequence_col[j] = c_tilde.col + c_tilde.offset[row];
    state.sequence_val[j] = c_tilde.val + c_tilde.offset[row];
    state.length[j] = 0;
    state.next_entry[j] = m.A.begin(row);
    state.next_in_b_row[j] = 0;
  }
}

struct StillOverflowing {
  const int* overflowed;
  __host__ __device__ bool operator()(Index j) const { return overflowed[j] != 0; }
};

// The rows of bin 37 and the memory their sequences occupy until stage 4 has copied them into C.
template <class Value>
class LongRows {
 public:
  LongRows(const Index* rows, Offset count, TemporaryBytes& tally)
      : rows_(rows), count_(count), sequence_col_(count), sequence_val_(count), length_(count), next_entry_(count),
        next_in_b_row_(count), overflowed_(count) {
    tally.allocated(sequence_col_);
    tally.allocated(sequence_val_);
    tally.allocated(length_);
    tally.allocated(next_entry_);
    tally.allocated(next_in_b_row_);
    tally.allocated(overflowed_);
  }

  Offset count() const { return count_; }

  LongRowsView<Value> view() {
    return {rows_, raw_data(sequence_col_), raw_data(sequence_val_), raw_data(length_), raw_data(next_entry_),
            raw_data(next_in_b_row_), raw_data(overflowed_)};
  }

  // Rounds of merge_long_rows until every row is complete; fills row_nnz of the long rows.
  void compute(const ProductView<Value>& m, const RowOutput<Value>& c_tilde, Index b_cols, Offset* row_nnz,
               TemporaryBytes& tally) {
    if (count_ == 0) return;
    start_long_rows<Value><<<blocks_for(count_, 256), 256>>>(m, view(), count_, c_tilde);
    check_launch();
    DeviceArray<Index> active(static_cast<std::size_t>(count_)), still_active(static_cast<std::size_t>(count_));
    tally.allocated(active);
    tally.allocated(still_active);
    thrust::sequence(active.begin(), active.end());
    Offset active_count = count_;
    for (Offset capacity = kLongRowInitialCapacity; active_count > 0; capacity *= 2) {
      require_progress(capacity, b_cols);
      const Sequence<Value> round = capacity == kLongRowInitialCapacity
                                        ? Sequence<Value>{nullptr, nullptr}
                                        : allocate_round(active_count * capacity, tally);
      merge_long_rows<Value><<<blocks_for(active_count, 1), kMergeThreads>>>(m, view(), raw_data(active), active_count,
                                                                            capacity, round, row_nnz);
      check_launch();
      const auto active_end = active.begin() + active_count;
      active_count = thrust::copy_if(active.begin(), active_end, still_active.begin(),
                                     StillOverflowing{raw_data(overflowed_)}) -
                     still_active.begin();
      active.swap(still_active);
    }
    tally.released(active);
    tally.released(still_active);
  }

 private:
  // A row overflows only while capacity < nnz(C_i) <= B.cols; a round past that means a broken invariant,
  // which must not turn into ever larger allocations.
  static void require_progress(Offset capacity, Index b_cols) {
    if (capacity > kLongRowInitialCapacity && capacity / 2 >= b_cols)
      throw Error("SpGEMM backend 'bhsparse': long rows still overflow with " + std::to_string(capacity / 2) +
                  " entries of space for " + std::to_string(b_cols) + " columns (internal error)");
  }

  Sequence<Value> allocate_round(Offset entries, TemporaryBytes& tally) {
    round_col_.emplace_back(static_cast<std::size_t>(entries));
    round_val_.emplace_back(static_cast<std::size_t>(entries));
    tally.allocated(round_col_.back());
    tally.allocated(round_val_.back());
    return {raw_data(round_col_.back()), raw_data(round_val_.back())};
  }

  const Index* rows_;
  Offset count_;
  DeviceArray<Index*> sequence_col_;
  DeviceArray<Value*> sequence_val_;
  DeviceArray<Offset> length_, next_entry_, next_in_b_row_;
  DeviceArray<int> overflowed_;
  // Every round's space stays allocated: rows that finished in a round keep their sequence there. A deque,
  // because its elements never move when it grows (a moved or copied DeviceArray could free the memory
  // that sequence_col_ / sequence_val_ point into).
  std::deque<DeviceArray<Index>> round_col_;
  std::deque<DeviceArray<Value>> round_val_;
};

}  // namespace amgsolve::bhsparse
