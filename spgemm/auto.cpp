// `auto`: picks a backend per product from cheap statistics and records what it picked and why.
//
// Rule (from the measurements in docs/BENCHMARKS.md): Gustavson's dense accumulator of B.cols entries
// per thread is fastest while the part of it that a row touches stays in the L2 cache. That holds when
// the whole accumulator fits, and also when it does not but each row's columns lie in a narrow window
// (the locality of stencil and AMG operators: A^2 of 7-point Poisson 128^3 has 2 M columns, but a row's
// products span about 2 * 128^2 of them), because consecutive rows then reuse the same cache lines.
// Only when the rows scatter over the whole range (random matrices, MAGNUS's uniform set) do most
// accumulator accesses miss: then MAGNUS, whose chunks are sized to L2, is chosen, unless the rows have
// so few products (a mean of at most kHashMostProductsPerRow over the nonempty rows of C, from the exact
// flop count) that a per-row hash table, sized to the products and not to the columns, does less work
// than MAGNUS's per-row sort (docs/BENCHMARKS.md, "`auto` on scattered rows"). The window is the mean
// column span of the products of up to kSampledRows rows of A spread evenly over it: a cheap sample, read
// in O(sampled nnz(A)), and taken only when the whole accumulator exceeds L2; the flops are counted
// exactly, in O(nnz(A)), only for scattered rows. The compression factor did not change the choice where
// it was measured (R-MAT A^2), so it is not computed.
#include <algorithm>
#include <charconv>
#include <cstdio>

#include "common/cpu_info.hpp"
#include "common/parallel.hpp"
#include "spgemm/registry.hpp"

namespace amgsolve {
namespace {

class Auto : public SpgemmBackendFor<Auto> {
 public:
  std::string name() const override { return "auto"; }
  bool sums_in_row_order() const override { return true; }
  std::string description() const override {
    return "picks gustavson while the accumulator window its rows touch fits in L2, else magnus, or hash for "
           "rows of very few products (reason in the stats)";
  }
  BackendKind runs_on() const override { return BackendKind::cpu; }

  template <class Value>
  CsrMatrix<Value> product(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, SpgemmStats& stats) const {
    const std::size_t entry = sizeof(Index) + sizeof(Value);
    Facts facts;
    facts.accumulator = static_cast<std::size_t>(B.cols) * entry;
    facts.l2 = l2_cache_bytes();
    // A whole accumulator within L2 needs no sample (products of a few microseconds noticed it).
    facts.whole_fits = facts.accumulator <= facts.l2;
    facts.window = facts.whole_fits ? facts.accumulator : static_cast<std::size_t>(mean_column_span(A, B)) * entry;
    const std::size_t accumulators = facts.accumulator * static_cast<std::size_t>(max_threads());  // one a thread
    facts.dwarfs_operands = accumulators > kLargeAccumulator &&
                            accumulators > kMostAccumulatorPerOperandByte * (A.bytes() + B.bytes());
    const bool local = facts.window <= facts.l2 && !facts.dwarfs_operands;
    if (!local) facts.products_per_row = mean_products_per_row(A, B);
    const char* name = local                                                 ? "gustavson"
                       : facts.products_per_row <= kHashMostProductsPerRow ? "hash"
                                                                             : "magnus";
    CsrMatrix<Value> C = SpgemmRegistry::instance().get(name).multiply(A, B, &stats);
    stats.choice = reason(name, facts);
    return C;
  }

 private:
  static constexpr Index kSampledRows = 1024;
  static constexpr double kHashMostProductsPerRow = 5;
  // Gustavson's accumulator is allocated over all of B's columns on every thread: where the threads' together
  // are large and many times the operands (docs/BENCHMARKS.md, "`auto` on scattered rows"), the others, sized
  // to the products, are chosen whatever the window.
  static constexpr std::size_t kLargeAccumulator = std::size_t{64} << 20;
  static constexpr std::size_t kMostAccumulatorPerOperandByte = 16;

  struct Facts {
    std::size_t accumulator = 0, window = 0, l2 = 0;  // bytes
    bool whole_fits = false;
    bool dwarfs_operands = false;  // the threads' accumulators together many times the operands' bytes
    double products_per_row = 0;  // mean over nonempty rows; counted for scattered rows only
  };

  // Built with few allocations: the reason is written for every product, a few microseconds each for the
  // smallest.
  static std::string reason(const char* chosen, const Facts& f) {
    std::string text;
    text.reserve(200);
    text += chosen;
    if (f.whole_fits) {
      text += ": the whole accumulator of ";
      append_kib(text, f.accumulator);
    } else {
      text += ": rows touch a window of ";
      append_kib(text, f.window);
      text += " of the ";
      append_kib(text, f.accumulator);
      text += " accumulator,";
    }
    text += f.window <= f.l2 ? " within the " : " beyond the ";
    append_kib(text, f.l2);
    text += " L2";
    if (f.dwarfs_operands) {
      text += ", but the threads' accumulators are over " + std::to_string(kLargeAccumulator >> 20) + " MiB and " +
              std::to_string(kMostAccumulatorPerOperandByte) + " times the operands";
    }
    if (f.window > f.l2 || f.dwarfs_operands) {
      char products[64];
      std::snprintf(products, sizeof products, "; %.1f products per row on average (hash at most %.0f)", f.products_per_row,
                    kHashMostProductsPerRow);
      text += products;
    }
    return text;
  }
  static void append_kib(std::string& text, std::size_t bytes) {
    char digits[24];
    const auto end = std::to_chars(digits, digits + sizeof digits, bytes >> 10).ptr;
    text.append(digits, end);
    text += " KiB";
  }

  // Mean products over the rows of C that have any (empty rows would make wide rows look short).
  template <class Value>
  static double mean_products_per_row(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B) {
    Offset products = 0;
    Index rows = 0;
#pragma omp parallel for schedule(static) reduction(+ : products, rows)
    for (Index i = 0; i < A.rows; ++i) {
      const Offset m = row_multiplications(A, B, i);
      products += m;
      rows += m > 0 ? 1 : 0;
    }
    return rows > 0 ? static_cast<double>(products) / rows : 0.0;
  }

  // Mean over sampled rows of A of (largest - smallest column of the row's products + 1); B's rows are
  // sorted, so each contributes its first and last column.
  template <class Value>
  static double mean_column_span(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B) {
    const Index step = std::max<Index>(1, A.rows / kSampledRows);
    double total = 0;
    Index sampled = 0;
    for (Index i = 0; i < A.rows; i += step) {
      Index first = B.cols, last = -1;
      for (Offset ka = A.row_begin(i); ka < A.row_end(i); ++ka) {
        const Index k = A.col[ka];
        if (B.row_length(k) == 0) continue;
        first = std::min(first, B.col[B.row_begin(k)]);
        last = std::max(last, B.col[B.row_end(k) - 1]);
      }
      total += last >= first ? static_cast<double>(last - first + 1) : 0.0;
      ++sampled;
    }
    return sampled > 0 ? total / sampled : 0.0;
  }
};

}  // namespace
}  // namespace amgsolve

AMGSOLVE_REGISTER_SPGEMM(auto, Auto)
