#pragma once
// Device side of MulLimited(G, B) (Gremse et al. 2015, section 2.2, Fig. 2.2, Listing 1): C = G B for a
// left factor G with at most W nonzeros per row, one output row per sub-warp of W threads. Lane l of the
// sub-warp that owns row i of G follows the row of B that the l-th entry of row i selects, scaled by that
// entry, and holds the column at its front (a sentinel above every column once the row is used up). Every step
// of the merge makes one output entry: the sub-warp min of the fronts is its column, the sub-warp sum
// of the scaled values at that column its value, and the lanes holding that column move on. B's rows are
// sorted and unique, so C's rows come out sorted and unique.
//
// The symbolic kernel (count_row_lengths) runs the same merge without values and writes row lengths;
// the numeric kernel (fill_rows) writes columns and values at the offsets the prefix sum made of them.
// The host side, and the splitting of a general A into such factors (section 2.3), is in rmerge.cu.
#include <cuda_runtime.h>

#include <limits>

#include "sparse/csr.hpp"

namespace amgsolve {
namespace rmerge {

// Section 2.2: thread blocks of 128 threads, laid out as W x (128 / W): threadIdx.x is the lane within
// the sub-warp, threadIdx.y the sub-warp within the block.
inline constexpr int kBlockThreads = 128;

// The front column of a lane with nothing (left) to merge: above every column index (columns are
// < B.cols <= the largest Index), so the sub-warp min sees it only when every lane is done.
inline constexpr Index kExhausted = std::numeric_limits<Index>::max();

// A left factor of the splitting A = A_k G_(k-1) ... G_1 (section 2.3). Row i holds the entries
// row_ptr[i] .. row_ptr[i + 1] - 1; entry e selects row column(e) of the right operand with weight(e).
// A and G_1 hold A's own columns and values. Every later factor holds ones, and its entry e is in column
// e: row i of A_(r+1) sums the consecutive rows of G_r ... G_1 B that row i of A_r was cut into, and G_r
// keeps A_r's entries in order. So nothing but their row offsets is stored: col and val are null.
template <class Value>
struct LeftFactor {
  Index rows = 0;
  const Offset* row_ptr = nullptr;
  const Index* col = nullptr;  // null: entry e is in column e
  const Value* val = nullptr;  // null: every entry is one

  __device__ Index column(Offset entry) const { return col ? col[entry] : static_cast<Index>(entry); }
  __device__ Value weight(Offset entry) const { return val ? val[entry] : Value(1); }
};

// The right operand of MulLimited: B, or an intermediate product G_r ... G_1 B.
template <class Value>
struct RightRows {
  const Offset* row_ptr = nullptr;
  const Index* col = nullptr;
  const Value* val = nullptr;
};

// ---- Listing 1: sub-warp reductions with shuffles. The xor butterfly leaves the result in every lane,
// so all lanes of a sub-warp take the same branches afterwards. Since Volta a warp's threads need not
// run in lockstep, so each shuffle names its sub-warp's lanes in `mask` (the CUDA 9 *_sync form of the
// paper's __shfl_xor); offsets below W keep every exchange inside the sub-warp.

// The lanes of the calling thread's sub-warp within its warp (W divides 32, so sub-warps are aligned).
template <int W>
__device__ unsigned sub_warp_mask() {
  if constexpr (W == 32) {
    return 0xffffffffu;
  } else {
    const unsigned first_lane = (threadIdx.y * W) % 32;  // linear thread id = threadIdx.x + threadIdx.y * W
    return ((1u << W) - 1u) << first_lane;
  }
}

template <int W>
__device__ Index sub_warp_min(Index value, unsigned mask) {
#pragma unroll
  for (int offset = W / 2; offset >= 1; offset /= 2) {
    const Index other = __shfl_xor_sync(mask, value, offset, W);
    value = other < value ? other : value;
  }
  return value;
}

template <int W, class Value>
__device__ Value sub_warp_sum(Value value, unsigned mask) {
#pragma unroll
  for (int offset = W / 2; offset >= 1; offset /= 2) value += __shfl_xor_sync(mask, value, offset, W);
  return value;
}

// ---- One lane's input row (Fig. 2.2: "each thread manages one input row").

template <class Value>
struct RowCursor {
  Offset next = 0;  // position of the front entry in the right operand's col / val
  Offset end = 0;
  Value weight = Value(0);
  Index front = kExhausted;  // column of the front entry

  __device__ void advance(const Index* col) {
    ++next;
    front = next < end ? col[next] : kExhausted;
  }
};

// Lane `lane` of the sub-warp for row `row` of G: the lane-th entry of that row, if the row has one
// (rows shorter than W leave the remaining lanes exhausted; they still take part in the reductions).
template <class Value>
__device__ RowCursor<Value> open_cursor(const LeftFactor<Value>& G, const RightRows<Value>& B, Index row, int lane) {
  RowCursor<Value> cursor;
  const Offset entry = G.row_ptr[row] + lane;
  if (entry < G.row_ptr[row + 1]) {
    const Index k = G.column(entry);
    cursor.weight = G.weight(entry);
    cursor.next = B.row_ptr[k];
    cursor.end = B.row_ptr[k + 1];
    cursor.front = cursor.next < cursor.end ? B.col[cursor.next] : kExhausted;
  }
  return cursor;
}

// The row of G this thread's sub-warp computes; >= G.rows for the surplus sub-warps of the last block.
__device__ inline Offset sub_warp_row() {
  return static_cast<Offset>(blockIdx.x) * blockDim.y + threadIdx.y;
}

// ---- The two passes of MulLimited. Whole sub-warps leave together (the row test is per sub-warp), so
// every shuffle has all the lanes its mask names.

// Symbolic pass: lengths[i] = nnz of row i of G B.
template <int W, class Value>
__global__ void __launch_bounds__(kBlockThreads)
    count_row_lengths(LeftFactor<Value> G, RightRows<Value> B, Offset* __restrict__ lengths) {
  const Offset row = sub_warp_row();
  if (row >= G.rows) return;
  const unsigned mask = sub_warp_mask<W>();
  RowCursor<Value> cursor = open_cursor(G, B, static_cast<Index>(row), static_cast<int>(threadIdx.x));
  Offset length = 0;
  for (Index column = sub_warp_min<W>(cursor.front, mask); column != kExhausted;
       column = sub_warp_min<W>(cursor.front, mask)) {
    if (cursor.front == column) cursor.advance(B.col);
    ++length;
  }
  if (threadIdx.x == 0) lengths[row] = length;
}

// Numeric pass: row i of G B into C's columns and values from c_row_ptr[i] on (lane 0 stores; every
// lane has the reduced column and sum).
template <int W, class Value>
__global__ void __launch_bounds__(kBlockThreads)
    fill_rows(LeftFactor<Value> G, RightRows<Value> B, const Offset* __restrict__ c_row_ptr,
              Index* __restrict__ c_col, Value* __restrict__ c_val) {
  const Offset row = sub_warp_row();
  if (row >= G.rows) return;
  const unsigned mask = sub_warp_mask<W>();
  RowCursor<Value> cursor = open_cursor(G, B, static_cast<Index>(row), static_cast<int>(threadIdx.x));
  Offset out = c_row_ptr[row];
  for (Index column = sub_warp_min<W>(cursor.front, mask); column != kExhausted;
       column = sub_warp_min<W>(cursor.front, mask)) {
    Value term = Value(0);
    if (cursor.front == column) {
      term = cursor.weight * B.val[cursor.next];
      cursor.advance(B.col);
    }
    const Value sum = sub_warp_sum<W>(term, mask);
    if (threadIdx.x == 0) {
      c_col[out] = column;
      c_val[out] = sum;
    }
    ++out;
  }
}

}  // namespace rmerge
}  // namespace amgsolve
