// `auto`: picks a backend per product from cheap statistics and records what it picked and why.
//
// Rule (from the measurements in docs/BENCHMARKS.md): Gustavson's dense accumulator of B.cols entries
// per thread is fastest while the part of it that a row touches stays in the L2 cache. That holds when
// the whole accumulator fits, and also when it does not but each row's columns lie in a narrow window
// (the locality of stencil and AMG operators: A^2 of 7-point Poisson 128^3 has 2 M columns, but a row's
// products span about 2 * 128^2 of them), because consecutive rows then reuse the same cache lines.
// Only when the rows scatter over the whole range (random matrices, MAGNUS's uniform set) do most
// accumulator accesses miss: then MAGNUS, whose chunks are sized to L2, is chosen. The window is the
// mean column span of the products of up to kSampledRows rows of A spread evenly over it: a cheap
// sample, read in O(sampled nnz(A)), and taken only when the whole accumulator exceeds L2.
#include <algorithm>
#include <charconv>

#include "common/cpu_info.hpp"
#include "spgemm/registry.hpp"

namespace amgsolve {
namespace {

class Auto : public SpgemmBackendFor<Auto> {
 public:
  std::string name() const override { return "auto"; }
  std::string description() const override {
    return "picks gustavson while the accumulator window its rows touch fits in L2, else magnus (reason in "
           "the stats)";
  }
  Device device() const override { return Device::cpu; }

  template <class Value>
  CsrMatrix<Value> product(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, SpgemmStats& stats) const {
    const std::size_t entry = sizeof(Index) + sizeof(Value);
    const std::size_t accumulator = static_cast<std::size_t>(B.cols) * entry;
    const std::size_t l2 = l2_cache_bytes();
    // A whole accumulator within L2 needs no sample (products of a few microseconds noticed it).
    const bool whole_fits = accumulator <= l2;
    const std::size_t window = whole_fits ? accumulator : static_cast<std::size_t>(mean_column_span(A, B)) * entry;
    const bool local = window <= l2;
    const SpgemmBackend& chosen = SpgemmRegistry::instance().get(local ? "gustavson" : "magnus");
    CsrMatrix<Value> C = chosen.multiply(A, B, &stats);
    stats.choice = reason(chosen.name(), whole_fits, window, accumulator, l2);
    return C;
  }

 private:
  static constexpr Index kSampledRows = 1024;

  // Built with one allocation: the reason is written for every product, a few microseconds each for the
  // smallest.
  static std::string reason(const std::string& chosen, bool whole_fits, std::size_t window, std::size_t accumulator,
                            std::size_t l2) {
    std::string text;
    text.reserve(160);
    text += chosen;
    if (whole_fits) {
      text += ": the whole accumulator of ";
      append_kib(text, accumulator);
    } else {
      text += ": rows touch a window of ";
      append_kib(text, window);
      text += " of the ";
      append_kib(text, accumulator);
      text += " accumulator,";
    }
    text += window <= l2 ? " within the " : " beyond the ";
    append_kib(text, l2);
    text += " L2";
    return text;
  }
  static void append_kib(std::string& text, std::size_t bytes) {
    char digits[24];
    const auto end = std::to_chars(digits, digits + sizeof digits, bytes >> 10).ptr;
    text.append(digits, end);
    text += " KiB";
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
