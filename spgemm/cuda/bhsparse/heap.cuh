#pragma once
// Bin groups 2 and 3 of Liu & Vinter 2015 (section 4.1, "the third stage"): rows with at most 32 products,
// one thread per row, because a warp or a block per row would leave most of its threads idle.
//
// Group 2 (u_i = 1): the row's single product is the row.
//
// Group 3 (2 <= u_i <= 32), the heap method (Figure 1): the thread collects all u_i products of its row into
// an implicit max-heap keyed by column, held in shared memory and sized by the bin (every row of bin u has
// exactly u products). A heapsort-like loop then pops the largest column and prepends it to a sorted result
// that grows down from the end of the same array; when the popped column equals the result's first column
// the two are fused (values added) instead. The result is sorted and duplicate-free without extra space,
// because the heap shrinks by one slot per pop and the result grows by at most one.
#include "spgemm/cuda/bhsparse/device_views.cuh"

namespace amgsolve::bhsparse {

constexpr int kHeapThreads = 64;  // per block; 64 threads x 32 products x 12 bytes = 24 kB of shared memory

template <class Value>
constexpr std::size_t heap_shared_bytes(int products_per_row) {
  return static_cast<std::size_t>(kHeapThreads) * products_per_row * (sizeof(Index) + sizeof(Value));
}

// Group 2: the one entry a_ik whose row of B is not empty contributes the one product a_ik * b_kj.
template <class Value>
__global__ void single_product_rows(ProductView<Value> m, const Index* rows, Offset count, RowOutput<Value> out) {
  const Offset stride = static_cast<Offset>(gridDim.x) * blockDim.x;
  for (Offset r = static_cast<Offset>(blockIdx.x) * blockDim.x + threadIdx.x; r < count; r += stride) {
    const Index row = rows[r];
    for (Offset p = m.A.begin(row); p < m.A.end(row); ++p) {
      const Index k = m.A.col[p];
      if (m.B.length(k) == 0) continue;
      const Offset b = m.B.begin(k);
      out.col[out.offset[row]] = m.B.col[b];
      out.val[out.offset[row]] = m.A.val[p] * m.B.val[b];
      break;
    }
    out.nnz[row] = 1;
  }
}

// One thread's heap of `size` slots in shared memory. Slot h of thread t lies at h * threads + t, so a warp
// touching the same slot number hits 32 consecutive words (no bank conflicts in the collecting phase).
template <class Value>
class ThreadHeap {
 public:
  __device__ ThreadHeap(Index* col, Value* val, int stride) : col_(col), val_(val), stride_(stride) {}

  __device__ Index& col(int h) { return col_[h * stride_]; }
  __device__ Value& val(int h) { return val_[h * stride_]; }

  // Restores the max-heap property below `hole` in slots [0, size), for the entry (c, v) placed at `hole`.
  __device__ void sift_down(int hole, int size, Index c, Value v) {
    for (;;) {
      int child = 2 * hole + 1;
      if (child >= size) break;
      if (child + 1 < size && col(child + 1) > col(child)) ++child;
      if (col(child) <= c) break;
      col(hole) = col(child);
      val(hole) = val(child);
      hole = child;
    }
    col(hole) = c;
    val(hole) = v;
  }

  // Bottom-up heap construction over slots [0, size).
  __device__ void make_heap(int size) {
    for (int h = size / 2 - 1; h >= 0; --h) sift_down(h, size, col(h), val(h));
  }

  // The variant heapsort of Figure 1. Returns the first slot of the result: slots [first, size) hold the
  // distinct columns in ascending order with their summed values. Invariant: first >= heap_size, so the
  // heap [0, heap_size) lies before the result [first, size); each pop frees one heap slot and takes at
  // most one result slot.
  __device__ int sort_and_fuse(int size) {
    int heap_size = size, first = size;
    while (heap_size > 0) {
      const Index top_col = col(0);
      const Value top_val = val(0);
      --heap_size;  // the last heap entry moves to the root; its slot becomes free
      if (heap_size > 0) sift_down(0, heap_size, col(heap_size), val(heap_size));
      if (first < size && col(first) == top_col) {
        val(first) += top_val;  // same column as the smallest one so far: fuse
      } else {
        --first;  // first >= heap_size here: the slot is outside the heap
        col(first) = top_col;
        val(first) = top_val;
      }
    }
    return first;
  }

 private:
  Index* col_;
  Value* val_;
  int stride_;
};

// Group 3: all rows of one bin, u = products_per_row; dynamic shared memory heap_shared_bytes<Value>(u).
template <class Value>
__global__ void __launch_bounds__(kHeapThreads)
    heap_rows(ProductView<Value> m, const Index* rows, Offset count, int products_per_row, RowOutput<Value> out) {
  // Untyped so that every Value instantiates the same extern declaration; values first for their alignment.
  extern __shared__ __align__(16) unsigned char heap_storage[];
  Value* heap_val = reinterpret_cast<Value*>(heap_storage);
  Index* heap_col = reinterpret_cast<Index*>(heap_val + static_cast<std::size_t>(products_per_row) * kHeapThreads);
  ThreadHeap<Value> heap(heap_col + threadIdx.x, heap_val + threadIdx.x, kHeapThreads);

  const Offset stride = static_cast<Offset>(gridDim.x) * kHeapThreads;
  for (Offset r = static_cast<Offset>(blockIdx.x) * kHeapThreads + threadIdx.x; r < count; r += stride) {
    const Index row = rows[r];
    int collected = 0;
    for (Offset p = m.A.begin(row); p < m.A.end(row); ++p) {
      const Index k = m.A.col[p];
      const Value a = m.A.val[p];
      for (Offset b = m.B.begin(k); b < m.B.end(k); ++b, ++collected) {
        heap.col(collected) = m.B.col[b];
        heap.val(collected) = a * m.B.val[b];
      }
    }
    // collected == products_per_row: the bin is the row's exact product count.
    heap.make_heap(collected);
    const int first = heap.sort_and_fuse(collected);
    const Offset begin = out.offset[row];
    for (int h = first; h < collected; ++h) {
      out.col[begin + (h - first)] = heap.col(h);
      out.val[begin + (h - first)] = heap.val(h);
    }
    out.nnz[row] = collected - first;
  }
}

}  // namespace amgsolve::bhsparse
