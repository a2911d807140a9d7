#pragma once
// Smoother interface of the V-cycle. A smoother is built once per level from the level's matrix and an
// estimate of rho(D^-1 A); smooth() performs one pre- or post-smoothing step. Both smoothers here are
// polynomials in D^-1 A, hence self-adjoint in the A inner product: the V-cycle with equal pre- and
// post-smoothing is a symmetric positive definite preconditioner, as PCG requires.
//
// Adding a smoother: implement this interface in amg/<name>.cpp, add the enum value in params.hpp and
// a case in make_smoother() (amg/smoother.cpp), and declare its key in config/schema.cpp.
#include <memory>
#include <string>

#include "amg/params.hpp"
#include "sparse/csr.hpp"

namespace amgsolve {

// What a smoother computes, as plain values: enough for another implementation (the device V-cycle,
// solver/cuda/device_smoother.cuh) to apply the same polynomial. Jacobi uses sweeps and omega
// (x <- x + omega D^-1 (b - A x)); Chebyshev uses degree and the interval [lower, upper] of D^-1 A.
struct SmootherSpec {
  SmootherType type = SmootherType::chebyshev;
  int degree = 0;
  double upper = 0.0, lower = 0.0;
  int sweeps = 0;
  double omega = 0.0;
};

template <class Value>
class Smoother {
 public:
  virtual ~Smoother() = default;
  // x <- one smoothing step for A x = b. x_is_zero: x holds zeros, so the first residual is b.
  virtual void smooth(const Vector<Value>& b, Vector<Value>& x, bool x_is_zero) const = 0;
  virtual std::string describe() const = 0;
  // SpMV-equivalents per smooth() call (for cost estimates in the report).
  virtual int spmvs_per_step() const = 0;
  // The polynomial and its parameters as values (what smooth() applies).
  virtual SmootherSpec spec() const = 0;
};

template <class Value>
std::unique_ptr<Smoother<Value>> make_jacobi_smoother(const CsrMatrix<Value>& A, const SmootherParams& p,
                                                      double rho);
template <class Value>
std::unique_ptr<Smoother<Value>> make_chebyshev_smoother(const CsrMatrix<Value>& A, const SmootherParams& p,
                                                         double rho);

// rho: estimate of the largest eigenvalue of D^-1 A (a lower bound, from Lanczos).
template <class Value>
std::unique_ptr<Smoother<Value>> make_smoother(const CsrMatrix<Value>& A, const SmootherParams& p, double rho);

}  // namespace amgsolve
