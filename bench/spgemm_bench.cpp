// spgemm-bench: C = A * B with every SpGEMM backend, median of N timed runs after warm-up, each result
// checked against an untimed product of the first backend. Four kinds of input:
//   * A^2 for Matrix Market files (--matrix; pattern files read as 0/1 matrices) and generated matrices
//     (--generate SPEC);
//   * A * B for two Matrix Market files (--product A.mtx,B.mtx);
//   * the Galerkin chain of an AMG setup (--galerkin SPEC): every product the hierarchy computes
//     (A_f T, A P, R (A P) on every level), captured from a gustavson setup with the default parameters;
//   * MAGNUS's uniform random set (Wolfson-Pou et al. 2025, Fig. 9; --uniform FROM:TO): C has
//     --uniform-rows rows and 2^FROM .. 2^TO columns (or any counts: --uniform-columns N,...), A and B
//     --uniform-per-row uniform nonzeros per row.
//     With --triad the STREAM triad bandwidth is measured first and each row shows the ideal time of
//     the paper's eq. (8)-(9) (minimum data volume / bandwidth) and the measured multiple of it.
// At the end, the geometric mean over the A^2, A * B and Galerkin inputs of each baseline's time over each
// backend's time (how many times faster than graphblas and eigen).
//
//   spgemm-bench [--matrix A.mtx ...] [--product A.mtx,B.mtx ...] [--generate SPEC ...] [--galerkin SPEC ...]
//                [--uniform 16:26] [--uniform-columns N,...] [--uniform-rows 1024] [--uniform-per-row 256]
//                [--triad] [--runs 5] [--warmup 1] [--threads N] [--backends gustavson,hash] [--csv out.csv]
//   SPEC: poisson7:N (N^3 7-point), poisson27:N, poisson5:N (N^2), random:N:K (N x N, K distinct uniform
//         columns per row), rmat:SCALE:EDGES (2^SCALE nodes, EDGES per node, Graph500 a,b,c = .57,.19,.19)
#include <omp.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <new>
#include <sstream>
#include <unordered_set>

#include "amg/hierarchy.hpp"
#include "common/atomic_file.hpp"
#include "common/csv.hpp"
#include "common/environment.hpp"
#include "bench/bench_cli.hpp"
#include "bench/median.hpp"
#include "common/cli_checks.hpp"
#include "common/error.hpp"
#include "common/log.hpp"
#include "common/hash.hpp"
#include "common/memory.hpp"
#include "common/timer.hpp"
#include "problems/poisson.hpp"
#include "problems/problem.hpp"
#include "sparse/csr_ops.hpp"
#include "sparse/matrix_market.hpp"
#include "spgemm/comparison.hpp"
#include "spgemm/registry.hpp"

namespace amgsolve {
namespace {

enum class Set { square, product, galerkin, uniform };

struct Input {
  std::string name;
  std::shared_ptr<const CsrMatrix<double>> A, B;  // C = A * B (B == A for the squares)
  Set set = Set::square;
};

// A^2 of A, checked square as it is read (before any input is timed).
Input square(std::string name, CsrMatrix<double> A) {
  if (!A.is_square())
    throw InputError(name + ": A*A needs a square matrix, this one is " + std::to_string(A.rows) + " x " +
                     std::to_string(A.cols));
  auto shared = std::make_shared<const CsrMatrix<double>>(std::move(A));
  return {std::move(name), shared, shared, Set::square};
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string part; std::getline(in, part, sep);) out.push_back(part);
  return out;
}

// per_row distinct columns of [0, cols), uniformly: Floyd's sampling (Bentley & Floyd, "A sample of
// brilliance", CACM 30(9), 1987), which draws exactly per_row times; the draws are a seeded hash of the row
// and the draw, so the matrix does not depend on the thread count. (Drawing per_row columns with
// replacement, as before 2026-11-29, left fewer: 226 of 256 in 1,024 columns, 632 of 1,000 in 1,000.)
std::vector<Index> distinct_columns(Index row, Index cols, Index per_row, std::uint64_t seed) {
  std::unordered_set<Index> chosen;
  chosen.reserve(static_cast<std::size_t>(per_row) * 2);
  const std::uint64_t row_seed = seeded_hash(seed, static_cast<std::uint64_t>(row));
  for (Index j = cols - per_row; j < cols; ++j) {
    const auto t = static_cast<Index>(seeded_hash(row_seed, static_cast<std::uint64_t>(j)) %
                                      (static_cast<std::uint64_t>(j) + 1));  // uniform in [0, j]
    chosen.insert(chosen.count(t) ? j : t);
  }
  std::vector<Index> columns(chosen.begin(), chosen.end());
  std::sort(columns.begin(), columns.end());
  return columns;
}

// rows x cols with min(per_row, cols) distinct uniform columns in every row, values uniform in [-0.5, 0.5).
CsrMatrix<double> random_uniform(Index rows, Index cols, int per_row, std::uint64_t seed) {
  const Index count = std::min<Index>(per_row, cols);
  std::vector<Triplet<double>> t;
  t.reserve(static_cast<std::size_t>(rows) * count);
  for (Index i = 0; i < rows; ++i) {
    const std::vector<Index> columns = distinct_columns(i, cols, count, seed);
    for (Index k = 0; k < count; ++k) {
      const std::uint64_t key = static_cast<std::uint64_t>(i) * count + k;
      t.push_back({i, columns[static_cast<std::size_t>(k)], seeded_uniform(seed + 1, key) - 0.5});
    }
  }
  return csr_from_triplets(rows, cols, std::move(t));
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

// The matrix of a SPEC given to `option` (--generate, --galerkin).
CsrMatrix<double> generate_matrix(const std::string& spec, const std::string& option = "--generate") {
  const std::vector<std::string> f = split(spec, ':');
  const std::string named = option + " " + spec;
  // Parameter i, a whole number in [1, most]: a wrong one is named, never a crash or a silent 0. Parameter
  // `last` is the generator's last: one after it is refused, not ignored.
  auto number = [&](std::size_t i, std::int64_t most, std::size_t last) {
    if (i >= f.size()) throw InputError(named + ": missing parameter " + std::to_string(i));
    if (f.size() > last + 1)
      throw InputError(named + ": " + f[0] + " takes " + std::to_string(last) + " parameter" + (last > 1 ? "s" : "") +
                       ", got " + std::to_string(f.size() - 1));
    std::int64_t v = 0;
    const auto [end, error] = std::from_chars(f[i].data(), f[i].data() + f[i].size(), v);
    if (error != std::errc() || end != f[i].data() + f[i].size() || v < 1 || v > most)
      throw InputError(named + ": parameter " + std::to_string(i) + " must be a whole number from 1 to " +
                       std::to_string(most) + ", got '" + f[i] + "'");
    return v;
  };
  constexpr std::int64_t kMaxRows = std::numeric_limits<Index>::max();
  PoissonParams p;
  if (f[0] == "poisson7" || f[0] == "poisson27") {
    p.stencil = f[0] == "poisson7" ? Stencil::p7 : Stencil::p27;
    const std::int64_t n = number(1, 1290, 1);  // 1290^3 < 2^31 rows
    p.size = {n, n, n};
    require_memory(estimated_solve_bytes(n * n * n, n * n * n * (f[0] == "poisson7" ? 7 : 27)), named);
    return poisson_matrix(p);
  }
  if (f[0] == "poisson5") {
    p.stencil = Stencil::p5;
    const std::int64_t n = number(1, 46340, 1);  // 46340^2 < 2^31 rows
    p.size = {n, n};
    require_memory(estimated_solve_bytes(n * n, 5 * n * n), named);
    return poisson_matrix(p);
  }
  if (f[0] == "random") {
    const auto n = static_cast<Index>(number(1, kMaxRows, 2));
    const auto per_row = static_cast<int>(number(2, std::min<std::int64_t>(n, 100000), 2));
    require_memory(24 * static_cast<std::uint64_t>(n) * per_row, named);
    return random_uniform(n, n, per_row, 7);
  }
  if (f[0] == "rmat") {
    const auto scale = static_cast<int>(number(1, 30, 2));
    const auto edges = static_cast<int>(number(2, 1000, 2));
    require_memory(24 * (std::uint64_t{1} << scale) * edges, named);
    return rmat(scale, edges, 7);
  }
  throw InputError(named + ": unknown generator (poisson7, poisson27, poisson5, random, rmat)");
}

// Every product of a gustavson AMG setup of the generated matrix, in the order they are computed.
std::vector<Input> galerkin_chain(const std::string& spec) {
  if (spec.rfind("poisson", 0) != 0)
    throw InputError("--galerkin " + spec + ": takes the Poisson SPECs (poisson5:N, poisson7:N, poisson27:N): the "
                     "AMG setup needs a symmetric positive definite matrix");
  std::vector<Input> chain;
  auto A = std::make_shared<const CsrMatrix<double>>(generate_matrix(spec, "--galerkin"));
  AmgParams params;
  const AmgHierarchy<double> amg(A, params, {},
                                 [&](int level, const std::string& product, const CsrMatrix<double>& a,
                                     const CsrMatrix<double>& b, const CsrMatrix<double>&) {
                                   chain.push_back({spec + " L" + std::to_string(level) + " " + product,
                                                    std::make_shared<const CsrMatrix<double>>(a),
                                                    std::make_shared<const CsrMatrix<double>>(b), Set::galerkin});
                                 });
  if (chain.empty())
    throw InputError("--galerkin " + spec + ": the setup makes no product (" + std::to_string(A->rows) +
                     " rows are at most amg.coarse_size, " + std::to_string(params.coarse_size) +
                     ": the matrix is the coarsest level)");
  return chain;
}

// The column counts of --uniform FROM:TO: 2^FROM, 2^(FROM+2), ..., 2^TO, named by their exponent.
std::vector<std::pair<std::string, Index>> uniform_powers(const std::string& range) {
  const std::vector<std::string> f = split(range, ':');
  if (f.size() != 2) throw InputError("--uniform " + range + ": expected FROM:TO (log2 of the column count)");
  int from = 0, to = 0;
  for (const auto& [text, value] : {std::pair{f[0], &from}, std::pair{f[1], &to}}) {
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), *value);
    if (error != std::errc() || end != text.data() + text.size())
      throw InputError("--uniform " + range + ": FROM and TO must be whole numbers, got '" + text + "'");
  }
  if (from < 1 || to > 30 || from > to) throw InputError("--uniform " + range + ": need 1 <= FROM <= TO <= 30");
  std::vector<std::pair<std::string, Index>> columns;
  for (int c = from; c <= to; c += 2) columns.emplace_back("2^" + std::to_string(c), Index{1} << c);
  return columns;
}

// MAGNUS Fig. 9: C = A * B with `rows` rows and the given column counts, uniform random A (rows x rows)
// and B (rows x columns), `per_row` nonzeros in every row of both.
std::vector<Input> uniform_set(const std::vector<std::pair<std::string, Index>>& columns, Index rows, int per_row) {
  std::vector<Input> set;
  if (columns.empty()) return set;
  auto A = std::make_shared<const CsrMatrix<double>>(random_uniform(rows, rows, per_row, 11));
  for (const auto& [name, count] : columns)
    set.push_back({"uniform " + name + " cols", A,
                   std::make_shared<const CsrMatrix<double>>(random_uniform(rows, count, per_row, 13)), Set::uniform});
  return set;
}

// C = A * B of two Matrix Market files given as "A.mtx,B.mtx".
Input file_product(const std::string& pair) {
  const std::vector<std::string> files = split(pair, ',');
  if (files.size() != 2) throw InputError("--product " + pair + ": expected A.mtx,B.mtx");
  auto A = std::make_shared<const CsrMatrix<double>>(read_matrix_market(files[0], PatternValues::ones));
  auto B = std::make_shared<const CsrMatrix<double>>(read_matrix_market(files[1], PatternValues::ones));
  if (A->cols != B->rows)
    throw InputError("--product " + pair + ": " + files[0] + " has " + std::to_string(A->cols) + " columns but " +
                     files[1] + " has " + std::to_string(B->rows) + " rows");
  return {files[0] + "*" + files[1], std::move(A), std::move(B), Set::product};
}

// STREAM triad a = b + s c with OpenMP, bytes moved 3 * 8 * n per sweep (STREAM's convention),
// best of `sweeps` after one untimed sweep (the first touch).
double triad_bandwidth(std::int64_t n, int sweeps) {
  Array<double> a(static_cast<std::size_t>(n)), b(a.size()), c(a.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) {
    a[i] = 0;
    b[i] = 1;
    c[i] = 2;
  }
  double best = 0;
  for (int s = 0; s <= sweeps; ++s) {
    Timer timer;
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) a[i] = b[i] + 3.0 * c[i];
    const double seconds = timer.seconds();
    if (s > 0) best = std::max(best, 24.0 * static_cast<double>(n) / seconds);
  }
  return best;
}

// MAGNUS eq. (8)-(9): minimum bytes read and written by a two-phase Gustavson SpGEMM that reuses no
// row of B from cache; s_rowPtr = 8 (int64 offsets), s_colIdx = 4, s_val = 8 (double) here.
double ideal_bytes(const CsrMatrix<double>& A, const CsrMatrix<double>& B, Offset nnz_c) {
  const double s_ptr = sizeof(Offset), s_col = sizeof(Index), s_val = sizeof(double);
  const double products = static_cast<double>(spgemm_multiplications(A, B));
  const double read = 2.0 * (A.rows + 1) * s_ptr + static_cast<double>(A.nnz()) * (4 * s_ptr + 2 * s_col + s_val) +
                      products * (2 * s_col + s_val);
  const double write = (A.rows + 1.0) * s_ptr + static_cast<double>(nnz_c) * (s_col + s_val);
  return read + write;
}

// A product that did not fit: std::bad_alloc, or MemoryLimitError from a backend's check before allocating.
bool out_of_memory(const std::exception& e) {
  return dynamic_cast<const std::bad_alloc*>(&e) || dynamic_cast<const MemoryLimitError*>(&e);
}

struct Measurement {
  std::string matrix, backend;
  bool external_baseline = false;
  double median_seconds = 0;
  double median_symbolic_seconds = 0;  // of the symbolic phase alone (backends that have one)
  double min_seconds = 0;  // the fastest run: on a shared, noisy machine, the steadiest for A/B comparisons
  SpgemmStats stats;
  bool agrees = false;
  std::string failed;  // why the backend has no result ("out of memory"); not in the CSV

  double gflops() const { return median_seconds > 0 ? stats.flops() / median_seconds * 1e-9 : 0.0; }
};

Measurement measure(const Input& in, const SpgemmBackend& backend, int warmup, int runs,
                    const CsrMatrix<double>& reference, const std::vector<double>& magnitude) {
  Measurement m;
  m.matrix = in.name;
  m.backend = backend.name();
  m.external_baseline = backend.external_baseline();
  for (int w = 0; w < warmup; ++w) backend.multiply(*in.A, *in.B);
  std::vector<double> seconds, symbolic_seconds;
  for (int r = 0; r < runs; ++r) {
    SpgemmStats stats;
    CsrMatrix<double> C = backend.multiply(*in.A, *in.B, &stats);
    seconds.push_back(stats.seconds());
    symbolic_seconds.push_back(stats.symbolic_seconds);
    m.stats = stats;
    // Checked after the last run, so that every backend's timed runs follow each other alike.
    if (r + 1 == runs) {
      double difference = 0;
      m.agrees = spgemm_results_agree(C, reference, magnitude, spgemm_agreement_tolerance<double>(), difference);
    }
  }
  m.median_seconds = median(seconds);
  m.min_seconds = *std::min_element(seconds.begin(), seconds.end());
  m.median_symbolic_seconds = median(symbolic_seconds);
  return m;
}

// Geometric mean over the A^2, A * B and Galerkin inputs of time(baseline) / time(backend), per backend.
void print_speedups(const std::vector<Measurement>& rows, const std::vector<Input>& inputs,
                    const std::vector<std::string>& baselines) {
  std::map<std::string, std::map<std::string, double>> time;  // matrix -> backend -> seconds
  std::map<std::string, Set> set;
  for (const Input& in : inputs) set[in.name] = in.set;
  for (const Measurement& m : rows) time[m.matrix][m.backend] = m.median_seconds;
  for (const std::string& baseline : baselines) {
    std::map<std::string, std::pair<double, int>> log_sum;  // backend -> (sum of logs, count)
    for (const auto& [matrix, by_backend] : time) {
      if (set[matrix] == Set::uniform || !by_backend.count(baseline)) continue;
      for (const auto& [backend, seconds] : by_backend) {
        if (seconds <= 0 || by_backend.at(baseline) <= 0) continue;
        log_sum[backend].first += std::log(by_backend.at(baseline) / seconds);
        ++log_sum[backend].second;
      }
    }
    if (log_sum.empty()) continue;
    std::printf("\ngeometric mean over %d A^2 / A*B / Galerkin products of time(%s) / time(backend):\n",
                log_sum.begin()->second.second, baseline.c_str());
    for (const auto& [backend, sum] : log_sum)
      std::printf("  %-12s %6.2fx\n", backend.c_str(), std::exp(sum.first / sum.second));
  }
}

// The table as CSV, whole or not at all; columns added later go at the end, so that readers by position
// keep working.
void write_csv(const std::string& path, const std::vector<Measurement>& rows) {
  AtomicFile target(path);
  {
    std::ofstream out(target.temp_path());
    out << "matrix,backend,median_seconds,gflops,nnz,compression_factor,extra_bytes,agrees,"
           "median_symbolic_seconds,min_seconds,external_baseline,choice\n";
    for (const Measurement& m : rows)
      out << csv_field(m.matrix) << ',' << m.backend << ',' << m.median_seconds << ',' << m.gflops() << ','
          << m.stats.nnz << ',' << m.stats.compression_factor() << ',' << m.stats.extra_bytes << ','
          << (m.agrees ? "true" : "false") << ',' << m.median_symbolic_seconds << ',' << m.min_seconds << ','
          << (m.external_baseline ? "true" : "false") << ',' << csv_field(m.stats.choice) << '\n';
    if (!out.flush()) throw Error("cannot write " + target.described() + ": " + std::strerror(errno));
  }
  target.commit();
}

}  // namespace
}  // namespace amgsolve

int main(int argc, char** argv) {
  using namespace amgsolve;
  keep_freed_memory();  // as amgsolve does: timed runs reuse the pages earlier runs freed, for every backend
  std::vector<std::string> matrices, generators, galerkin, backend_names;
  std::string uniform;
  std::vector<Index> uniform_columns;
  std::vector<std::string> products;
  Index uniform_rows = 1024;
  int uniform_per_row = 256;
  bool triad = false;
  int runs = 5, warmup = 1, threads = 0;
  std::string csv;
  CLI::App app{"spgemm-bench: C = A*B with every SpGEMM backend, median of N runs"};
  app.option_defaults()->always_capture_default();  // --help shows each default
  app.add_option("--matrix", matrices, "Matrix Market file(s), square: A*A (pattern files as 0/1 matrices)");
  app.add_option("--generate", generators, "A*A of poisson7:N, poisson27:N, poisson5:N, random:N:K, rmat:SCALE:EDGES");
  app.add_option("--galerkin", galerkin, "every product of an AMG setup of a generated matrix (same SPECs)");
  app.add_option("--product", products, "C = A*B of two Matrix Market files, A.mtx,B.mtx (repeatable)");
  app.add_option("--uniform", uniform, "MAGNUS Fig. 9 set: FROM:TO, log2 of the column counts (step 2)");
  app.add_option("--uniform-columns", uniform_columns, "uniform set with these column counts (e.g. 100000,3000000)")
      ->delimiter(',')
      ->check(whole_number_in(Index{1}, std::numeric_limits<Index>::max()));
  app.add_option("--uniform-rows", uniform_rows, "rows of A and C in the uniform set")
      ->check(whole_number_in(Index{1}, std::numeric_limits<Index>::max()));
  app.add_option("--uniform-per-row", uniform_per_row, "nonzeros per row of A and B in the uniform set")
      ->check(whole_number_in(1, std::numeric_limits<int>::max()));
  app.add_flag("--triad", triad, "measure the STREAM triad bandwidth and show the ideal time of eq. (8)-(9)");
  app.add_option("--runs", runs, "timed runs per backend (median reported)")->check(whole_number_in(1, 1000));
  app.add_option("--warmup", warmup, "untimed runs first")->check(whole_number_in(0, 1000));
  app.add_option("--threads", threads, "OpenMP threads")->check(whole_number_in(1, kMaxThreads))->default_str("all cores");
  app.add_option("--backends", backend_names, "subset of backends (default: all available)")->delimiter(',');
  app.add_option("--csv", csv, "also write the table as CSV");
  if (const auto status = parse_command_line(app, argc, argv, "spgemm-bench")) return *status;
  try {
    if (threads > 0) omp_set_num_threads(threads);
    if (!csv.empty()) require_writable(csv, "CSV file", {"matrix,backend,median_seconds,", true});  // now, not after the measurements
    std::vector<const SpgemmBackend*> backends;
    for (const std::string& name : backend_names) {  // a name asked for that is not there is an error, not left out
      const SpgemmBackend* b = SpgemmRegistry::instance().find(name);
      if (!b) throw InputError("--backends: no backend '" + name + "' (see amgsolve --list-backends)");
      if (!b->available()) throw InputError("--backends: " + name + " is not available here: " + b->unavailable_reason());
    }
    for (const SpgemmBackend* b : SpgemmRegistry::instance().all())
      if (b->available() && (backend_names.empty() || std::count(backend_names.begin(), backend_names.end(), b->name())))
        backends.push_back(b);
    if (backends.empty()) throw InputError("no backend selected (see amgsolve --list-backends)");
    std::vector<Input> inputs;
    for (const std::string& path : matrices)
      inputs.push_back(square(path, read_matrix_market(path, PatternValues::ones)));
    for (const std::string& spec : generators) inputs.push_back(square(spec, generate_matrix(spec)));
    for (const std::string& spec : galerkin)
      for (Input& in : galerkin_chain(spec)) inputs.push_back(std::move(in));
    for (const std::string& pair : products) inputs.push_back(file_product(pair));
    std::vector<std::pair<std::string, Index>> columns;
    if (!uniform.empty()) columns = uniform_powers(uniform);
    for (const Index count : uniform_columns) columns.emplace_back(std::to_string(count), count);
    for (Input& in : uniform_set(columns, uniform_rows, uniform_per_row)) inputs.push_back(std::move(in));
    if (inputs.empty())
      throw InputError("nothing to multiply: give --matrix, --product, --generate, --galerkin or --uniform");
    const double bandwidth = triad ? triad_bandwidth(std::int64_t{1} << 26, 5) : 0.0;
    if (triad) std::printf("STREAM triad bandwidth: %.2f GB/s (%d threads)\n\n", bandwidth * 1e-9, omp_get_max_threads());

    std::vector<Measurement> rows;
    int failed = 0;  // products a backend ran out of memory on
    std::printf("%-28s %-10s %10s %9s %12s %7s %10s %7s %7s %9s\n", "matrix", "backend", "median s", "GFLOP/s",
                "nnz(C)", "compr.", "extra MiB", "ratio", "agrees", "x ideal");
    for (std::size_t input = 0; input < inputs.size(); ++input) {
      const Input& in = inputs[input];
      CsrMatrix<double> reference;
      std::vector<double> magnitude;  // (|A| |B|)_ij: what each entry's rounding is judged against
      try {
        reference = backends.front()->multiply(*in.A, *in.B);  // untimed
        magnitude = product_magnitudes(*in.A, *in.B, reference);
      } catch (const std::exception& e) {
        if (!out_of_memory(e)) throw;
        std::printf("%-28s %-10s failed: out of memory (the reference product; the input is left out)\n",
                    in.name.c_str(), backends.front()->name().c_str());
        ++failed;
        continue;
      }
      // Each input starts with the next backend in turn. The position in the order biased the medians by
      // about 5% in geometric mean over the suite (the same gustavson code, called directly first and
      // through auto second, 2026-11-22), and rotating spreads that over every backend alike.
      std::vector<Measurement> measured(backends.size());
      for (std::size_t step = 0; step < backends.size(); ++step) {
        const std::size_t b = (input + step) % backends.size();
        try {
          measured[b] = measure(in, *backends[b], warmup, runs, reference, magnitude);
        } catch (const std::exception& e) {  // one backend's workspace too large: said, and the others go on
          if (!out_of_memory(e)) throw;
          measured[b].matrix = in.name;
          measured[b].backend = backends[b]->name();
          measured[b].failed = "out of memory";
        }
      }
      const double baseline = measured.front().median_seconds;
      for (const Measurement& m : measured) {
        if (!m.failed.empty()) {
          std::printf("%-28s %-10s failed: %s\n", m.matrix.c_str(), m.backend.c_str(), m.failed.c_str());
          ++failed;
          continue;
        }
        const double ideal = bandwidth > 0 ? ideal_bytes(*in.A, *in.B, m.stats.nnz) / bandwidth : 0.0;
        const std::string shown = m.backend + (m.external_baseline ? "*" : "");
        std::printf("%-28s %-10s %10.4f %9.3f %12lld %7.2f %10.1f %7.2f %7s", in.name.c_str(), shown.c_str(),
                    m.median_seconds, m.gflops(), static_cast<long long>(m.stats.nnz), m.stats.compression_factor(),
                    static_cast<double>(m.stats.extra_bytes) / (1 << 20), m.median_seconds / baseline,
                    m.agrees ? "yes" : "NO");
        if (ideal > 0 && in.set == Set::uniform) std::printf(" %9.2f", m.median_seconds / ideal);
        if (!m.stats.choice.empty()) std::printf("  -> %s", m.stats.choice.c_str());
        std::printf("\n");
        rows.push_back(m);
      }
      std::fflush(stdout);
    }
    if (std::any_of(backends.begin(), backends.end(), [](const SpgemmBackend* b) { return b->external_baseline(); }))
      std::printf("* external baseline (a library's product, for comparison)\n");
    print_speedups(rows, inputs, {"graphblas", "eigen", "gustavson", "cusparse"});
    if (!csv.empty()) write_csv(csv, rows);
    if (failed > 0)
      throw Error(std::to_string(failed) + " product(s) ran out of memory (failed: in the table; the CSV holds the "
                  "others)");
    const auto disagreeing = std::count_if(rows.begin(), rows.end(), [](const Measurement& m) { return !m.agrees; });
    if (disagreeing > 0)
      throw Error(std::to_string(disagreeing) + " of " + std::to_string(rows.size()) +
                  " results differ from the first backend's (agrees: NO in the table)");
  } catch (const Error& e) {
    std::fprintf(stderr, "spgemm-bench: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "spgemm-bench: error: %s\n", e.what());
    return 1;
  }
  return with_standard_output_written(0, "spgemm-bench");
}
