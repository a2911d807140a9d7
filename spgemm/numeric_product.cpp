// See numeric_product.hpp.
#include "spgemm/numeric_product.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/thread_errors.hpp"
#include "spgemm/product_memory.hpp"

namespace amgsolve {
namespace {

// Row i of C = A B into its columns cols[0..length): accumulate A(i,k) B(k,:) in the dense `accumulator`
// at the columns that `slot` marks, and clear both for the next row. Returns the row's multiplications;
// `inside` becomes false when a product falls outside the marked columns. The next rows of B are asked for
// while this one is added (as gustavson does).
template <class Value>
Offset fill_row(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, const Value* __restrict b_val, Index i,
                const Index* __restrict cols, Offset length, Value* __restrict values, Value* __restrict accumulator,
                std::uint8_t* __restrict slot, bool& inside) {
  const Offset* __restrict b_begin = B.row_ptr.data();
  const Index* __restrict b_col = B.col.data();
  for (Offset c = 0; c < length; ++c) {
    accumulator[cols[c]] = -Value(0);  // -0 + p = p exactly (also for p = -0): the first product as is, as gustavson
    slot[cols[c]] = 1;
  }
  std::uint8_t marked = 1;
  Offset products = 0;
  const Offset ka_end = A.row_end(i);
  for (Offset ka = A.row_begin(i); ka < ka_end; ++ka) {
    if (ka + 2 < ka_end) {
      __builtin_prefetch(b_col + b_begin[A.col[ka + 2]]);
      __builtin_prefetch(b_val + b_begin[A.col[ka + 2]]);
    }
    const Index k = A.col[ka];
    const Value a = A.val[ka];
    products += b_begin[k + 1] - b_begin[k];
    for (Offset kb = b_begin[k]; kb < b_begin[k + 1]; ++kb) {
      const Index j = b_col[kb];
      marked &= slot[j];
      accumulator[j] += a * b_val[kb];
    }
  }
  for (Offset c = 0; c < length; ++c) {
    values[c] = accumulator[cols[c]];
    slot[cols[c]] = 0;
  }
  inside = inside && marked != 0;
  return products;
}

}  // namespace

template <class Value>
CsrMatrix<Value> numeric_product(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, const CsrMatrix<Value>& pattern,
                                 Offset* multiplications) {
  return numeric_product(A, B, B.val.data(), pattern, multiplications);
}

template <class Value>
CsrMatrix<Value> numeric_product(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, const Value* B_values,
                                 const CsrMatrix<Value>& pattern, Offset* multiplications) {
  if (A.cols != B.rows || pattern.rows != A.rows || pattern.cols != B.cols)
    throw Error("numeric product: shapes " + std::to_string(A.rows) + "x" + std::to_string(A.cols) + " * " +
                std::to_string(B.rows) + "x" + std::to_string(B.cols) + " do not give the pattern's " +
                std::to_string(pattern.rows) + "x" + std::to_string(pattern.cols));
  CsrMatrix<Value> C(pattern.rows, pattern.cols);
  C.row_ptr.resize(pattern.row_ptr.size());
  C.col.resize(pattern.col.size());
  C.val.resize(pattern.col.size());
  require_thread_arrays(static_cast<std::uint64_t>(B.cols), sizeof(Value) + sizeof(std::uint8_t),
                        "the numeric phase's dense accumulators", "columns");
  bool inside = true;
  Offset products = 0;
  ThreadErrors errors;  // out of memory for an accumulator is an exception, not the end of the process
#pragma omp parallel reduction(&& : inside) reduction(+ : products)
  {
    // A dense accumulator over B's columns; `slot` marks the columns of the current row's pattern (a column
    // outside them is accumulated and never cleared: the result is void anyway).
    std::vector<Value> accumulator;
    std::vector<std::uint8_t> slot;
    errors.run([&] {
      accumulator.resize(static_cast<std::size_t>(B.cols));
      slot.assign(static_cast<std::size_t>(B.cols), 0);
    });
#pragma omp for schedule(static)
    for (std::size_t r = 0; r < pattern.row_ptr.size(); ++r) C.row_ptr[r] = pattern.row_ptr[r];
#pragma omp for schedule(dynamic, 256)
    for (Index i = 0; i < A.rows; ++i) {
      if (errors.failed()) continue;
      const Offset begin = pattern.row_begin(i), length = pattern.row_end(i) - begin;
      std::copy_n(pattern.col.data() + begin, length, C.col.data() + begin);
      products += fill_row(A, B, B_values, i, C.col.data() + begin, length, C.val.data() + begin, accumulator.data(),
                           slot.data(), inside);
    }
  }
  errors.rethrow();
  if (!inside) throw Error("numeric product: a product falls outside the kept pattern (the operands' patterns changed)");
  if (multiplications) *multiplications = products;
  return C;
}

#define AMGSOLVE_NUMERIC_PRODUCT(V)                                                                               \
  template CsrMatrix<V> numeric_product(const CsrMatrix<V>&, const CsrMatrix<V>&, const CsrMatrix<V>&, Offset*);    \
  template CsrMatrix<V> numeric_product(const CsrMatrix<V>&, const CsrMatrix<V>&, const V*, const CsrMatrix<V>&,   \
                                        Offset*);
AMGSOLVE_NUMERIC_PRODUCT(double)
AMGSOLVE_NUMERIC_PRODUCT(float)
#undef AMGSOLVE_NUMERIC_PRODUCT

}  // namespace amgsolve
