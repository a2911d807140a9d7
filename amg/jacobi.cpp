// Damped Jacobi smoothing: x <- x + omega D^-1 (b - A x), `sweeps` times per step, with
// omega = 4 / (3 rho(D^-1 A)) by default, the weight that damps the upper part of the spectrum of
// D^-1 A most evenly (e.g. Saad, "Iterative Methods for Sparse Linear Systems", 2nd ed., section 13.2).
// Each sweep reads the old x and writes a new one, so the result is independent of the thread count.
#include <cstdio>
#include <utility>

#include "amg/smoother.hpp"
#include "sparse/csr_ops.hpp"

namespace amgsolve {
namespace {

template <class Value>
class Jacobi final : public Smoother<Value> {
 public:
  Jacobi(const CsrMatrix<Value>& A, int sweeps, double omega) : A_(A), sweeps_(sweeps), omega_(omega) {
    const Vector<Value> d = diagonal(A);
    scaled_dinv_.resize(d.size());
    for (std::size_t i = 0; i < d.size(); ++i) scaled_dinv_[i] = static_cast<Value>(omega / static_cast<double>(d[i]));
  }

  void smooth(const Vector<Value>& b, Vector<Value>& x, bool x_is_zero) const override {
    for (int sweep = 0; sweep < sweeps_; ++sweep) {
      if (sweep == 0 && x_is_zero) {
#pragma omp parallel for schedule(static)
        for (Index i = 0; i < A_.rows; ++i) x[i] = scaled_dinv_[i] * b[i];
        continue;
      }
      next_.resize(x.size());
#pragma omp parallel for schedule(static)
      for (Index i = 0; i < A_.rows; ++i) {
        Value r = b[i];
        for (Offset k = A_.row_begin(i); k < A_.row_end(i); ++k) r -= A_.val[k] * x[A_.col[k]];
        next_[i] = x[i] + scaled_dinv_[i] * r;
      }
      std::swap(x, next_);
    }
  }

  std::string describe() const override {
    char buf[64];
    std::snprintf(buf, sizeof buf, "jacobi(sweeps=%d, omega=%.3f)", sweeps_, omega_);
    return buf;
  }
  int spmvs_per_step() const override { return sweeps_; }
  SmootherSpec spec() const override {
    SmootherSpec s;
    s.type = SmootherType::jacobi;
    s.sweeps = sweeps_;
    s.omega = omega_;
    return s;
  }

 private:
  const CsrMatrix<Value>& A_;
  int sweeps_;
  double omega_;
  Vector<Value> scaled_dinv_;
  mutable Vector<Value> next_;
};

}  // namespace

template <class Value>
std::unique_ptr<Smoother<Value>> make_jacobi_smoother(const CsrMatrix<Value>& A, const SmootherParams& p,
                                                      double rho) {
  const double omega = p.omega > 0 ? p.omega : 4.0 / (3.0 * rho);
  return std::make_unique<Jacobi<Value>>(A, p.sweeps, omega);
}

template std::unique_ptr<Smoother<double>> make_jacobi_smoother(const CsrMatrix<double>&, const SmootherParams&,
                                                                double);
template std::unique_ptr<Smoother<float>> make_jacobi_smoother(const CsrMatrix<float>&, const SmootherParams&, double);

}  // namespace amgsolve
