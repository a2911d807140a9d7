#pragma once
// Parameters and outcome of an iterative solve.
#include <functional>
#include <string>
#include <vector>

#include "common/device.hpp"
#include "common/enum_names.hpp"
#include "sparse/spmv_format.hpp"
#include "sparse/csr.hpp"

namespace amgsolve {

enum class SolverType { pcg, amg };
inline constexpr EnumName<SolverType> kSolverTypeNames[] = {{"pcg", SolverType::pcg}, {"amg", SolverType::amg}};
constexpr const auto& names_of(SolverType) { return kSolverTypeNames; }
// Precision of the V-cycle: double throughout, or mixed (hierarchy and cycle in float inside the double
// outer iteration: half the memory traffic of the preconditioner, the same final accuracy).
enum class Precision { double_precision, mixed };
inline constexpr EnumName<Precision> kPrecisionNames[] = {{"double", Precision::double_precision},
                                                          {"mixed", Precision::mixed}};
constexpr const auto& names_of(Precision) { return kPrecisionNames; }

struct SolverParams {
  SolverType type = SolverType::pcg;
  double tolerance = 1e-8;   // stop when ||b - A x|| <= tolerance * ||b||
  // Or when ||b - A x|| <= absolute_tolerance (PETSc's atol, hypre's absolute tolerance, scipy's atol): a
  // residual small in the problem's own units, for a b that is nearly zero (a time step that changes
  // little). 0: the relative test alone. The solve holds to the larger of the two (amgsolve::Solver).
  double absolute_tolerance = 0.0;
  int max_iterations = 500;
  Precision precision = Precision::double_precision;
  // Storage of every level's operator on the cuda backend; the cpu backend multiplies in CSR with `csr`, and
  // otherwise in its sliced ELLPACK where the padding is small (docs/CONFIG.md, solver.spmv_format).
  SpmvFormat spmv_format = SpmvFormat::automatic;
  // Over MPI ranks: how each product meets its halo exchange (common/device.hpp). Naive overlap by default:
  // task mode pays where MPI makes no progress on its own and the ranks have threads to spare.
  HaloMode halo_exchange = HaloMode::overlap;
};

// The relative residual a solve of b is held to: solver.tolerance, or absolute_tolerance / ||b|| where that is
// larger (a b of norm 0 is solved by x = 0 whatever the tolerance).
inline double held_tolerance(const SolverParams& params, double b_norm) {
  if (params.absolute_tolerance <= 0 || !(b_norm > 0)) return params.tolerance;
  return params.tolerance > params.absolute_tolerance / b_norm ? params.tolerance : params.absolute_tolerance / b_norm;
}

struct SolveResult {
  bool converged = false;
  int iterations = 0;
  double relative_residual = 0.0;   // ||b - A x|| / ||b|| at the end
  // The relative residual the solve was held to: solver.tolerance, or absolute_tolerance / ||b|| where larger.
  double tolerance = 0.0;
  std::vector<double> history;      // relative residual before iteration 1, then after each iteration
  double seconds = 0.0;
  // The true residual no longer decreased (PCG: after a restart; the stationary iteration: for 20
  // iterations), so the solve stopped: the tolerance is below what double precision can attain for this
  // system.
  bool stagnated = false;
  // Host <-> device traffic of the solve (b up, x down, a double per reduction; zero on the cpu backend).
  TransferCounts transfers;
  // What this rank communicated during the solve, over MPI ranks (zero on one process).
  CommunicationStats communication;
  // Average reduction per iteration: (final / initial relative residual)^(1 / iterations).
  double convergence_factor() const;
};

// Called after every iteration with (iteration, relative residual), e.g. for a live progress line.
using IterationCallback = std::function<void(int, double)>;

// z = M^-1 r
template <class Value>
using Preconditioner = std::function<void(const Vector<Value>&, Vector<Value>&)>;

}  // namespace amgsolve
