// The STREAM triad a = b + s c (J. McCalpin, "Memory bandwidth and machine balance in current high
// performance computers", IEEE TCCA Newsletter, 1995) with OpenMP over arrays far larger than the caches:
// the memory bandwidth the solve's traffic model is divided by (bench/amgcl-compare.py). Counts 3 x 8 bytes
// per element and sweep, STREAM's convention (the write-allocate read of a is not counted).
//   stream-triad [--mib 512] [--sweeps 10]
// prints one line: TRIAD bytes_per_second=... threads=... (the best sweep, as STREAM reports).
#include <omp.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "bench/bench_cli.hpp"
#include "common/cli_checks.hpp"

int main(int argc, char** argv) {
  CLI::App app{"STREAM triad bandwidth"};
  app.option_defaults()->always_capture_default();  // --help shows each default
  int mib = 512, sweeps = 10;
  app.add_option("--mib", mib, "size of each of the three arrays, MiB")->check(amgsolve::whole_number_in(16, 65536));
  app.add_option("--sweeps", sweeps, "timed sweeps (the best is reported)")->check(amgsolve::whole_number_in(1, 1000));
  if (const auto status = amgsolve::parse_command_line(app, argc, argv, "stream-triad")) return *status;
  const std::int64_t n = std::int64_t{mib} * 1024 * 1024 / 8;
  std::vector<double> a(static_cast<std::size_t>(n)), b(a.size()), c(a.size());
#pragma omp parallel for schedule(static)  // first touch by the threads that sweep
  for (std::int64_t i = 0; i < n; ++i) {
    a[i] = 0.0;
    b[i] = 1.0;
    c[i] = 2.0;
  }
  double best = 1e300;
  const double s = 3.0;
  for (int sweep = 0; sweep <= sweeps; ++sweep) {  // sweep 0 warms up
    const auto start = std::chrono::steady_clock::now();
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (sweep > 0) best = std::min(best, seconds);
  }
  std::printf("TRIAD bytes_per_second=%.6g threads=%d check=%g\n", 3.0 * 8.0 * static_cast<double>(n) / best,
              omp_get_max_threads(), a[static_cast<std::size_t>(n / 2)]);
  return 0;
}
