// mpi-spmv-bench: the distributed SpMV of a 7-point Poisson matrix in the halo modes of Kreutzer et al.
// 2011, section 5: vector mode (wait for the halo, then compute every row), naive overlap (the interior
// rows while the messages travel) and task mode (one thread waits for the messages while the others
// compute the interior rows; with one thread a rank it is naive overlap), each with the rows in CSR and
// with the interior chunks in the solve's sliced ELLPACK copy (DistributedMatrix::slice_for_the_solve,
// where the CPU has the vector units). Run under mpirun; rank 0 prints, for each, the median over --runs
// of the slowest rank's time for --products products, as a ratio of vector mode's in CSR.
//   OMP_NUM_THREADS=4 mpirun -np 4 build/bench/mpi-spmv-bench --size 128 --runs 7
#include <CLI/CLI.hpp>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <utility>
#include <vector>

#include "backend/mpi/mpi_backend.hpp"
#include "bench/bench_cli.hpp"
#include "bench/median.hpp"
#include "common/cli_checks.hpp"
#include "common/parallel.hpp"
#include "common/timer.hpp"
#include "problems/poisson.hpp"

namespace {

using namespace amgsolve;

// The slowest rank's seconds for `products` products y = A x, after one untimed product.
double timed_products(const MpiBackend& mpi, const DistributedMatrix<double>& A, int products) {
  Vector<double> x(static_cast<std::size_t>(A.rows), 1.0), y;
  mpi.spmv(A, x, y);
  MPI_Barrier(MPI_COMM_WORLD);
  Timer timer;
  for (int k = 0; k < products; ++k) {
    mpi.spmv(A, x, y);
    x.swap(y);
  }
  double seconds = timer.seconds();
  MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return seconds;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int size = 64, runs = 7, products = 20;
  CLI::App app{"mpi-spmv-bench: distributed SpMV in vector mode, naive overlap and task mode"};
  app.option_defaults()->always_capture_default();  // --help shows each default
  app.add_option("--size", size, "grid points per side of the 7-point Poisson matrix")->check(whole_number_in(4, 2048));
  app.add_option("--runs", runs, "timed runs per mode (the median is reported)")->check(whole_number_in(1, 1000));
  app.add_option("--products", products, "products per run")->check(whole_number_in(1, 100000));
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (const auto status = parse_command_line(app, argc, argv, "mpi-spmv-bench", rank == 0)) {
    MPI_Finalize();
    return *status;
  }
  {
    PoissonParams p;
    p.stencil = Stencil::p7;
    p.size = {size, size, size};
    const auto global = std::make_shared<const CsrMatrix<double>>(poisson_matrix(p));
    MpiBackend mpi;
    const auto csr = mpi.matrix(global, SpmvFormat::csr), sliced = mpi.matrix(global, SpmvFormat::automatic);
    const bool prints = mpi.comm().rank() == 0;
    const std::pair<HaloMode, const char*> modes[] = {
        {HaloMode::vector, "vector mode"}, {HaloMode::overlap, "naive overlap"}, {HaloMode::task, "task mode"}};
    const std::pair<const DistributedMatrix<double>*, const char*> layouts[] = {{csr.get(), "CSR"},
                                                                                {sliced.get(), "sliced"}};
    std::vector<std::vector<double>> seconds(std::size(modes) * std::size(layouts));
    for (int run = 0; run < runs; ++run)  // alternating, so that every mode sees the same machine
      for (std::size_t l = 0; l < std::size(layouts); ++l)
        for (std::size_t m = 0; m < std::size(modes); ++m) {
          mpi.set_halo_mode(modes[m].first);
          seconds[l * std::size(modes) + m].push_back(timed_products(mpi, *layouts[l].first, products));
        }
    const std::int64_t ghosts = mpi.comm().sum(std::int64_t{csr->halo().ghosts()});
    if (prints) {
      std::printf("7-point %d^3, %d ranks x %d threads, %d products per run, median of %d runs\n", size,
                  mpi.comm().size(), max_threads(), products, runs);
      std::printf("  halo: %lld ghost values per product over all ranks; interior chunks %s\n",
                  static_cast<long long>(ghosts), sliced->sliced() ? "sliced" : "in CSR (no vector units)");
      for (std::size_t l = 0; l < std::size(layouts); ++l)
        for (std::size_t m = 0; m < std::size(modes); ++m) {
          const double t = median(seconds[l * std::size(modes) + m]);
          std::printf("  %-6s %-13s %9.3f ms per product  (%.3fx vector mode in CSR)\n", layouts[l].second,
                      modes[m].second, 1e3 * t / products, t / median(seconds[0]));
        }
    }
  }
  MPI_Finalize();
  return 0;
}
