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
// sample, read in O(sampled nnz(A)).
#include <algorithm>

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
    const std::size_t window = static_cast<std::size_t>(mean_column_span(A, B)) * entry;
    const std::size_t l2 = l2_cache_bytes();
    const bool local = window <= l2;
    const SpgemmBackend& chosen = SpgemmRegistry::instance().get(local ? "gustavson" : "magnus");
    CsrMatrix<Value> C = chosen.multiply(A, B, &stats);
    stats.choice = chosen.name() + ": rows touch a window of " + kib(window) + " of the " + kib(accumulator) +
                   " accumulator, " + (local ? "within" : "beyond") + " the " + kib(l2) + " L2";
    return C;
  }

 private:
  static constexpr Index kSampledRows = 1024;

  static std::string kib(std::size_t bytes) { return std::to_string(bytes >> 10) + " KiB"; }

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
