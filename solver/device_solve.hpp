#pragma once
// The solve on the GPU: PCG (Saad, "Iterative Methods for Sparse Linear Systems", 2nd ed., Algorithm 9.1) or
// the stationary AMG iteration, with the V-cycle of an AmgHierarchy as the preconditioner, everything on the
// device: every level's operators in the chosen SpMV format (csr through cuSPARSE, the vendor baseline;
// ELLPACK-R; pJDS), the vectors, the smoothers, the coarse solve. Only the right-hand side goes in and the
// solution comes out.
//
// Same method as the CPU (solver/pcg.cpp, AmgHierarchy::apply): the same iteration, stopping test
// ||b - A x|| <= tolerance ||b||, true-residual check and restart at convergence, breakdown and NaN errors
// (amgsolve::NumericalError), iteration count and history; the same V-cycle (pre/post smoothing with the
// same polynomials and parameters, R = P^T, direct coarse solve). Results differ from the CPU's only by
// rounding (other summation orders), so iteration counts agree to within one.
//
// CycleValue is the precision of the V-cycle: double, or float for solver.precision = mixed (float
// hierarchy and cycle inside the double PCG, as app/run.cpp does on the CPU).
//
// Plain C++: the CUDA side is in solver/cuda/ (device_solve.cu and what it includes). Builds without CUDA,
// and machines without a device, get an amgsolve::Error from the constructor saying why.
#include <cstdint>
#include <memory>

#include "amg/hierarchy.hpp"
#include "solver/solve_result.hpp"
#include "solver/spmv_format.hpp"

namespace amgsolve {

template <class CycleValue>
class DeviceSolve {
 public:
  // Copies the fine matrix (double, for PCG) and every level's operators, in `format` (csr, ellpack-r or
  // pjds; not auto), the smoothers and the coarse solve to the device. A and the hierarchy are only read
  // here: the device keeps its own copies.
  DeviceSolve(const CsrMatrix<double>& A, const AmgHierarchy<CycleValue>& hierarchy, SpmvFormat format);
  ~DeviceSolve();
  DeviceSolve(const DeviceSolve&) = delete;
  DeviceSolve& operator=(const DeviceSolve&) = delete;

  // Solves A x = b from the given x (resized and zeroed if its size is wrong) with params.type (pcg or
  // amg). params.precision must match CycleValue (mixed for float). on_iteration is called for every
  // iteration in order, a little behind the device (see solver/cuda/device_pcg.cu). One solve at a time:
  // the device buffers are reused by every call.
  SolveResult solve(const Vector<double>& b, Vector<double>& x, const SolverParams& params,
                    const IterationCallback& on_iteration = {}) const;

  SpmvFormat format() const;
  std::uint64_t device_bytes() const;  // device memory held: operators, vectors, coarse solve
  double upload_seconds() const;       // the constructor: format conversion, permutation and copies

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace amgsolve
