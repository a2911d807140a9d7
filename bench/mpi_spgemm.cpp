// mpi-spgemm-bench: the restriction experiment of Azad et al. 2016, section 5.3, on this project's
// distributed SpGEMM backends. R is the aggregation (restriction) operator of MIS-2 (R(i, a) = 1 when row i
// is in aggregate a; amgsolve's MIS-2, the paper's Algorithm 3 in another formulation), and the two products
// of a Galerkin coarsening are formed: R^T A and (R^T A) R. For each backend (rowwise, summa2d, split3d at
// each layer count c = 2, 4, 8, ... that fits, or the one AMGSOLVE_SPLIT3D_LAYERS gives) it prints the nnz
// table (the paper's Table 2), the median over --runs of each phase's slowest-rank seconds and all ranks'
// bytes, and the bytes the paper's communication model (section 4.5) predicts for the 2D and 3D algorithms,
// then the model's bandwidth cost per process at 64, 1,024 and 16,384 ranks, marking where 3D sends less
// than 2D. Where CombBLAS is built in and the rank count
// is square, its Sparse SUMMA multiplies the same operands in the same run (the external baseline, marked *),
// against summa2d's own multiply (its phases without the gather of C). Every product is checked against
// gustavson's on one process (pattern, values to 1e-12; CombBLAS's by nnz and value sum), and the program
// exits 1 when one differs. Run under mpirun:
//   mpirun -np 8 --oversubscribe build/bench/mpi-spgemm-bench --poisson 64 --matrix ../shared/matrices/bcsstk17.mtx
#include <CLI/CLI.hpp>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "amg/hierarchy.hpp"
#include "bench/bench_cli.hpp"
#include "bench/median.hpp"
#ifdef AMGSOLVE_HAVE_COMBBLAS
#include "bench/combblas_baseline.hpp"
#endif
#include "common/cli_checks.hpp"
#include "common/environment.hpp"
#include "common/error.hpp"
#include "distributed/spgemm/backends.hpp"
#include "problems/poisson.hpp"
#include "sparse/csr_ops.hpp"
#include "sparse/matrix_market.hpp"
#include "spgemm/comparison.hpp"
#include "spgemm/registry.hpp"

namespace {

using namespace amgsolve;

int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}
int world_size() {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

// R (rows x aggregates) with R(i, a) = 1 for row i in aggregate a; rows in no aggregate are empty.
CsrMatrix<double> restriction_operator(const Array<Index>& aggregates) {
  const Index count = aggregates.empty() ? 0 : *std::max_element(aggregates.begin(), aggregates.end()) + 1;
  std::vector<Triplet<double>> t;
  for (std::size_t i = 0; i < aggregates.size(); ++i)
    if (aggregates[i] >= 0) t.push_back({static_cast<Index>(i), aggregates[i], 1.0});
  return csr_from_triplets(static_cast<Index>(aggregates.size()), count, std::move(t));
}

struct Measured {
  double seconds = 0;
  std::map<std::string, double> phase_seconds;
  std::map<std::string, std::uint64_t> phase_bytes;
  std::uint64_t bytes = 0;  // communication of the algorithm (all phases but the gather of C that the whole-matrix interface adds)
  double algorithm_seconds = 0;  // the phases but the gather of C (medians added)
  std::string grid;
};

Measured measure(const SpgemmBackend& backend, const CsrMatrix<double>& A, const CsrMatrix<double>& B, int runs,
                 Offset& flops, CsrMatrix<double>* product) {
  std::vector<double> totals;
  std::map<std::string, std::vector<double>> phases;
  Measured m;
  backend.multiply(A, B);  // warm-up (first touch of the buffers), as CombBLAS gets one
  for (int run = 0; run < runs; ++run) {
    SpgemmStats stats;
    CsrMatrix<double> C = backend.multiply(A, B, &stats);
    totals.push_back(stats.seconds());
    m.bytes = 0;
    for (const SpgemmPhase& p : stats.phases) {
      phases[p.name].push_back(p.seconds);
      m.phase_bytes[p.name] = p.bytes;
      if (p.name != "gather C") m.bytes += p.bytes;
    }
    m.grid = stats.choice;
    flops = stats.multiplications;
    if (product && run == 0) *product = std::move(C);
  }
  m.seconds = median(totals);
  for (auto& [name, s] : phases) {
    m.phase_seconds[name] = median(s);
    if (name != "gather C") m.algorithm_seconds += m.phase_seconds[name];
  }
  return m;
}

// The section 4.5 model's elements sent by all ranks together: B redistributed along the fibers, A and B
// broadcast along process rows and columns, the partial C along the fibers (between nnz(C) and the flops).
struct ModelElements {
  double low, high;
};
ModelElements model_elements(double nnz_a, double nnz_b, double nnz_c, double flops, int q, int c) {
  const double fibers = nnz_b * (c - 1) / c;
  const double broadcasts = (nnz_a + nnz_b) * (q - 1);
  return {fibers + broadcasts + nnz_c * (c - 1) / c, fibers + broadcasts + flops * (c - 1) / c};
}

// The model's bandwidth cost per process (elements): (nnz(A) + nnz(B)) / sqrt(p c), plus, when c > 1, the
// all-to-alls' nnz(B) / p (redistribution) and flops / p (partial C); c = 1 is Sparse SUMMA.
double model_per_process(double nnz_a, double nnz_b, double flops, double p, double c) {
  return (nnz_a + nnz_b) / std::sqrt(p * c) + (c > 1 ? (nnz_b + flops) / p : 0.0);
}

bool results_disagree = false;  // a product differs from gustavson's on one process: the program exits 1

struct Product {
  const CsrMatrix<double>* left;
  const CsrMatrix<double>* right;
  const CsrMatrix<double>* ours;  // gustavson's, on one process
};

// CombBLAS's Sparse SUMMA on the same products, checked against ours (nnz, and the sum of the values to
// 1e-10 of the sum of their magnitudes), its time against summa2d's multiply. Square rank counts only (CombBLAS 1.6's grid).
void combblas_rows(const std::vector<Product>& products, const double* summa2d_seconds, int runs) {
#ifdef AMGSOLVE_HAVE_COMBBLAS
  if (!combblas_fits(world_size())) {
    if (world_rank() == 0) std::printf("  CombBLAS: not run (its 2D grid needs a square rank count)\n");
    return;
  }
  for (std::size_t i = 0; i < products.size(); ++i) {
    const Product& p = products[i];
    const CombblasProduct c = combblas_multiply(*p.left, *p.right, runs);
    double sum = 0, magnitude = 0;  // the sum may cancel (stiffness matrices): the tolerance is on sum |v|
    for (const double v : p.ours->val) {
      sum += v;
      magnitude += std::abs(v);
    }
    const bool agrees = c.nnz == p.ours->nnz() && std::abs(c.value_sum - sum) <= 1e-10 * std::max(1.0, magnitude);
    results_disagree = results_disagree || !agrees;
    if (world_rank() != 0) continue;
    std::printf("  %-12s %-10s %-28s %9.4f %11s %11s %11s  summa2d/CombBLAS %.2f%s\n", i == 0 ? "R^T A" : "(R^T A) R",
                "CombBLAS*", ("grid " + c.grid + " (Sparse SUMMA)").c_str(), c.seconds, "-", "-", "-",
                summa2d_seconds[i] / c.seconds, agrees ? "" : "  DISAGREES with gustavson (nnz or values)");
  }
#else
  (void)products, (void)summa2d_seconds, (void)runs;
  if (world_rank() == 0) std::printf("  CombBLAS: not built in (install libcombblas-dev and reconfigure)\n");
#endif
}

// split3d's layers as the caller chose them (AMGSOLVE_SPLIT3D_LAYERS, read before any product): then only
// those are run; 0: each c = 2, 4, 8, ... that fits the rank count.
int split3d_layers_given = 0;

void experiment(const std::string& name, const CsrMatrix<double>& A, int runs) {
  AmgParams params;
  params.max_levels = 2;
  params.coarse_size = 1;
  const auto shared = std::make_shared<const CsrMatrix<double>>(A);
  const AmgHierarchy<double> amg(shared, params);
  const CsrMatrix<double> R = restriction_operator(amg.finest_aggregates());
  const CsrMatrix<double> Rt = transpose(R);
  const SpgemmRegistry& registry = SpgemmRegistry::instance();
  const bool prints = world_rank() == 0;
  const int ranks = world_size();

  CsrMatrix<double> RtA, RtAR;
  Offset flops1 = 0, flops2 = 0;
  measure(registry.get("gustavson"), Rt, A, 1, flops1, &RtA);
  measure(registry.get("gustavson"), RtA, R, 1, flops2, &RtAR);
  const std::vector<double> magnitudes[2] = {product_magnitudes(Rt, A, RtA), product_magnitudes(RtA, R, RtAR)};
  if (prints) {
    std::printf("\n%s: %d ranks\n", name.c_str(), ranks);
    std::printf("  %-10s %12s %12s %12s %14s %12s %14s\n", "", "rows", "nnz(A)", "nnz(R)", "nnz(R^T A)", "nnz(R^T A R)",
                "flops R^T A");
    std::printf("  %-10s %12d %12lld %12lld %14lld %12lld %14lld\n", "", A.rows, static_cast<long long>(A.nnz()),
                static_cast<long long>(R.nnz()), static_cast<long long>(RtA.nnz()), static_cast<long long>(RtAR.nnz()),
                static_cast<long long>(flops1));
    std::printf("  %-12s %-10s %-28s %9s %11s %11s %11s  phases (median s, bytes)\n", "product", "backend", "grid",
                "seconds", "sent", "model low", "model high");
  }
  std::vector<std::pair<std::string, int>> runs_of;  // backend, split3d layers (0: not split3d)
  runs_of.push_back({"rowwise", 0});
  runs_of.push_back({"summa2d", 0});
  if (split3d_layers_given > 0)  // as given (the backend reads the variable too, and says what does not fit)
    runs_of.push_back({"split3d", split3d_layers_given});
  else
    for (int c = 2; c <= ranks; c *= 2) runs_of.push_back({"split3d", c});
  double summa2d_seconds[2] = {0, 0};
  for (const auto& [backend, layers] : runs_of) {
    if (layers > 0) setenv("AMGSOLVE_SPLIT3D_LAYERS", std::to_string(layers).c_str(), 1);
    for (int product = 0; product < 2; ++product) {
      const CsrMatrix<double>& left = product == 0 ? Rt : RtA;
      const CsrMatrix<double>& right = product == 0 ? A : R;
      const CsrMatrix<double>& result = product == 0 ? RtA : RtAR;
      Offset flops = 0;
      CsrMatrix<double> C;
      const Measured m = measure(registry.get(backend), left, right, runs, flops, &C);
      double difference = 0;
      const bool agrees =
          spgemm_results_agree(C, result, magnitudes[product], spgemm_agreement_tolerance<double>(), difference);
      results_disagree = results_disagree || !agrees;
      if (backend == "summa2d") summa2d_seconds[product] = m.algorithm_seconds;
      if (!prints) continue;
      std::string phases;
      for (const auto& [phase, s] : m.phase_seconds) {
        char cell[96];
        std::snprintf(cell, sizeof cell, "  %s %.4f %.0fK", phase.c_str(), s, m.phase_bytes.at(phase) / 1024.0);
        phases += cell;
      }
      std::string low = "-", high = "-";
      if (backend != "rowwise") {
        int q = 1;
        const int c = std::max(1, layers);
        while ((q + 1) * (q + 1) * c <= ranks) ++q;
        const ModelElements e = model_elements(double(left.nnz()), double(right.nnz()), double(result.nnz()),
                                               double(flops), q, c);
        low = std::to_string(static_cast<long long>(e.low * 12 / 1024)) + "K";  // 12 bytes an element
        high = std::to_string(static_cast<long long>(e.high * 12 / 1024)) + "K";
      }
      std::printf("  %-12s %-10s %-28s %9.4f %10lluK %11s %11s %s\n", product == 0 ? "R^T A" : "(R^T A) R",
                  (backend + (layers ? " c=" + std::to_string(layers) : "")).c_str(), m.grid.c_str(), m.seconds,
                  static_cast<unsigned long long>(m.bytes / 1024), low.c_str(), high.c_str(), phases.c_str());
      if (!agrees) std::printf("  DISAGREES with gustavson on one process (pattern, or values by %.2e)\n", difference);
    }
  }
  if (split3d_layers_given == 0) unsetenv("AMGSOLVE_SPLIT3D_LAYERS");
  combblas_rows({{&Rt, &A, &RtA}, {&RtA, &R, &RtAR}}, summa2d_seconds, runs);
  if (!prints) return;
  std::printf("  the model at scale, R^T A: elements sent per process (c = 1: Sparse SUMMA)\n");
  std::printf("  %8s %14s %14s %14s %14s\n", "ranks", "c = 1", "c = 4", "c = 16", "3D sends less");
  for (double p : {64.0, 1024.0, 16384.0}) {
    const double two_d = model_per_process(double(Rt.nnz()), double(A.nnz()), double(flops1), p, 1);
    const double c4 = model_per_process(double(Rt.nnz()), double(A.nnz()), double(flops1), p, 4);
    const double c16 = model_per_process(double(Rt.nnz()), double(A.nnz()), double(flops1), p, 16);
    std::printf("  %8.0f %14.0f %14.0f %14.0f %14s\n", p, two_d, c4, c16,
                c16 < two_d || c4 < two_d ? (c16 < c4 ? "yes (c = 16)" : "yes (c = 4)") : "no");
  }
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  register_distributed_spgemm_backends();
  int poisson = 64, runs = 5;
  std::vector<std::string> matrices;
  CLI::App app{"mpi-spgemm-bench: R^T A and (R^T A) R with R from MIS-2 (Azad et al. 2016, section 5.3)"};
  app.add_option("--poisson", poisson, "7-point Poisson N^3, N from 2 to 1024 (0: none)")
      ->check(CLI::Validator(
          [](const std::string& text) {
            return text == "0" || whole_number_in(2, 1024)(text).empty()
                       ? std::string()
                       : "give 0 (none) or N from 2 to 1024, not '" + printable(text) + "'";
          },
          "0 or 2..1024"))
      ->capture_default_str();
  app.add_option("--matrix", matrices, "Matrix Market files (symmetric, positive diagonal)");
  app.add_option("--runs", runs, "runs per product (median)")->check(whole_number_in(1, 1000))->capture_default_str();
  if (const auto status = parse_command_line(app, argc, argv, "mpi-spgemm-bench", world_rank() == 0)) {
    MPI_Finalize();
    return *status;
  }
  int status = 0;
  try {
    // What cannot run is said before any product: a matrix file that cannot be read or is no SPD candidate
    // (not square, not symmetric, a diagonal entry not positive: the setup that makes R needs one), nothing
    // to multiply.
    if (poisson == 0 && matrices.empty()) throw Error("nothing to multiply (give --poisson N or --matrix FILE)");
    std::vector<CsrMatrix<double>> read;
    for (const std::string& path : matrices) {
      read.push_back(read_matrix_market(path));
      require_spd_candidate(path, read.back());
    }
    split3d_layers_given = static_cast<int>(integer_from_environment("AMGSOLVE_SPLIT3D_LAYERS", 1, 1 << 20).value_or(0));
    if (poisson > 0) {
      PoissonParams p;
      p.stencil = Stencil::p7;
      p.size = {poisson, poisson, poisson};
      experiment("7-point Poisson " + std::to_string(poisson) + "^3", poisson_matrix(p), runs);
    }
    for (std::size_t m = 0; m < matrices.size(); ++m) experiment(matrices[m], read[m], runs);
  } catch (const std::exception& e) {
    if (world_rank() == 0) std::fprintf(stderr, "mpi-spgemm-bench: error: %s\n", e.what());
    status = 1;
  }
  MPI_Finalize();
  if (status == 0 && results_disagree) status = 1;
  return status;
}
