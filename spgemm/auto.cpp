// `auto`: picks a backend per product from cheap statistics and records what it picked and why.
//
// Rule (from the measurements in docs/BENCHMARKS.md): Gustavson's dense accumulator of B.cols entries
// per thread is fastest while it fits in the L2 cache; once it does not, most accumulator accesses miss
// and the per-row hash table (sized to the row's multiplications, so it stays small) wins. The rows of
// A are short in AMG products, so the hash tables are tiny.
#include "common/cpu_info.hpp"
#include "spgemm/registry.hpp"

namespace amgsolve {
namespace {

class Auto : public SpgemmBackendFor<Auto> {
 public:
  std::string name() const override { return "auto"; }
  std::string description() const override {
    return "picks gustavson while its dense accumulator fits in L2, else hash (reason in the stats)";
  }
  Device device() const override { return Device::cpu; }

  template <class Value>
  CsrMatrix<Value> product(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, SpgemmStats& stats) const {
    const std::size_t accumulator = static_cast<std::size_t>(B.cols) * (sizeof(Index) + sizeof(Value));
    const std::size_t l2 = l2_cache_bytes();
    const bool fits = accumulator <= l2;
    const SpgemmBackend& chosen = SpgemmRegistry::instance().get(fits ? "gustavson" : "hash");
    CsrMatrix<Value> C = chosen.multiply(A, B, &stats);
    stats.choice = chosen.name() + ": dense accumulator of " + std::to_string(accumulator >> 10) + " KiB " +
                   (fits ? "fits" : "exceeds") + " the " + std::to_string(l2 >> 10) + " KiB L2";
    return C;
  }
};

}  // namespace
}  // namespace amgsolve

AMGSOLVE_REGISTER_SPGEMM(auto, Auto)
