#pragma once
// Bin group 4 of Liu & Vinter 2015 (section 4.1, "the third stage", Figure 2): rows with 33..512 products,
// one thread block per row, expand-sort-compress entirely in shared memory.
//   expand:   the row's products a_ik * b_kj into `kSlots` shared slots (kSlots = 64, 128, 256 or 512, the
//             bin's upper limit), the slots past the row's products padded with kNoColumn;
//   sort:     a basic bitonic sorting network over the kSlots (column, value) pairs, ascending by column;
//             kSlots / 2 threads, one compare-exchange each per step;
//   compress: a block-wide prefix sum over the "first of its column" flags gives each distinct column its
//             position in the row; the thread holding that first entry adds up the run of equal columns
//             behind it and writes the entry to C~.
// The order of the additions within a run is the sorting network's, not the order of the products.
#include <cub/block/block_scan.cuh>

#include "spgemm/cuda/bhsparse/device_views.cuh"

namespace amgsolve::bhsparse {

template <int kSlots>
__host__ __device__ constexpr int esc_threads() {
  return kSlots / 2;
}

// Writes the products of `row` to col / val in the order of A's entries and pads the rest; returns how many
// products the row has (<= kSlots by the bin). Ends with a barrier.
template <int kSlots, class Value>
__device__ int expand_row(const ProductView<Value>& m, Index row, Index* col, Value* val) {
  int written = 0;  // the same in every thread: all walk the same entries of A
  for (Offset p = m.A.begin(row); p < m.A.end(row); ++p) {
    const Index k = m.A.col[p];
    const Value a = m.A.val[p];
    const Offset b_begin = m.B.begin(k);
    const int length = static_cast<int>(m.B.length(k));
    for (int q = threadIdx.x; q < length; q += esc_threads<kSlots>()) {
      col[written + q] = m.B.col[b_begin + q];
      val[written + q] = a * m.B.val[b_begin + q];
    }
    written += length;
  }
  for (int s = written + threadIdx.x; s < kSlots; s += esc_threads<kSlots>()) {
    col[s] = kNoColumn;
    val[s] = Value(0);
  }
  __syncthreads();
  return written;
}

// Batcher's bitonic sort of kSlots pairs by column, ascending; thread t compare-exchanges one pair per step.
// Ends with a barrier.
template <int kSlots, class Value>
__device__ void bitonic_sort(Index* col, Value* val) {
  const int t = threadIdx.x;
  for (int size = 2; size <= kSlots; size *= 2) {    // length of the bitonic sequences being merged
    for (int gap = size / 2; gap > 0; gap /= 2) {    // distance of the compared pairs
      const int low = 2 * gap * (t / gap) + t % gap;  // pairs (low, low + gap) cover [0, kSlots) exactly once
      const int high = low + gap;
      const bool ascending = (low & size) == 0;
      const bool out_of_order = ascending ? col[low] > col[high] : col[low] < col[high];
      if (out_of_order) {
        const Index c = col[low];
        col[low] = col[high];
        col[high] = c;
        const Value v = val[low];
        val[low] = val[high];
        val[high] = v;
      }
      __syncthreads();
    }
  }
}

// All rows of one bin of group 4 (kSlots = esc_slots(bin)), kSlots / 2 threads per block.
template <int kSlots, class Value>
__global__ void __launch_bounds__(kSlots / 2)
    bitonic_esc_rows(ProductView<Value> m, const Index* rows, Offset count, RowOutput<Value> out) {
  constexpr int kThreads = esc_threads<kSlots>();
  constexpr int kSlotsPerThread = kSlots / kThreads;  // 2: thread t owns slots 2t and 2t + 1 in the scan
  using Scan = cub::BlockScan<int, kThreads>;
  __shared__ Index col[kSlots];
  __shared__ Value val[kSlots];
  __shared__ typename Scan::TempStorage scan_storage;

  for (Offset r = blockIdx.x; r < count; r += gridDim.x) {  // the same r in all threads: barriers are safe
    const Index row = rows[r];
    const int products = expand_row<kSlots>(m, row, col, val);
    bitonic_sort<kSlots>(col, val);

    // Compress: flag the first slot of every distinct column (the kNoColumn padding sorts last, unflagged).
    int is_first[kSlotsPerThread], position[kSlotsPerThread];
    for (int i = 0; i < kSlotsPerThread; ++i) {
      const int s = kSlotsPerThread * threadIdx.x + i;
      is_first[i] = s < products && (s == 0 || col[s] != col[s - 1]);
    }
    int distinct = 0;
    Scan(scan_storage).ExclusiveSum(is_first, position, distinct);

    const Offset begin = out.offset[row];
    for (int i = 0; i < kSlotsPerThread; ++i) {
      if (!is_first[i]) continue;
      const int s = kSlotsPerThread * threadIdx.x + i;
      Value sum = val[s];
      for (int next = s + 1; next < products && col[next] == col[s]; ++next) sum += val[next];
      out.col[begin + position[i]] = col[s];
      out.val[begin + position[i]] = sum;
    }
    if (threadIdx.x == 0) out.nnz[row] = distinct;
    __syncthreads();  // the next row overwrites col, val and the scan storage
  }
}

}  // namespace amgsolve::bhsparse
