// Micro-benchmarks of the kernels that dominate setup and solve on 3D Poisson (7-point, 64^3 by
// default; AMGSOLVE_BENCH_N overrides). Run: build/bench/bench_kernels --benchmark_repetitions=5
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "amg/filtered_matrix.hpp"
#include "amg/hierarchy.hpp"
#include "amg/mis2_aggregation.hpp"
#include "amg/smoothed_prolongation.hpp"
#include "amg/spectral_radius.hpp"
#include "amg/strength.hpp"
#include "amg/vcycle.hpp"
#include "backend/cpu/cpu_backend.hpp"
#include "amg/tentative_prolongation.hpp"
#include "problems/poisson.hpp"
#include "sparse/csr_ops.hpp"
#include "spgemm/accumulator.hpp"
#include "spgemm/bitonic_sort.hpp"
#include "spgemm/numeric_product.hpp"
#include "spgemm/registry.hpp"
#include "common/environment.hpp"
#include "common/error.hpp"
#include "common/hash.hpp"
#include "common/memory.hpp"

namespace amgsolve {
namespace {

// AMGSOLVE_BENCH_N, the grid's edge (64 when unset); anything else than a whole number from 8 to 512 ends
// the program with one line, before a benchmark runs on a grid it was not asked for.
std::int64_t bench_size() {
  try {
    return integer_from_environment("AMGSOLVE_BENCH_N", 8, 512).value_or(64);
  } catch (const InputError& e) {
    std::fprintf(stderr, "bench_kernels: %s\n", e.what());
    std::exit(2);
  }
}

struct Fixture {
  std::shared_ptr<const CsrMatrix<double>> A;
  CsrMatrix<double> P, R;
  Fixture() {
    PoissonParams p;
    const std::int64_t size = bench_size();
    p.size = {size, size, size};
    A = std::make_shared<const CsrMatrix<double>>(poisson_matrix(p));
    const Aggregates agg = mis2_aggregation(strength_of_connection(*A, 0.02).graph, 1);
    P = smoothed_prolongation(*A, tentative_prolongation<double>(agg), 2.0 / 3.0,
                              SpgemmRegistry::instance().get("gustavson"));
    R = transpose(P);
  }
};

const Fixture& fixture() {
  static const Fixture f;
  return f;
}

void BM_Spmv(benchmark::State& state) {
  const auto& A = *fixture().A;
  Vector<double> x(A.rows, 1.0), y;
  for (auto _ : state) {
    spmv(A, x, y);
    benchmark::DoNotOptimize(y.data());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(A.bytes() + 16 * A.rows));
}
BENCHMARK(BM_Spmv)->Unit(benchmark::kMillisecond)->UseRealTime();

// The Chebyshev step, the solve's most frequent pass, on the finest matrix: in CSR against the cpu backend's
// sliced ELLPACK copy (sparse/sliced_ellpack.hpp; the same bits). Arguments: sliced 0/1, float 0/1.
template <class V>
void chebyshev_step_pass(benchmark::State& state) {
  const CpuBackend cpu;
  const auto A = std::make_shared<const CsrMatrix<V>>(cast_values<V>(*fixture().A));
  const auto M = cpu.matrix(A, state.range(0) ? SpmvFormat::automatic : SpmvFormat::csr);
  if (state.range(0) && !M->sliced) {
    state.SkipWithError("no sliced copy: the CPU lacks AVX2 or the padding is too large");
    return;
  }
  const auto rows = static_cast<std::size_t>(A->rows);
  const Vector<V> x(rows, V(1)), b(rows, V(1)), dinv(rows, V(1) / V(6));
  Vector<V> d(rows, V(0)), next;
  for (auto _ : state) {
    cpu.chebyshev_step(*M, dinv, b, V(0.5), V(0.25), d, x, next);
    benchmark::DoNotOptimize(next.data());
  }
  const std::uint64_t matrix = M->sliced ? M->sliced->bytes() : A->bytes();
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(matrix + 7 * sizeof(V) * rows));
}
void BM_ChebyshevStep(benchmark::State& state) {
  if (state.range(1))
    chebyshev_step_pass<float>(state);
  else
    chebyshev_step_pass<double>(state);
}
BENCHMARK(BM_ChebyshevStep)
    ->ArgsProduct({{0, 1}, {0, 1}})
    ->ArgNames({"sliced", "float"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The spectral-radius estimate of D^-1 A (amg/spectral_radius.hpp) as the setup runs it: 6 Lanczos steps on
// the finest matrix in float (the mixed precision's setup) with double vectors.
void BM_LanczosEstimate(benchmark::State& state) {
  const CsrMatrix<float> A = cast_values<float>(*fixture().A);
  for (auto _ : state) benchmark::DoNotOptimize(lanczos_max_eigenvalue_dinv_a(A, 6, 1));
  state.SetBytesProcessed(state.iterations() * 6 * static_cast<std::int64_t>(A.bytes() + 7 * 8 * A.rows));
}
BENCHMARK(BM_LanczosEstimate)->Unit(benchmark::kMillisecond)->UseRealTime();

// The same on the next level's matrix (coarse_matrix() below: rows of about 32 entries).
const CsrMatrix<double>& coarse_matrix();
void BM_LanczosEstimateCoarse(benchmark::State& state) {
  const CsrMatrix<float> A = cast_values<float>(coarse_matrix());
  for (auto _ : state) benchmark::DoNotOptimize(lanczos_max_eigenvalue_dinv_a(A, 6, 1));
  state.SetBytesProcessed(state.iterations() * 6 * static_cast<std::int64_t>(A.bytes() + 7 * 8 * A.rows));
}
BENCHMARK(BM_LanczosEstimateCoarse)->Unit(benchmark::kMillisecond)->UseRealTime();

// The diagonal's entries, looked up in every row: the setup takes them several times per level.
void BM_Diagonal(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(diagonal(*fixture().A).data());
}
BENCHMARK(BM_Diagonal)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Strength(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(strength_of_connection(*fixture().A, 0.02).graph.nodes);
}
BENCHMARK(BM_Strength)->Unit(benchmark::kMillisecond)->UseRealTime();

// The same on the next level's matrix P^T A P (rows of about 30 entries, some of them weak).
const CsrMatrix<double>& coarse_matrix() {
  static const CsrMatrix<double> Ac = [] {
    const SpgemmBackend& gustavson = SpgemmRegistry::instance().get("gustavson");
    return gustavson.multiply(fixture().R, gustavson.multiply(*fixture().A, fixture().P));
  }();
  return Ac;
}
void BM_StrengthCoarse(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(strength_of_connection(coarse_matrix(), 0.02).graph.nodes);
  state.counters["nnz"] = static_cast<double>(coarse_matrix().nnz());
}
BENCHMARK(BM_StrengthCoarse)->Unit(benchmark::kMillisecond)->UseRealTime();
// The filtered matrix (weak entries lumped into the diagonal) of that level, as its prolongator smoothing takes it.
void BM_FilteredCoarse(benchmark::State& state) {
  const Strength strength = strength_of_connection(coarse_matrix(), 0.02);
  for (auto _ : state) benchmark::DoNotOptimize(filtered_matrix(coarse_matrix(), strength, Vector<double>{}).nnz());
  state.counters["weak"] = static_cast<double>(strength.weak_entries);
}
BENCHMARK(BM_FilteredCoarse)->Unit(benchmark::kMillisecond)->UseRealTime();
void BM_DiagonalCoarse(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(diagonal(coarse_matrix()).data());
}
BENCHMARK(BM_DiagonalCoarse)->Unit(benchmark::kMillisecond)->UseRealTime();

// The independent set alone (the aggregates' passes are the rest of BM_Mis2Aggregation); its rounds as a counter.
void BM_Mis2Set(benchmark::State& state) {
  const StrengthGraph g = strength_of_connection(*fixture().A, 0.02).graph;
  int rounds = 0;
  for (auto _ : state) benchmark::DoNotOptimize(mis2(g, 1, &rounds).data());
  state.counters["rounds"] = rounds;
}
BENCHMARK(BM_Mis2Set)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Mis2Aggregation(benchmark::State& state) {
  const StrengthGraph g = strength_of_connection(*fixture().A, 0.02).graph;
  for (auto _ : state) benchmark::DoNotOptimize(mis2_aggregation(g, 1).count);
}
BENCHMARK(BM_Mis2Aggregation)->Unit(benchmark::kMillisecond)->UseRealTime();

// The same on the 27-point stencil's graph (26 neighbours a node, as configs/poisson27.yaml's finest level), of
// the same edge.
void BM_Mis2Aggregation27(benchmark::State& state) {
  PoissonParams p;
  p.stencil = Stencil::p27;
  p.size = {bench_size(), bench_size(), bench_size()};
  const StrengthGraph g = strength_of_connection(poisson_matrix(p), 0.02).graph;
  for (auto _ : state) benchmark::DoNotOptimize(mis2_aggregation(g, 1).count);
}
BENCHMARK(BM_Mis2Aggregation27)->Unit(benchmark::kMillisecond)->UseRealTime();

// Galerkin products of the finest level with one SpGEMM backend; registered below for every backend
// in the registry, so the backends are compared in the same run.
void BM_SpgemmAP(benchmark::State& state, const SpgemmBackend* backend) {
  for (auto _ : state) benchmark::DoNotOptimize(backend->multiply(*fixture().A, fixture().P).nnz());
}

void BM_SpgemmRAP(benchmark::State& state, const SpgemmBackend* backend) {
  const CsrMatrix<double> AP = backend->multiply(*fixture().A, fixture().P);
  for (auto _ : state) benchmark::DoNotOptimize(backend->multiply(fixture().R, AP).nnz());
}

// The same products by their numeric phase alone, into the patterns that gustavson found (a re-setup's
// Galerkin products, spgemm/numeric_product.hpp); multiplications per second as a counter.
void BM_NumericAP(benchmark::State& state) {
  const CsrMatrix<double> pattern = SpgemmRegistry::instance().get("gustavson").multiply(*fixture().A, fixture().P);
  Offset products = 0;
  for (auto _ : state) benchmark::DoNotOptimize(numeric_product(*fixture().A, fixture().P, pattern, &products).nnz());
  state.counters["products"] = benchmark::Counter(static_cast<double>(products) * state.iterations(), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_NumericAP)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_NumericRAP(benchmark::State& state) {
  const SpgemmBackend& gustavson = SpgemmRegistry::instance().get("gustavson");
  const CsrMatrix<double> AP = gustavson.multiply(*fixture().A, fixture().P);
  const CsrMatrix<double> pattern = gustavson.multiply(fixture().R, AP);
  Offset products = 0;
  for (auto _ : state) benchmark::DoNotOptimize(numeric_product(fixture().R, AP, pattern, &products).nnz());
  state.counters["products"] = benchmark::Counter(static_cast<double>(products) * state.iterations(), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_NumericRAP)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Setup(benchmark::State& state) {
  for (auto _ : state) {
    const AmgHierarchy<double> amg(fixture().A, AmgParams{});
    benchmark::DoNotOptimize(amg.levels());
  }
}
BENCHMARK(BM_Setup)->Unit(benchmark::kMillisecond)->UseRealTime();

// One V-cycle of the default hierarchy, its operators in CSR or (where the solve would) sliced ELLPACK: every
// level's smoother, residual, restriction and prolongation, the products P and R gather-bound.
template <class V>
void vcycle_pass(benchmark::State& state) {
  const auto format = state.range(0) ? SpmvFormat::automatic : SpmvFormat::csr;
  const auto A = std::make_shared<const CsrMatrix<V>>(cast_values<V>(*fixture().A));
  const CpuBackend cpu;
  if (state.range(0) && !cpu.matrix(A, format)->sliced) {
    state.SkipWithError("no sliced copy: the CPU lacks AVX2 or the padding is too large");
    return;
  }
  const AmgHierarchy<V> amg(A, AmgParams{});
  const Vcycle<CpuBackend, V> vcycle(cpu, amg, format);
  Vector<V> b(fixture().A->rows, V(1)), x;
  for (auto _ : state) {
    vcycle.apply(b, x);
    benchmark::DoNotOptimize(x.data());
  }
}
void BM_VCycle(benchmark::State& state) {
  if (state.range(1))
    vcycle_pass<float>(state);
  else
    vcycle_pass<double>(state);
}
BENCHMARK(BM_VCycle)
    ->ArgsProduct({{0, 1}, {0, 1}})
    ->ArgNames({"sliced", "float"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();


// The two ways a dense accumulator lists its touched columns in order (spgemm/accumulator.hpp,
// bit_scan_beats_sort), each as magnus's numeric phase runs it: the columns are marked in a bitmap and
// listed as first touched, then either the bitmap is scanned (which clears it) or the list is sorted
// and its bits cleared. Arguments: window (columns), touched columns.
std::vector<Index> spread_columns(Index window, Index touched) {
  std::vector<Index> cols;
  for (std::uint64_t t = 0; cols.size() < static_cast<std::size_t>(touched); ++t) {
    const auto c = static_cast<Index>(seeded_hash(7, t) % static_cast<std::uint64_t>(window));
    if (std::find(cols.begin(), cols.end(), c) == cols.end()) cols.push_back(c);
  }
  return cols;
}

void list_touched_columns(benchmark::State& state, bool scan) {
  const auto window = static_cast<Index>(state.range(0)), touched = static_cast<Index>(state.range(1));
  const std::vector<Index> cols = spread_columns(window, touched);
  std::vector<std::uint64_t> words(bitmap_words(window), 0);
  std::vector<Index> listed(cols.size() + kListPadding);
  for (auto _ : state) {
    for (Index t = 0; t < touched; ++t) {
      words[static_cast<std::size_t>(cols[t]) >> 6] |= std::uint64_t{1} << (cols[t] & 63);
      listed[t] = cols[t];
    }
    if (scan) {
      list_set_bits(words.data(), static_cast<Index>(words.size()), listed.data());
    } else {
      sort_columns(listed.data(), cols.size());
      for (Index t = 0; t < touched; ++t) words[static_cast<std::size_t>(listed[t]) >> 6] = 0;
    }
    benchmark::DoNotOptimize(listed.data());
  }
}

void BM_ListTouchedByBitScan(benchmark::State& state) { list_touched_columns(state, true); }
void BM_ListTouchedBySort(benchmark::State& state) { list_touched_columns(state, false); }

void listing_cases(benchmark::internal::Benchmark* b) {
  for (std::int64_t window : {1 << 10, 1 << 13, 1 << 15, 1 << 18})
    for (std::int64_t touched : {8, 32, 64, 128, 512})
      if (touched <= window / 2) b->Args({window, touched});
}
BENCHMARK(BM_ListTouchedByBitScan)->Apply(listing_cases);
BENCHMARK(BM_ListTouchedBySort)->Apply(listing_cases);

// sort_columns on n distinct columns of a 2^15 window (as a dense accumulator lists them), with the widest
// network the CPU has (AVX-512, or AVX2 up to 64 columns) or std::sort: where the network starts to pay.
// Arguments: n, network (0: std::sort).
void BM_SortColumns(benchmark::State& state) {
  const auto n = static_cast<Index>(state.range(0));
  const bool network = state.range(1) != 0;
  const std::vector<Index> cols = spread_columns(1 << 15, n);
  std::vector<Index> sorted(cols.size());
  for (auto _ : state) {
    std::copy(cols.begin(), cols.end(), sorted.begin());
    sort_columns(sorted.data(), sorted.size(), network);
    benchmark::DoNotOptimize(sorted.data());
  }
}
BENCHMARK(BM_SortColumns)->ArgsProduct({{4, 6, 8, 9, 12, 13, 15, 16, 20, 24, 27, 32, 45, 48, 64}, {0, 1}})->ArgNames({"n", "network"});

// MAGNUS's register accumulator (spgemm/bitonic_sort.hpp) on fine chunks as the uniform set's 2^20
// columns make them: 1024 columns, n products each, columns uniform at random; 1024 such chunks per
// iteration (in L2, as the reorder leaves them), one at a time or two (accumulate_two_in_registers).
// Arguments: n, the column bits the caller declares (10: 16-bit keys; 25: 32-bit keys).
void register_accumulator(benchmark::State& state, bool two_at_a_time) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto column_bits = static_cast<int>(state.range(1));
  constexpr std::size_t kChunks = 1024;
  std::vector<ColumnValue<double>> items(kChunks * n);
  for (std::size_t t = 0; t < items.size(); ++t)
    items[t] = {static_cast<std::int32_t>(seeded_hash(3, t) % 1024), static_cast<double>(t)};
  std::vector<std::int32_t> cols(2 * kRegisterAccumulatorMax);
  std::vector<double> vals(2 * kRegisterAccumulatorMax);
  const auto chunk = [&](std::size_t c) { return items.data() + c * n; };
  for (auto _ : state) {
    for (std::size_t c = 0; c < kChunks; c += two_at_a_time ? 2 : 1)
      benchmark::DoNotOptimize(
          two_at_a_time ? accumulate_two_in_registers(chunk(c), n, 0, chunk(c + 1), n, 1024, cols.data(), vals.data(),
                                                      true, column_bits)
                        : accumulate_in_registers(chunk(c), n, 0, cols.data(), vals.data(), true, column_bits));
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kChunks * n));
}
void BM_RegisterAccumulator(benchmark::State& state) { register_accumulator(state, false); }
void BM_RegisterAccumulatorTwo(benchmark::State& state) { register_accumulator(state, true); }
BENCHMARK(BM_RegisterAccumulator)->ArgsProduct({{24, 28, 48, 57, 64}, {10, 25}});
BENCHMARK(BM_RegisterAccumulatorTwo)->ArgsProduct({{24, 28, 48, 57, 64}, {10, 25}});

}  // namespace
}  // namespace amgsolve

int main(int argc, char** argv) {
  amgsolve::keep_freed_memory();  // as amgsolve does: repetitions reuse the pages earlier ones freed
  for (const amgsolve::SpgemmBackend* b : amgsolve::SpgemmRegistry::instance().all()) {
    if (!b->available()) continue;
    benchmark::RegisterBenchmark(("BM_SpgemmAP/" + b->name()).c_str(), amgsolve::BM_SpgemmAP, b)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("BM_SpgemmRAP/" + b->name()).c_str(), amgsolve::BM_SpgemmRAP, b)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
