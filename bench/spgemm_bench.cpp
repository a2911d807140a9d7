// spgemm-bench: C = A * A (A square) with every SpGEMM backend, on Matrix Market files and generated
// matrices, median of N timed runs after warm-up, each result checked against the first backend's.
//
//   spgemm-bench [--matrix A.mtx ...] [--generate SPEC ...] [--runs 5] [--warmup 1] [--threads N]
//                [--backends gustavson,hash] [--csv out.csv]
//   SPEC: poisson7:N (N^3 7-point), poisson27:N, poisson5:N (N^2), random:N:K (N x N, K nonzeros per row,
//         uniform columns), rmat:SCALE:EDGES (2^SCALE nodes, EDGES per node, Graph500 a,b,c = .57,.19,.19)
#include <omp.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "common/error.hpp"
#include "common/hash.hpp"
#include "problems/poisson.hpp"
#include "sparse/csr_ops.hpp"
#include "sparse/matrix_market.hpp"
#include "spgemm/comparison.hpp"
#include "spgemm/registry.hpp"

namespace amgsolve {
namespace {

struct Input {
  std::string name;
  CsrMatrix<double> A;
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string part; std::getline(in, part, sep);) out.push_back(part);
  return out;
}

CsrMatrix<double> random_uniform(Index n, int per_row, std::uint64_t seed) {
  std::vector<Triplet<double>> t;
  t.reserve(static_cast<std::size_t>(n) * per_row);
  for (Index i = 0; i < n; ++i)
    for (int k = 0; k < per_row; ++k) {
      const std::uint64_t key = static_cast<std::uint64_t>(i) * per_row + k;
      t.push_back({i, static_cast<Index>(seeded_hash(seed, key) % static_cast<std::uint64_t>(n)),
                   seeded_uniform(seed + 1, key) - 0.5});
    }
  return csr_from_triplets(n, n, std::move(t));
}

// R-MAT (Chakrabarti, Zhan & Faloutsos 2004) with the Graph500 probabilities.
CsrMatrix<double> rmat(int scale, int edges_per_node, std::uint64_t seed) {
  const Index n = Index{1} << scale;
  std::vector<Triplet<double>> t;
  const std::int64_t edges = static_cast<std::int64_t>(n) * edges_per_node;
  for (std::int64_t e = 0; e < edges; ++e) {
    Index row = 0, col = 0;
    for (int bit = 0; bit < scale; ++bit) {
      const double u = seeded_uniform(seed, static_cast<std::uint64_t>(e) * 64 + bit);
      const int quadrant = u < 0.57 ? 0 : u < 0.76 ? 1 : u < 0.95 ? 2 : 3;
      row = (row << 1) | (quadrant >> 1);
      col = (col << 1) | (quadrant & 1);
    }
    t.push_back({row, col, 1.0});
  }
  return csr_from_triplets(n, n, std::move(t));
}

Input generate(const std::string& spec) {
  const std::vector<std::string> f = split(spec, ':');
  auto number = [&](std::size_t i) {
    if (i >= f.size()) throw InputError("--generate " + spec + ": missing parameter " + std::to_string(i));
    return std::stoll(f[i]);
  };
  PoissonParams p;
  if (f[0] == "poisson7" || f[0] == "poisson27") {
    p.stencil = f[0] == "poisson7" ? Stencil::p7 : Stencil::p27;
    p.size = {number(1), number(1), number(1)};
    return {spec, poisson_matrix(p)};
  }
  if (f[0] == "poisson5") {
    p.stencil = Stencil::p5;
    p.size = {number(1), number(1)};
    return {spec, poisson_matrix(p)};
  }
  if (f[0] == "random") return {spec, random_uniform(static_cast<Index>(number(1)), static_cast<int>(number(2)), 7)};
  if (f[0] == "rmat") return {spec, rmat(static_cast<int>(number(1)), static_cast<int>(number(2)), 7)};
  throw InputError("--generate " + spec + ": unknown generator (poisson7, poisson27, poisson5, random, rmat)");
}

struct Measurement {
  std::string matrix, backend;
  double median_seconds = 0;
  SpgemmStats stats;
  bool agrees = false;
};

Measurement measure(const Input& in, const SpgemmBackend& backend, int warmup, int runs,
                    const CsrMatrix<double>* reference, CsrMatrix<double>* result) {
  Measurement m;
  m.matrix = in.name;
  m.backend = backend.name();
  for (int w = 0; w < warmup; ++w) backend.multiply(in.A, in.A);
  std::vector<double> seconds;
  for (int r = 0; r < runs; ++r) {
    SpgemmStats stats;
    CsrMatrix<double> C = backend.multiply(in.A, in.A, &stats);
    seconds.push_back(stats.seconds());
    m.stats = stats;
    if (r == 0) {
      double difference = 0;
      m.agrees = reference ? spgemm_results_agree(C, *reference, 1e-12, difference) : true;
      if (result) *result = std::move(C);
    }
  }
  std::sort(seconds.begin(), seconds.end());
  m.median_seconds = seconds[seconds.size() / 2];
  return m;
}

}  // namespace
}  // namespace amgsolve

int main(int argc, char** argv) {
  using namespace amgsolve;
  std::vector<std::string> matrices, generators, backend_names;
  int runs = 5, warmup = 1, threads = 0;
  std::string csv;
  CLI::App app{"spgemm-bench: C = A*A with every SpGEMM backend, median of N runs"};
  app.add_option("--matrix", matrices, "Matrix Market file(s), square");
  app.add_option("--generate", generators, "poisson7:N, poisson27:N, poisson5:N, random:N:K, rmat:SCALE:EDGES");
  app.add_option("--runs", runs, "timed runs per backend (median reported)")->check(CLI::PositiveNumber);
  app.add_option("--warmup", warmup, "untimed runs first")->check(CLI::NonNegativeNumber);
  app.add_option("--threads", threads, "OpenMP threads");
  app.add_option("--backends", backend_names, "subset of backends (default: all available)")->delimiter(',');
  app.add_option("--csv", csv, "also write the table as CSV");
  CLI11_PARSE(app, argc, argv);
  try {
    if (threads > 0) omp_set_num_threads(threads);
    std::vector<const SpgemmBackend*> backends;
    for (const SpgemmBackend* b : SpgemmRegistry::instance().all())
      if (b->available() && (backend_names.empty() || std::count(backend_names.begin(), backend_names.end(), b->name())))
        backends.push_back(b);
    if (backends.empty()) throw InputError("no backend selected (see amgsolve --list-backends)");
    std::vector<Input> inputs;
    for (const std::string& path : matrices) inputs.push_back({path, read_matrix_market(path)});
    for (const std::string& spec : generators) inputs.push_back(generate(spec));
    if (inputs.empty()) throw InputError("nothing to multiply: give --matrix or --generate");

    std::vector<Measurement> rows;
    std::printf("%-28s %-10s %10s %9s %12s %7s %10s %7s %7s\n", "matrix", "backend", "median s", "GFLOP/s", "nnz(C)",
                "compr.", "extra MiB", "ratio", "agrees");
    for (const Input& in : inputs) {
      if (!in.A.is_square()) throw InputError(in.name + ": A*A needs a square matrix");
      CsrMatrix<double> reference;
      double baseline = 0;
      for (std::size_t b = 0; b < backends.size(); ++b) {
        const Measurement m =
            measure(in, *backends[b], warmup, runs, b == 0 ? nullptr : &reference, b == 0 ? &reference : nullptr);
        if (b == 0) baseline = m.median_seconds;
        const double gflops = m.median_seconds > 0 ? m.stats.flops() / m.median_seconds * 1e-9 : 0;
        std::printf("%-28s %-10s %10.4f %9.3f %12lld %7.2f %10.1f %7.2f %7s\n", in.name.c_str(), m.backend.c_str(),
                    m.median_seconds, gflops, static_cast<long long>(m.stats.nnz), m.stats.compression_factor(),
                    static_cast<double>(m.stats.extra_bytes) / (1 << 20), m.median_seconds / baseline,
                    m.agrees ? "yes" : "NO");
        std::fflush(stdout);
        rows.push_back(m);
      }
    }
    if (!csv.empty()) {
      std::ofstream out(csv);
      out << "matrix,backend,median_seconds,gflops,nnz,compression_factor,extra_bytes,agrees\n";
      for (const Measurement& m : rows)
        out << m.matrix << ',' << m.backend << ',' << m.median_seconds << ','
            << (m.median_seconds > 0 ? m.stats.flops() / m.median_seconds * 1e-9 : 0) << ',' << m.stats.nnz << ','
            << m.stats.compression_factor() << ',' << m.stats.extra_bytes << ',' << (m.agrees ? "true" : "false")
            << '\n';
    }
  } catch (const Error& e) {
    std::fprintf(stderr, "spgemm-bench: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "spgemm-bench: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
