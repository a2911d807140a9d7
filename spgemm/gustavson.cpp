// Gustavson's row-by-row SpGEMM with a dense accumulator.
//
// F. G. Gustavson, "Two fast algorithms for sparse matrices: multiplication and permuted transposition",
// ACM TOMS 4(3), 1978. Row i of C is the linear combination of the rows of B selected by row i of A:
//     C(i,:) = sum_k A(i,k) * B(k,:).
// Symbolic phase: count the distinct columns of each output row with a per-thread marker array of
// length B.cols, then a prefix sum gives the row offsets. Numeric phase: accumulate values in a
// per-thread dense array of length B.cols, gather the touched columns, sort them, and write the row.
// Rows are independent, so the result is the same for any thread count. This is the simple baseline
// the tuned backends are measured against.
// Small products (at most kSerialMultiplications) run on one thread in one pass, the output grown row by
// row into space for every product: waking the other threads costs more than such a product (tens of
// microseconds on the 2-core VM, milliseconds when its cores are busy), and the symbolic pass doubles
// the reads for what fits in cache anyway.
#include <algorithm>
#include <vector>

#include "common/parallel.hpp"
#include "common/timer.hpp"
#include "spgemm/accumulator.hpp"
#include "spgemm/registry.hpp"

namespace amgsolve {
namespace {

class Gustavson : public SpgemmBackendFor<Gustavson> {
 public:
  std::string name() const override { return "gustavson"; }
  std::string description() const override { return "OpenMP row-wise Gustavson, dense accumulator (baseline)"; }
  Device device() const override { return Device::cpu; }

  template <class Value>
  CsrMatrix<Value> product(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, SpgemmStats& stats) const {
    CsrMatrix<Value> C(A.rows, B.cols);
    Timer timer;
    const Offset multiplications = multiplications_if_small(A, B);
    if (multiplications >= 0) {
      stats.multiplications = multiplications;
      one_pass(A, B, multiplications, C);
      stats.numeric_seconds = timer.seconds();
      stats.nnz = C.nnz();
      stats.extra_bytes = static_cast<std::uint64_t>(B.cols) * (sizeof(Index) + sizeof(Value)) +
                          static_cast<std::uint64_t>(multiplications - C.nnz()) * (sizeof(Index) + sizeof(Value));
      return C;
    }
    stats.multiplications = symbolic(A, B, C);
    stats.symbolic_seconds = timer.seconds();
    timer.restart();
    numeric(A, B, C);
    stats.numeric_seconds = timer.seconds();
    stats.nnz = C.nnz();
    stats.extra_bytes = static_cast<std::uint64_t>(max_threads()) * B.cols * (sizeof(Index) + sizeof(Value));
    return C;
  }

 private:
  static constexpr Index kRowChunk = 256;
  // Rows per dynamic chunk: kRowChunk, or fewer so that a matrix with few rows still gives every thread
  // several chunks.
  static Index row_chunk(Index rows) { return std::clamp<Index>(rows / (8 * max_threads()), 1, kRowChunk); }
  // About 100 microseconds of work on one core.
  static constexpr Offset kSerialMultiplications = Offset{1} << 16;

  // The product's multiplications when at most kSerialMultiplications, else -1 (found after reading only
  // as much of A as that many multiplications take).
  template <class Value>
  static Offset multiplications_if_small(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B) {
    Offset total = 0;
    for (Offset ka = 0; ka < A.nnz(); ++ka) {
      total += B.row_length(A.col[ka]);
      if (total > kSerialMultiplications) return -1;
    }
    return total;
  }

  // Row i of C = sum_k A(i,k) B(k,:), accumulated and listed in order (sort or scan, as numeric()).
  template <class Value>
  static Index accumulate_row(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, Index i, Index* marker,
                              Value* accumulator, Index* cols, Value* vals) {
    Index length = 0;
    for (Offset ka = A.row_begin(i); ka < A.row_end(i); ++ka) {
      const Index k = A.col[ka];
      const Value a = A.val[ka];
      for (Offset kb = B.row_begin(k); kb < B.row_end(k); ++kb) {
        const Index j = B.col[kb];
        if (marker[j] != i) {  // a branch here measured faster than a branch-free append
          marker[j] = i;
          accumulator[j] = a * B.val[kb];
          cols[length++] = j;
        } else {
          accumulator[j] += a * B.val[kb];
        }
      }
    }
    if (scan_beats_sort(length, B.cols)) {
      // The row touches a good part of B's columns: read the markers in column order.
      Index p = 0;
      for (Index j = 0; j < B.cols; ++j)
        if (marker[j] == i) {
          cols[p] = j;
          vals[p++] = accumulator[j];
        }
      return length;
    }
    std::sort(cols, cols + length);
    for (Index p = 0; p < length; ++p) vals[p] = accumulator[cols[p]];
    return length;
  }

  // One thread, no symbolic pass: C's arrays get room for every product and are cut to size at the end.
  template <class Value>
  static void one_pass(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, Offset multiplications,
                       CsrMatrix<Value>& C) {
    std::vector<Index> marker(static_cast<std::size_t>(B.cols), -1);
    std::vector<Value> accumulator(static_cast<std::size_t>(B.cols));
    C.col.resize(static_cast<std::size_t>(multiplications));
    C.val.resize(C.col.size());
    Offset end = 0;
    for (Index i = 0; i < A.rows; ++i) {
      end += accumulate_row(A, B, i, marker.data(), accumulator.data(), C.col.data() + end, C.val.data() + end);
      C.row_ptr[static_cast<std::size_t>(i) + 1] = end;
    }
    C.col.resize(static_cast<std::size_t>(end));
    C.val.resize(static_cast<std::size_t>(end));
  }

  // Fills C.row_ptr and sizes C.col/C.val; returns the number of multiplications.
  template <class Value>
  static Offset symbolic(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, CsrMatrix<Value>& C) {
    Offset multiplications = 0;
    const Index chunk = row_chunk(A.rows);
#pragma omp parallel reduction(+ : multiplications)
    {
      std::vector<Index> marker(static_cast<std::size_t>(B.cols), -1);
#pragma omp for schedule(dynamic, chunk)
      for (Index i = 0; i < A.rows; ++i) {
        Offset count = 0;
        for (Offset ka = A.row_begin(i); ka < A.row_end(i); ++ka) {
          const Index k = A.col[ka];
          multiplications += B.row_length(k);
          for (Offset kb = B.row_begin(k); kb < B.row_end(k); ++kb) {
            // Branch-free: whether column j is new to the row is data-dependent and mispredicts often.
            const Index j = B.col[kb];
            count += marker[j] != i;
            marker[j] = i;
          }
        }
        C.row_ptr[static_cast<std::size_t>(i) + 1] = count;
      }
    }
    allocate_from_row_lengths(C);
    return multiplications;
  }

  template <class Value>
  static void numeric(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, CsrMatrix<Value>& C) {
    const Index chunk = row_chunk(A.rows);
#pragma omp parallel
    {
      std::vector<Index> marker(static_cast<std::size_t>(B.cols), -1);
      std::vector<Value> accumulator(static_cast<std::size_t>(B.cols));
#pragma omp for schedule(dynamic, chunk)
      for (Index i = 0; i < A.rows; ++i)
        accumulate_row(A, B, i, marker.data(), accumulator.data(), C.col.data() + C.row_begin(i),
                       C.val.data() + C.row_begin(i));
    }
  }
};

}  // namespace
}  // namespace amgsolve

AMGSOLVE_REGISTER_SPGEMM(gustavson, Gustavson)
