// See iteration_traffic.hpp.
#include "amgsolve/iteration_traffic.hpp"

#include "amg/smoother.hpp"

namespace amgsolve {
namespace {

// One SpMV's matrix side in CSR: values, column indices, row offsets.
double csr_bytes(double rows, double nnz, int value_bytes) {
  return nnz * (value_bytes + sizeof(Index)) + (rows + 1) * sizeof(Offset);
}

// `steps` smoothing steps on a level of n rows whose matrix A takes A_bytes, the first from x = 0 where
// `from_zero`: every step multiplies spmvs_per_step times (one fewer in the first step, from x = 0); each
// multiplication's update reads x, b, D^-1 and (Chebyshev) the search direction and writes x and
// (Chebyshev) the direction; the first step's pass from x = 0 reads b and D^-1 and writes x (and d). D^-1 is
// n values, or a system's node blocks (block_values, LevelInfo::smoother_block_values), whose update is a
// second pass: the residual written, then read node by node.
double smoothing_bytes(const AmgParams& amg, int steps, bool from_zero, double A_bytes, double n, int s,
                       double block_values = 0) {
  // Gauss-Seidel: two sweeps a step, each copying x (read and written), then reading A, b, the copy, x and
  // D^-1 and writing x; the first step from x = 0 writes the zeros first.
  if (amg.smoother.type == SmootherType::gauss_seidel) return steps * 2 * (A_bytes + 7 * n * s) + (from_zero ? n * s : 0);
  const bool chebyshev = amg.smoother.type == SmootherType::chebyshev;
  SmootherSpec spec;
  spec.type = amg.smoother.type;
  spec.sweeps = amg.smoother.sweeps;
  spec.degree = amg.smoother.degree;
  const double products = steps * spmvs_per_step(spec) - (from_zero ? 1 : 0);
  const double diagonal = block_values > 0 ? block_values : n;
  const double residual_pass = block_values > 0 ? 2 * n : 0;
  const double per_product = (chebyshev ? 5 : 3) * n + diagonal + residual_pass;
  const double first_pass = from_zero ? (chebyshev ? 3 : 2) * n + diagonal : 0;
  return products * (A_bytes + per_product * s) + first_pass * s;
}

// One level of the V-cycle (not the coarsest), values of s bytes.
double level_bytes(const LevelInfo& level, const LevelInfo& coarse, const AmgParams& amg, int s) {
  const double n = level.rows, nc = coarse.rows;
  const double A = csr_bytes(n, static_cast<double>(level.nnz), s);
  const double P = csr_bytes(n, static_cast<double>(level.prolongator_product.nnz), s);
  const double R = csr_bytes(nc, static_cast<double>(level.prolongator_product.nnz), s);
  double bytes = smoothing_bytes(amg, amg.pre_smooth + amg.post_smooth, amg.pre_smooth > 0, A, n, s,
                                 static_cast<double>(level.smoother_block_values));
  bytes += A + 3 * n * s;             // r = b - A x
  bytes += R + n * s + nc * s;        // b_c = R r
  bytes += P + nc * s + 2 * n * s;    // x += P x_c
  return bytes;
}

}  // namespace

std::uint64_t model_bytes_per_iteration(const std::vector<LevelInfo>& levels, const AmgParams& amg,
                                        const SolverParams& solver, int cycle_value_bytes) {
  if (levels.empty()) return 0;
  const int s = cycle_value_bytes;
  double bytes = 0;
  for (std::size_t l = 0; l + 1 < levels.size(); ++l) bytes += level_bytes(levels[l], levels[l + 1], amg, s);
  // The coarsest: the factor's forward and backward substitutions, counted as two passes over the level's
  // matrix (its LDL^T factor has about as many entries on the few hundred rows it is used for).
  // A coarsest level too large to factorise is smoothed instead (amg/params.hpp).
  const LevelInfo& coarsest = levels.back();
  if (coarsest.smoothed_coarsest)
    bytes += smoothing_bytes(amg, kCoarsestSmoothingSteps, true,
                             csr_bytes(coarsest.rows, static_cast<double>(coarsest.nnz), s), coarsest.rows, s,
                             static_cast<double>(coarsest.smoother_block_values));
  else
    bytes += 2 * csr_bytes(coarsest.rows, static_cast<double>(coarsest.nnz), 8) + 2 * coarsest.rows * 8.0;
  // The outer iteration in double on the finest level: its product A p, and PCG's vector work as
  // solver/pcg.hpp does it (p = z + beta p: 3 passes, p^T A p: 2, x += alpha p with r -= alpha A p and
  // ||r||: 6, r^T z: 2); the stationary iteration: r = b - A x and x += z (7 passes). Mixed precision
  // converts r in and z out.
  const LevelInfo& fine = levels.front();
  const double n = fine.rows;
  bytes += csr_bytes(n, static_cast<double>(fine.nnz), 8);
  bytes += (solver.type == SolverType::pcg ? 13 : 7) * n * 8;
  if (s != 8) bytes += 2 * n * (8 + s);
  return static_cast<std::uint64_t>(bytes);
}

}  // namespace amgsolve
