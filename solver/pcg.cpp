#include "solver/pcg.hpp"

#include <cmath>
#include <sstream>

#include "common/error.hpp"
#include "common/parallel.hpp"
#include "common/timer.hpp"
#include "sparse/csr_ops.hpp"

namespace amgsolve {

double SolveResult::convergence_factor() const {
  if (iterations == 0 || history.empty() || history.front() <= 0) return 0.0;
  return std::pow(history.back() / history.front(), 1.0 / iterations);
}

namespace {

std::string format_number(double v) {
  std::ostringstream out;
  out.precision(3);
  out << v;
  return out.str();
}

void require_finite(double value, const char* what, int iteration) {
  if (!std::isfinite(value))
    throw NumericalError(std::string("PCG: ") + what + " became NaN or infinite at iteration " +
                         std::to_string(iteration) + " (is the input finite and the matrix SPD?)");
}

template <class Value>
double norm2(const Vector<Value>& v) {
  return std::sqrt(deterministic_sum<double>(static_cast<std::int64_t>(v.size()),
                                             [&](std::int64_t i) { return double(v[i]) * double(v[i]); }));
}

template <class Value>
double dot(const Vector<Value>& a, const Vector<Value>& b) {
  return deterministic_sum<double>(static_cast<std::int64_t>(a.size()),
                                   [&](std::int64_t i) { return double(a[i]) * double(b[i]); });
}

// Common start: x sized, r = b - A x, and the trivial b = 0 case.
template <class Value>
bool start(const CsrMatrix<Value>& A, const Vector<Value>& b, Vector<Value>& x, Vector<Value>& r, double& bnorm,
           SolveResult& result) {
  if (b.size() != static_cast<std::size_t>(A.rows))
    throw Error("right-hand side has " + std::to_string(b.size()) + " entries, the matrix " + std::to_string(A.rows) +
                " rows");
  if (x.size() != b.size()) x.assign(b.size(), Value(0));
  bnorm = norm2(b);
  require_finite(bnorm, "the right-hand side norm", 0);
  if (bnorm == 0.0) {  // the solution of A x = 0 is x = 0
    std::fill(x.begin(), x.end(), Value(0));
    result.converged = true;
    result.history = {0.0};
    return false;
  }
  residual(A, x, b, r);
  result.history.push_back(norm2(r) / bnorm);
  return true;
}

}  // namespace

template <class Value>
SolveResult pcg(const CsrMatrix<Value>& A, const Vector<Value>& b, Vector<Value>& x, const std::type_identity_t<Preconditioner<Value>>& M,
                const SolverParams& params, const IterationCallback& on_iteration) {
  Timer timer;
  SolveResult result;
  Vector<Value> r, z, p, q(b.size());
  double bnorm = 0;
  if (!start(A, b, x, r, bnorm, result)) return result;
  const std::int64_t n = A.rows;

  M(r, z);
  p = z;
  double rz = dot(r, z);
  require_finite(rz, "r^T M^-1 r", 0);
  if (rz <= 0.0)
    throw NumericalError("PCG breakdown before the first iteration: r^T M^-1 r = " + format_number(rz) +
                         " <= 0, the preconditioner is not positive definite");
  double relres = result.history.back();
  int k = 0;
  double last_restart_residual = INFINITY;
  while (relres > params.tolerance && k < params.max_iterations) {
    ++k;
    // q = A p and p^T q in one pass.
    const double pq = deterministic_sum<double>(n, [&](std::int64_t i) {
      Value s = 0;
      for (Offset e = A.row_begin(static_cast<Index>(i)); e < A.row_end(static_cast<Index>(i)); ++e)
        s += A.val[e] * p[A.col[e]];
      q[i] = s;
      return double(p[i]) * double(s);
    });
    require_finite(pq, "p^T A p", k);
    if (pq <= 0.0)
      throw NumericalError("PCG breakdown at iteration " + std::to_string(k) + ": p^T A p = " + format_number(pq) +
                           " <= 0, the matrix is not positive definite");
    const Value alpha = static_cast<Value>(rz / pq);
    // x += alpha p, r -= alpha q, and ||r||^2 in one pass.
    const double rr = deterministic_sum<double>(n, [&](std::int64_t i) {
      x[i] += alpha * p[i];
      r[i] -= alpha * q[i];
      return double(r[i]) * double(r[i]);
    });
    relres = std::sqrt(rr) / bnorm;
    require_finite(relres, "the residual", k);
    bool restart = false;
    if (relres <= params.tolerance) {
      // The recurrence r -= alpha q drifts from b - A x on ill-conditioned systems (e.g. coefficient
      // jumps of 1e6): check the true residual, and if it is not yet small enough restart from it
      // (residual replacement) rather than report a residual the solution does not have.
      residual(A, x, b, r);
      relres = norm2(r) / bnorm;
      restart = relres > params.tolerance;
      // A restart that did not at least halve the true residual means rounding, not the method, limits
      // the accuracy (the attainable accuracy of the system): stop and report it as not converged.
      if (restart && relres > 0.5 * last_restart_residual) result.stagnated = true;
      last_restart_residual = relres;
    }
    result.history.push_back(relres);
    if (on_iteration) on_iteration(k, relres);
    if (result.stagnated || (!restart && relres <= params.tolerance)) break;

    M(r, z);
    const double rz_new = dot(r, z);
    require_finite(rz_new, "r^T M^-1 r", k);
    if (rz_new <= 0.0)
      throw NumericalError("PCG breakdown at iteration " + std::to_string(k) + ": r^T M^-1 r = " +
                           format_number(rz_new) + " <= 0, the preconditioner is not positive definite");
    const Value beta = restart ? Value(0) : static_cast<Value>(rz_new / rz);
    rz = rz_new;
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) p[i] = z[i] + beta * p[i];
  }
  if (relres > params.tolerance && !result.stagnated) {
    // Stopped by the iteration limit: report the true residual, not the recurrence's.
    residual(A, x, b, r);
    relres = norm2(r) / bnorm;
  }
  result.iterations = k;
  result.relative_residual = relres;
  result.converged = relres <= params.tolerance;
  result.seconds = timer.seconds();
  return result;
}

template <class Value>
SolveResult stationary_iteration(const CsrMatrix<Value>& A, const Vector<Value>& b, Vector<Value>& x,
                                 const std::type_identity_t<Preconditioner<Value>>& M, const SolverParams& params,
                                 const IterationCallback& on_iteration) {
  Timer timer;
  SolveResult result;
  Vector<Value> r, correction;
  double bnorm = 0;
  if (!start(A, b, x, r, bnorm, result)) return result;
  double relres = result.history.back();
  int k = 0;
  while (relres > params.tolerance && k < params.max_iterations) {
    ++k;
    M(r, correction);
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(x.size()); ++i) x[i] += correction[i];
    residual(A, x, b, r);
    relres = norm2(r) / bnorm;
    require_finite(relres, "the residual", k);
    result.history.push_back(relres);
    if (on_iteration) on_iteration(k, relres);
  }
  result.iterations = k;
  result.relative_residual = relres;
  result.converged = relres <= params.tolerance;
  result.seconds = timer.seconds();
  return result;
}

template SolveResult pcg(const CsrMatrix<double>&, const Vector<double>&, Vector<double>&,
                         const Preconditioner<double>&, const SolverParams&, const IterationCallback&);
template SolveResult pcg(const CsrMatrix<float>&, const Vector<float>&, Vector<float>&, const Preconditioner<float>&,
                         const SolverParams&, const IterationCallback&);
template SolveResult stationary_iteration(const CsrMatrix<double>&, const Vector<double>&, Vector<double>&,
                                          const Preconditioner<double>&, const SolverParams&,
                                          const IterationCallback&);
template SolveResult stationary_iteration(const CsrMatrix<float>&, const Vector<float>&, Vector<float>&,
                                          const Preconditioner<float>&, const SolverParams&, const IterationCallback&);

}  // namespace amgsolve
