// Micro-benchmarks of the kernels that dominate setup and solve on 3D Poisson (7-point, 64^3 by
// default; AMGSOLVE_BENCH_N overrides). Run: build/bench/bench_kernels --benchmark_repetitions=5
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <memory>

#include "amg/hierarchy.hpp"
#include "amg/mis2_aggregation.hpp"
#include "amg/smoothed_prolongation.hpp"
#include "amg/strength.hpp"
#include "amg/tentative_prolongation.hpp"
#include "problems/poisson.hpp"
#include "sparse/csr_ops.hpp"
#include "spgemm/registry.hpp"

namespace amgsolve {
namespace {

struct Fixture {
  std::shared_ptr<const CsrMatrix<double>> A;
  CsrMatrix<double> P, R;
  Fixture() {
    PoissonParams p;
    const char* n = std::getenv("AMGSOLVE_BENCH_N");
    const std::int64_t size = n ? std::atoll(n) : 64;
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

void BM_Mis2Aggregation(benchmark::State& state) {
  const StrengthGraph g = strength_of_connection(*fixture().A, 0.02).graph;
  for (auto _ : state) benchmark::DoNotOptimize(mis2_aggregation(g, 1).count);
}
BENCHMARK(BM_Mis2Aggregation)->Unit(benchmark::kMillisecond)->UseRealTime();

// Galerkin products of the finest level with one SpGEMM backend; registered below for every backend
// in the registry, so the backends are compared in the same run.
void BM_SpgemmAP(benchmark::State& state, const SpgemmBackend* backend) {
  for (auto _ : state) benchmark::DoNotOptimize(backend->multiply(*fixture().A, fixture().P).nnz());
}

void BM_SpgemmRAP(benchmark::State& state, const SpgemmBackend* backend) {
  const CsrMatrix<double> AP = backend->multiply(*fixture().A, fixture().P);
  for (auto _ : state) benchmark::DoNotOptimize(backend->multiply(fixture().R, AP).nnz());
}

void BM_Setup(benchmark::State& state) {
  for (auto _ : state) {
    const AmgHierarchy<double> amg(fixture().A, AmgParams{});
    benchmark::DoNotOptimize(amg.levels());
  }
}
BENCHMARK(BM_Setup)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_VCycle(benchmark::State& state) {
  const AmgHierarchy<double> amg(fixture().A, AmgParams{});
  Vector<double> b(fixture().A->rows, 1.0), x;
  for (auto _ : state) {
    amg.apply(b, x);
    benchmark::DoNotOptimize(x.data());
  }
}
BENCHMARK(BM_VCycle)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace amgsolve

int main(int argc, char** argv) {
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
