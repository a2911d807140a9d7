// Row-wise SpGEMM with a per-thread hash-table accumulator.
//
// Y. Nagasaka, S. Matsuoka, A. Azad, A. Buluç, "High-performance sparse matrix-matrix products on Intel
// KNL and multicore architectures", ICPP Workshops 2018, section 3.2 (the "Hash" kernel).
// For each row of C the table size is the smallest power of two at least twice the row's number of
// multiplications or B's columns, whichever is fewer (each an upper bound on its nonzeros), so the table stays
// small and cache-resident even when B has millions of columns, unlike Gustavson's dense accumulator of
// length B.cols.
// Symbolic phase: insert the column indices, count the distinct ones. Numeric phase: accumulate
// (column, value) pairs, then sort the row's distinct columns and read their values back from the table.
#include <algorithm>
#include <bit>
#include <vector>

#include "common/parallel.hpp"
#include "common/thread_errors.hpp"
#include "common/timer.hpp"
#include "spgemm/product_memory.hpp"
#include "spgemm/registry.hpp"

namespace amgsolve {
namespace {

constexpr Index kEmpty = -1;

// Open-addressing table with linear probing over a power-of-two prefix of preallocated storage.
template <class Value>
class HashAccumulator {
 public:
  void reset(Offset capacity_hint) {
    const std::size_t size = std::bit_ceil(static_cast<std::size_t>(std::max<Offset>(2 * capacity_hint, 16)));
    if (keys_.size() < size) {
      keys_.resize(size);
      values_.resize(size);
    }
    mask_ = size - 1;
    std::fill_n(keys_.begin(), size, kEmpty);
  }

  // Slot of `key`, inserting it if absent; sets `inserted`.
  std::size_t slot(Index key, bool& inserted) {
    std::size_t h = (static_cast<std::uint32_t>(key) * 2654435761u) & mask_;
    while (true) {
      if (keys_[h] == key) {
        inserted = false;
        return h;
      }
      if (keys_[h] == kEmpty) {
        keys_[h] = key;
        inserted = true;
        return h;
      }
      h = (h + 1) & mask_;
    }
  }

  Value& value(std::size_t s) { return values_[s]; }

 private:
  std::vector<Index> keys_;
  std::vector<Value> values_;
  std::size_t mask_ = 0;
};

class Hash : public SpgemmBackendFor<Hash> {
 public:
  std::string name() const override { return "hash"; }
  bool sums_in_row_order() const override { return true; }
  std::string description() const override {
    return "OpenMP row-wise, per-thread hash-table accumulator (Nagasaka et al. 2018)";
  }
  BackendKind runs_on() const override { return BackendKind::cpu; }

  template <class Value>
  CsrMatrix<Value> product(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, SpgemmStats& stats) const {
    CsrMatrix<Value> C(A.rows, B.cols);
    Timer timer;
    Offset largest_row = 0;  // the largest row's bound on its nonzeros: its table's size
    stats.multiplications = symbolic(A, B, C, largest_row);
    stats.symbolic_seconds = timer.seconds();
    timer.restart();
    numeric(A, B, C);
    stats.numeric_seconds = timer.seconds();
    stats.nnz = C.nnz();
    const std::uint64_t table = std::bit_ceil(static_cast<std::uint64_t>(std::max<Offset>(2 * largest_row, 16)));
    stats.extra_bytes = static_cast<std::uint64_t>(max_threads()) * table * (sizeof(Index) + sizeof(Value));
    return C;
  }

 private:
  static constexpr Index kRowChunk = 256;

  template <class Value>
  static Offset symbolic(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, CsrMatrix<Value>& C,
                         Offset& largest_row) {
    Offset multiplications = 0, largest = 0;
    ThreadErrors errors;  // a table grows with its rows' products: out of memory is an exception after the region
#pragma omp parallel reduction(+ : multiplications) reduction(max : largest)
    {
      HashAccumulator<Value> table;
#pragma omp for schedule(dynamic, kRowChunk)
      for (Index i = 0; i < A.rows; ++i) {
        const Offset m = row_multiplications(A, B, i);
        multiplications += m;
        const Offset bound = std::min<Offset>(m, B.cols);  // on the row's nonzeros
        largest = std::max(largest, bound);
        if (!errors.run([&] { table.reset(bound); })) continue;
        Offset count = 0;
        bool inserted = false;
        for (Offset ka = A.row_begin(i); ka < A.row_end(i); ++ka) {
          const Index k = A.col[ka];
          for (Offset kb = B.row_begin(k); kb < B.row_end(k); ++kb) {
            table.slot(B.col[kb], inserted);
            count += inserted ? 1 : 0;
          }
        }
        C.row_ptr[static_cast<std::size_t>(i) + 1] = count;
      }
    }
    errors.rethrow();
    largest_row = largest;
    allocate_product(C, "hash");
    return multiplications;
  }

  template <class Value>
  static void numeric(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, CsrMatrix<Value>& C) {
    ThreadErrors errors;
#pragma omp parallel
    {
      HashAccumulator<Value> table;
#pragma omp for schedule(dynamic, kRowChunk)
      for (Index i = 0; i < A.rows; ++i) {
        if (!errors.run([&] { table.reset(std::min<Offset>(row_multiplications(A, B, i), B.cols)); })) continue;
        Index* cols = C.col.data() + C.row_begin(i);
        Index length = 0;
        bool inserted = false;
        for (Offset ka = A.row_begin(i); ka < A.row_end(i); ++ka) {
          const Index k = A.col[ka];
          const Value a = A.val[ka];
          for (Offset kb = B.row_begin(k); kb < B.row_end(k); ++kb) {
            const std::size_t s = table.slot(B.col[kb], inserted);
            if (inserted) {
              table.value(s) = a * B.val[kb];
              cols[length++] = B.col[kb];
            } else {
              table.value(s) += a * B.val[kb];
            }
          }
        }
        std::sort(cols, cols + length);
        Value* vals = C.val.data() + C.row_begin(i);
        for (Index p = 0; p < length; ++p) vals[p] = table.value(table.slot(cols[p], inserted));
      }
    }
    errors.rethrow();
  }
};

}  // namespace
}  // namespace amgsolve

AMGSOLVE_REGISTER_SPGEMM(hash, Hash)
