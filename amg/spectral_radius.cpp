#include "amg/spectral_radius.hpp"

#include <Eigen/Eigenvalues>
#include <cmath>
#include <vector>

#include "common/error.hpp"
#include "common/hash.hpp"
#include "common/parallel.hpp"
#include "sparse/csr_ops.hpp"

namespace amgsolve {

template <class Value>
double lanczos_max_eigenvalue_dinv_a(const CsrMatrix<Value>& A, int steps, std::uint64_t seed) {
  const Index n = A.rows;
  if (n == 0) return 0.0;
  const Vector<Value> d = diagonal(A);
  for (Index i = 0; i < n; ++i)
    if (!(d[i] > 0))
      throw NumericalError("diagonal entry of row " + std::to_string(i + 1) +
                           " is not positive: the matrix is not positive definite");
  Array<double> scale(static_cast<std::size_t>(n));
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < n; ++i) scale[i] = 1.0 / std::sqrt(static_cast<double>(d[i]));
  auto sum = [n](auto&& term) { return deterministic_sum<double>(n, term); };

  Array<double> v(static_cast<std::size_t>(n)), v_prev(v.size(), 0.0), w(v.size()), u(v.size());
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < n; ++i) v[i] = seeded_uniform(seed, static_cast<std::uint64_t>(i)) - 0.5;
  const double norm0 = std::sqrt(sum([&](std::int64_t i) { return v[i] * v[i]; }));
  // u = D^-1/2 v, the vector S v multiplies; each step's last pass computes the next one.
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < n; ++i) {
    v[i] /= norm0;
    u[i] = scale[i] * v[i];
  }

  std::vector<double> alpha, beta;
  double beta_prev = 0.0;
  for (int j = 0; j < std::min<Index>(steps, n); ++j) {
    // w = S v - beta_{j-1} v_{j-1} with S = D^-1/2 A D^-1/2, and alpha = w^T v.
    const double a = sum([&](std::int64_t i) {
      double s = 0.0;
      for (Offset k = A.row_begin(static_cast<Index>(i)); k < A.row_end(static_cast<Index>(i)); ++k)
        s += double(A.val[k]) * u[A.col[k]];
      w[i] = scale[i] * s - beta_prev * v_prev[i];
      return w[i] * v[i];
    });
    alpha.push_back(a);
    const double b = std::sqrt(sum([&](std::int64_t i) {
      w[i] -= a * v[i];
      return w[i] * w[i];
    }));
    if (!std::isfinite(b)) throw NumericalError("NaN or infinity while estimating the spectral radius");
    if (b <= 1e-12 * std::abs(a)) break;  // invariant subspace found: the Ritz values are exact
    beta.push_back(b);
    beta_prev = b;
    v_prev.swap(v);
#pragma omp parallel for schedule(static)
    for (Index i = 0; i < n; ++i) {
      v[i] = w[i] / b;
      u[i] = scale[i] * v[i];
    }
  }

  const int m = static_cast<int>(alpha.size());
  Eigen::VectorXd diag(m), off(std::max(m - 1, 0));
  for (int i = 0; i < m; ++i) diag[i] = alpha[i];
  for (int i = 0; i + 1 < m; ++i) off[i] = beta[i];
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> tridiagonal;
  tridiagonal.computeFromTridiagonal(diag, off, Eigen::EigenvaluesOnly);
  return tridiagonal.eigenvalues().maxCoeff();
}

template <class Value>
double gershgorin_bound_dinv_a(const CsrMatrix<Value>& A) {
  double bound = 0.0;
#pragma omp parallel for schedule(static) reduction(max : bound)
  for (Index i = 0; i < A.rows; ++i) {
    double row = 0.0, diag = 0.0;
    for (Offset k = A.row_begin(i); k < A.row_end(i); ++k) {
      row += std::abs(static_cast<double>(A.val[k]));
      if (A.col[k] == i) diag = static_cast<double>(A.val[k]);
    }
    bound = std::max(bound, diag > 0 ? row / diag : INFINITY);
  }
  return bound;
}

template double gershgorin_bound_dinv_a(const CsrMatrix<double>&);
template double gershgorin_bound_dinv_a(const CsrMatrix<float>&);
template double lanczos_max_eigenvalue_dinv_a(const CsrMatrix<double>&, int, std::uint64_t);
template double lanczos_max_eigenvalue_dinv_a(const CsrMatrix<float>&, int, std::uint64_t);

}  // namespace amgsolve
