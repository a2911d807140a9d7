// Row-wise SpGEMM with a heap (k-way merge) accumulator.
//
// Row i of C merges the sorted rows B(k,:) selected by the nonzeros a_ik, scaled by a_ik: a min-heap
// holds one cursor per selected row keyed by its current column, so the output row comes out sorted
// and duplicates are combined as they meet (J. R. Gilbert, C. Moler, R. Schreiber, "Sparse matrices
// in MATLAB", SIAM J. Matrix Anal. Appl. 13(1), 1992; the local kernel of Azad et al. 2016, section 4).
// Memory per thread is O(max row length of A), independent of B.cols, and no sort is needed; the cost
// is O(flops log nnz(A(i,:))). This is the local multiply the distributed algorithms reuse.
#include "spgemm/heap.hpp"

#include <algorithm>
#include <vector>

#include "common/parallel.hpp"
#include "common/thread_errors.hpp"
#include "common/timer.hpp"
#include "spgemm/product_memory.hpp"
#include "spgemm/registry.hpp"

namespace amgsolve {
namespace {

// Cursor into one row of B: current position and its end, ordered by the current column.
struct Cursor {
  Index col;
  Offset pos, end;
  Index a_pos_offset;  // which nonzero of A's row selected this B row (for its scale)
};

// Min-heap of cursors on `col`; a thin wrapper so the merge reads like the algorithm.
class CursorHeap {
 public:
  void clear() { heap_.clear(); }
  bool empty() const { return heap_.empty(); }
  const Cursor& top() const { return heap_.front(); }
  void push(const Cursor& c) {
    heap_.push_back(c);
    std::push_heap(heap_.begin(), heap_.end(), later);
  }
  // Advances the top cursor in B (re-inserting it if its row has more entries).
  template <class Value>
  void advance_top(const CsrMatrix<Value>& B) {
    std::pop_heap(heap_.begin(), heap_.end(), later);
    Cursor& c = heap_.back();
    if (++c.pos < c.end) {
      c.col = B.col[c.pos];
      std::push_heap(heap_.begin(), heap_.end(), later);
    } else {
      heap_.pop_back();
    }
  }

 private:
  static bool later(const Cursor& x, const Cursor& y) { return x.col > y.col; }
  std::vector<Cursor> heap_;
};

class Heap : public SpgemmBackendFor<Heap> {
 public:
  std::string name() const override { return "heap"; }
  std::string description() const override { return "OpenMP row-wise, k-way heap merge of B rows (sorted output)"; }
  BackendKind runs_on() const override { return BackendKind::cpu; }

  template <class Value>
  CsrMatrix<Value> product(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, SpgemmStats& stats) const {
    CsrMatrix<Value> C(A.rows, B.cols);
    Timer timer;
    Offset multiplications = 0, widest = 0;
    ThreadErrors errors;  // a heap grows to its widest row of A: out of memory is an exception after the region
#pragma omp parallel reduction(+ : multiplications) reduction(max : widest)
    {
      CursorHeap heap;
#pragma omp for schedule(dynamic, kRowChunk)
      for (Index i = 0; i < A.rows; ++i)
        errors.run([&] {
          widest = std::max<Offset>(widest, A.row_length(i));
          Offset count = 0;
          multiplications += merge_row(A, B, i, heap, [&](Index col, Index previous, Value) {
            count += col != previous ? 1 : 0;
          });
          C.row_ptr[static_cast<std::size_t>(i) + 1] = count;
        });
    }
    errors.rethrow();
    allocate_product(C, "heap");
    stats.symbolic_seconds = timer.seconds();
    timer.restart();
#pragma omp parallel
    {
      CursorHeap heap;
#pragma omp for schedule(dynamic, kRowChunk)
      for (Index i = 0; i < A.rows; ++i)
        errors.run([&] {
          Offset out = C.row_begin(i) - 1;
          merge_row(A, B, i, heap, [&](Index col, Index previous, Value v) {
            if (col != previous) {
              C.col[++out] = col;
              C.val[out] = v;
            } else {
              C.val[out] += v;
            }
          });
        });
    }
    errors.rethrow();
    stats.numeric_seconds = timer.seconds();
    stats.multiplications = multiplications;
    stats.nnz = C.nnz();
    stats.extra_bytes = static_cast<std::uint64_t>(max_threads()) * widest * sizeof(Cursor);
    return C;
  }

 private:
  static constexpr Index kRowChunk = 256;

  // Merges row i: calls emit(col, previous_col, a_ik * b_kj) for every product in column order, where
  // previous_col is the column of the product emitted before (-1 first); returns the product count.
  // The symbolic pass counts the distinct columns, the numeric pass accumulates.
  template <class Value, class Emit>
  static Offset merge_row(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, Index i, CursorHeap& heap,
                          Emit&& emit) {
    heap.clear();
    for (Offset ka = A.row_begin(i); ka < A.row_end(i); ++ka) {
      const Index k = A.col[ka];
      if (B.row_length(k) > 0)
        heap.push({B.col[B.row_begin(k)], B.row_begin(k), B.row_end(k), static_cast<Index>(ka - A.row_begin(i))});
    }
    Offset products = 0;
    Index previous = -1;
    while (!heap.empty()) {
      const Cursor& c = heap.top();
      const Value v = A.val[A.row_begin(i) + c.a_pos_offset] * B.val[c.pos];
      emit(c.col, previous, v);
      previous = c.col;
      ++products;
      heap.advance_top(B);
    }
    return products;
  }
};

}  // namespace
}  // namespace amgsolve

namespace amgsolve {

template <class Value>
CsrMatrix<Value> heap_multiply(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, SpgemmStats* stats) {
  static const Heap kernel;
  return kernel.multiply(A, B, stats);  // through multiply(): the same shape checks as the backend
}

template CsrMatrix<double> heap_multiply(const CsrMatrix<double>&, const CsrMatrix<double>&, SpgemmStats*);
template CsrMatrix<float> heap_multiply(const CsrMatrix<float>&, const CsrMatrix<float>&, SpgemmStats*);

}  // namespace amgsolve

AMGSOLVE_REGISTER_SPGEMM(heap, Heap)
