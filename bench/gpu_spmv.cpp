// gpu-spmv-bench: y = A x on the GPU in each SpMV format of the cuda backend (ELLPACK-R and pJDS, Kreutzer
// et al. 2012, ../shared/papers/pjds-kreutzer-2011.txt; csr is cuSPARSE's SpMV, the vendor baseline), for
// the matrix of every level of an AMG setup of a config's problem, in double and in float (what the mixed
// solve multiplies). Per level and format: the median time of repeated batches of products, the bandwidth
// that counts the fewest bytes any CSR-based SpMV must move (values, 32-bit column indices and row offsets,
// x read once, y written once), that bandwidth over a device-to-device copy measured in the same run (read
// plus written bytes), and the time over cuSPARSE's. Every format's product is checked against a host
// product first; a mismatch exits 1.
//   gpu-spmv-bench CONFIG [--set KEY=VALUE ...] [--runs N]
// The hierarchy is the cpu backend's (the same levels the cuda backend builds, tests/test_gpu_setup.cpp).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "amg/hierarchy.hpp"
#include "backend/cuda/cuda_backend.hpp"
#include "bench/bench_cli.hpp"
#include "bench/median.hpp"
#include "common/error.hpp"
#include "common/hash.hpp"
#include "config/config.hpp"
#include "problems/mouse.hpp"
#include "problems/problem.hpp"

namespace amgsolve {
namespace {

constexpr SpmvFormat kFormats[] = {SpmvFormat::csr, SpmvFormat::ellpack_r, SpmvFormat::pjds};

std::shared_ptr<const CsrMatrix<double>> problem_matrix(const Config& config) {
  if (config.problem.type == ProblemType::mouse)
    return std::make_shared<const CsrMatrix<double>>(make_mouse_problem(config.problem.mouse).excitation.A);
  return make_problem(config.problem).A;
}

template <class V>
std::shared_ptr<const CsrMatrix<V>> in_precision(const std::shared_ptr<const CsrMatrix<double>>& A) {
  if constexpr (std::is_same_v<V, double>) {
    return A;
  } else {
    auto B = std::make_shared<CsrMatrix<V>>(A->rows, A->cols);
    B->row_ptr.assign(A->row_ptr.begin(), A->row_ptr.end());
    B->col.assign(A->col.begin(), A->col.end());
    B->val.assign(A->val.begin(), A->val.end());
    return B;
  }
}

// Seconds of one device-to-device copy of `bytes` (median of `runs`): the bandwidth ceiling, counted as the
// bytes read plus the bytes written.
double copy_bandwidth(const CudaBackend& backend, std::size_t bytes, int runs) {
  DeviceVector<double> from(bytes / sizeof(double)), to(bytes / sizeof(double));
  backend.zero(from, static_cast<Index>(from.size()));
  std::vector<double> seconds;
  for (int run = 0; run <= runs; ++run) {
    backend.wait_for_device();
    const auto start = std::chrono::steady_clock::now();
    backend.copy(from, to);
    backend.wait_for_device();
    if (run > 0) seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return 2.0 * static_cast<double>(bytes) / median(seconds);
}

template <class V>
std::uint64_t minimum_bytes(const CsrMatrix<V>& A) {
  return static_cast<std::uint64_t>(A.nnz()) * (sizeof(V) + sizeof(std::int32_t)) +
         static_cast<std::uint64_t>(A.rows + 1) * sizeof(std::int32_t) +
         static_cast<std::uint64_t>(A.cols + A.rows) * sizeof(V);
}

// max_i |y_i - (A x)_i| / max_i (|A| |x|)_i.
template <class V>
double relative_error(const CsrMatrix<V>& A, const Vector<V>& x, const Vector<V>& y) {
  double error = 0, scale = 0;
  for (Index i = 0; i < A.rows; ++i) {
    double exact = 0, magnitude = 0;
    for (Offset k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
      exact += double(A.val[k]) * double(x[A.col[k]]);
      magnitude += std::abs(double(A.val[k]) * double(x[A.col[k]]));
    }
    error = std::max(error, std::isfinite(double(y[i])) ? std::abs(double(y[i]) - exact) : INFINITY);
    scale = std::max(scale, magnitude);
  }
  return error / std::max(scale, 1e-300);
}

struct Timing {
  double seconds = 0;
  double error = 0;
};

template <class V>
Timing time_format(const CudaBackend& backend, const std::shared_ptr<const CsrMatrix<V>>& A, SpmvFormat format,
                   int runs) {
  const auto M = backend.matrix(A, format);
  Vector<V> host_x(static_cast<std::size_t>(A->cols)), host_y(static_cast<std::size_t>(A->rows), V(NAN));
  for (Index j = 0; j < A->cols; ++j) host_x[j] = V(seeded_uniform(0x5eed, static_cast<std::uint64_t>(j)) - 0.5);
  DeviceVector<V> x = backend.upload(host_x), y = backend.upload(host_y);  // y poisoned: every row written?
  backend.spmv(*M, x, y);
  backend.download(y, host_y);
  Timing t;
  t.error = relative_error(*A, host_x, host_y);
  // Batches of products long enough for the clock (about a millisecond), median over `runs` of them.
  int batch = 1;
  for (;;) {
    backend.wait_for_device();
    const auto start = std::chrono::steady_clock::now();
    for (int k = 0; k < batch; ++k) backend.spmv(*M, x, y);
    backend.wait_for_device();
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > 1e-3 || batch >= 4096) break;
    batch *= 2;
  }
  std::vector<double> seconds;
  for (int run = 0; run < runs; ++run) {
    backend.wait_for_device();
    const auto start = std::chrono::steady_clock::now();
    for (int k = 0; k < batch; ++k) backend.spmv(*M, x, y);
    backend.wait_for_device();
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / batch);
  }
  t.seconds = median(seconds);
  return t;
}

// One table per precision; returns false when a format's product was wrong.
template <class V>
bool bench_levels(const CudaBackend& backend, const AmgHierarchy<double>& amg, double copy, int runs) {
  const double tolerance = std::is_same_v<V, double> ? 1e-12 : 1e-5;
  bool correct = true;
  std::printf("\n%s: level rows nnz | per format: us, GB/s (minimum bytes), of copy, time over csr (cuSPARSE)\n",
              std::is_same_v<V, double> ? "double" : "float");
  std::printf("%5s %10s %11s |", "level", "rows", "nnz");
  for (SpmvFormat f : kFormats) std::printf(" %-32s|", format_name(f).c_str());
  std::printf("\n");
  double weighted[3] = {0, 0, 0};
  for (std::size_t level = 0; level < amg.levels(); ++level) {
    const auto A = in_precision<V>(amg.shared_matrix(level));
    const double bytes = static_cast<double>(minimum_bytes(*A));
    std::printf("%5zu %10lld %11lld |", level, static_cast<long long>(A->rows), static_cast<long long>(A->nnz()));
    double csr_seconds = 0;
    for (int f = 0; f < 3; ++f) {
      const Timing t = time_format<V>(backend, A, kFormats[f], runs);
      if (f == 0) csr_seconds = t.seconds;
      weighted[f] += t.seconds;
      const bool ok = t.error <= tolerance;
      correct = correct && ok;
      std::printf(" %8.1f %7.1f %5.1f%% %5.2fx%s|", t.seconds * 1e6, bytes / t.seconds * 1e-9,
                  100.0 * bytes / t.seconds / copy, t.seconds / csr_seconds, ok ? "  " : " !");
      if (!ok)
        std::fprintf(stderr, "gpu-spmv-bench: level %zu %s: relative error %.3g over %.1g\n", level,
                     format_name(kFormats[f]).c_str(), t.error, tolerance);
    }
    std::printf("\n");
  }
  std::printf("all levels: csr %.1f us, ellpack-r %.1f us (%.2fx), pjds %.1f us (%.2fx)\n", weighted[0] * 1e6,
              weighted[1] * 1e6, weighted[1] / weighted[0], weighted[2] * 1e6, weighted[2] / weighted[0]);
  return correct;
}

int run(int argc, char** argv) {
  CLI::App app{"SpMV per level and format on the GPU, against cuSPARSE and a device copy"};
  std::string config_path;
  std::vector<std::string> overrides;
  int runs = 11;
  app.add_option("config", config_path, "the problem's YAML config")->required();
  app.add_option("--set", overrides, "KEY=VALUE overrides, as amgsolve's");
  app.add_option("--runs", runs, "timed batches per product (median)")->check(CLI::Range(1, 1000));
  if (const auto status = parse_command_line(app, argc, argv, "gpu-spmv-bench")) return *status;

  const Config config = load_config(config_path, overrides);
  const CudaBackend backend;
  const auto A = problem_matrix(config);
  AmgParams params = config.amg;
  params.spgemm = "";  // the cpu backend's default: the levels, not the product, are measured here
  const AmgHierarchy<double> amg(A, params);
  const double copy = copy_bandwidth(backend, std::size_t{1} << 31, runs);
  std::printf("gpu-spmv-bench: %s, %zu levels; device-to-device copy %.1f GB/s (read + written)\n",
              config_path.c_str(), amg.levels(), copy * 1e-9);
  const bool double_correct = bench_levels<double>(backend, amg, copy, runs);
  const bool float_correct = bench_levels<float>(backend, amg, copy, runs);
  return double_correct && float_correct ? 0 : 1;
}

}  // namespace
}  // namespace amgsolve

int main(int argc, char** argv) {
  try {
    return amgsolve::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpu-spmv-bench: error: %s\n", e.what());
    return 1;
  }
}
