#pragma once
// rho(D^-1 A) on a system's level (amg/system_setup.hpp), D its smoother's diagonal: the node blocks D_b or
// the pointwise diagonal. The Lanczos recurrence of amg/spectral_radius.hpp on the similar symmetric matrix
// L^-1 A L^-T (D = L L^T: block by block a Cholesky factor, or sqrt(a_ii)), with every reduction summed in
// the level's reduction blocks (NearNullspace::reduction_blocks). A coarse level's nodes are irregular (an
// aggregate keeps as many columns as its vectors span there), so the ranks' ranges end between nodes, not on
// multiples of kReductionBlock rows; summed by nodes, the estimate is the same on any rank count. `Part`
// says how a rank's part joins the others': OneProcessPart here, the mpi backend's in amg/mpi/.
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>

#include "amg/near_nullspace.hpp"
#include "amg/spectral_radius.hpp"
#include "backend/cpu/cpu_backend.hpp"
#include "common/error.hpp"
#include "common/hash.hpp"
#include "common/parallel.hpp"
#include "sparse/block_diagonal.hpp"

namespace amgsolve {

// One process: its part is all of it.
struct OneProcessPart {
  double sum(const ExactSum& partial) const { return partial.value(); }
  std::int64_t first_row() const { return 0; }
  std::int64_t rows_everywhere(Index rows) const { return rows; }
  void fill_ghosts(Vector<double>& /*columns*/) const {}
  // A problem found here (a block not positive definite) as the error of every part.
  void require_none(const std::string& problem) const {
    if (!problem.empty()) throw NumericalError(problem);
  }
};

// The vectors' operations of lanczos_largest_ritz_value on a system's level: reductions by its blocks.
template <class Part>
class SystemLanczosVectors {
 public:
  template <class V>
  using Vector = amgsolve::Vector<V>;

  SystemLanczosVectors(const NearNullspace& level, const Part& part) : level_(level), part_(part) {}
  const Part& part() const { return part_; }
  // The sum over the ranks of f(i) over the level's rows, by its reduction blocks.
  template <class F>
  double sum(F&& f) const {
    return part_.sum(node_blocked_partial_sum(level_, std::forward<F>(f)));
  }
  double dot(const Vector<double>& a, const Vector<double>& b) const {
    return sum([&](Index i) { return a[i] * b[i]; });
  }
  void zero(Vector<double>& v, Index n) const { v.assign(static_cast<std::size_t>(n), 0.0); }
  void resize(Vector<double>& v, Index n) const { v.resize(static_cast<std::size_t>(n)); }

 private:
  const NearNullspace& level_;
  const Part& part_;
};

// Hashed from the global row numbers: the one-process start vector's entries.
template <class Part>
Vector<double> seeded_vector(const SystemLanczosVectors<Part>& ops, Index n, std::uint64_t seed) {
  const std::int64_t first = ops.part().first_row();
  Vector<double> v(static_cast<std::size_t>(n));
#pragma omp parallel for schedule(static) if (worth_a_team(static_cast<std::uint64_t>(n)))
  for (Index i = 0; i < n; ++i) v[i] = seeded_uniform(seed, static_cast<std::uint64_t>(first + i)) - 0.5;
  return v;
}
template <class Part>
void lanczos_rescale(const SystemLanczosVectors<Part>&, const Vector<double>& src, double divisor, Vector<double>& v) {
  lanczos_rescale(CpuBackend{}, src, divisor, v);
}
// w -= alpha v; returns w^T w.
template <class Part>
double lanczos_orthogonalize(const SystemLanczosVectors<Part>& ops, double alpha, const Vector<double>& v,
                             Vector<double>& w) {
  return ops.sum([&](Index i) {
    w[i] -= alpha * v[i];
    return w[i] * w[i];
  });
}

// a_ii of each row, found by scanning it: a rank's rows hold their ghost columns after the own ones, so a
// row's columns are not sorted.
template <class Value>
Vector<Value> scanned_diagonal(const CsrMatrix<Value>& A) {
  Vector<Value> d(static_cast<std::size_t>(A.rows), Value(0));
#pragma omp parallel for schedule(static) if (worth_a_team(static_cast<std::uint64_t>(A.rows)))
  for (Index i = 0; i < A.rows; ++i)
    for (Offset k = A.row_begin(i); k < A.row_end(i); ++k)
      if (A.col[k] == i) d[i] = A.val[k];
  return d;
}

// The largest eigenvalue of D^-1 A, D the node blocks `blocks` or (null) the diagonal, A the level's matrix
// (a rank's rows: its columns own first, ghosts after, which part.fill_ghosts fills). A NumericalError
// where a block or diagonal entry is not positive definite.
template <class Value, class Part = OneProcessPart>
double system_max_eigenvalue(const CsrMatrix<Value>& A, std::shared_ptr<const Array<Index>> blocks,
                             const NearNullspace& level, int steps, std::uint64_t seed, const Part& part = {}) {
  const SystemLanczosVectors<Part> ops(level, part);
  BlockDiagonal<double> L_inv;
  Vector<double> scale;  // 1 / sqrt(a_ii), without blocks
  std::string problem;
  try {
    if (blocks)
      L_inv = inverse_node_blocks<double>(A, blocks, BlockInverse::cholesky_factor, 1.0, part.first_row());
    else
      scale = inverse_sqrt(scanned_diagonal(A), part.first_row());
  } catch (const NumericalError& e) {
    problem = e.what();
  }
  part.require_none(problem);
  Vector<double> scaled(static_cast<std::size_t>(A.cols));
  const bool team = worth_a_team(static_cast<std::uint64_t>(A.rows));
  const auto product = [&](double beta, const Vector<double>& v_prev, const Vector<double>& v, Vector<double>& w) {
    // L^-T v first, node by node (the rows then gather one vector), its ghosts from their ranks; then
    // L^-1 (A L^-T v) node by node.
    if (blocks) {
#pragma omp parallel for schedule(static) if (team)
      for (Index n = 0; n < L_inv.nodes(); ++n) {
        const Index first = L_inv.first_row(n), size = L_inv.node_rows(n);
        const double* block = L_inv.values.data() + L_inv.block_ptr[n];
        for (Index k = 0; k < size; ++k) {
          double s = 0.0;
          for (Index i = k; i < size; ++i) s += block[i * size + k] * v[first + i];  // (L^-1)^T: upper triangular
          scaled[first + k] = s;
        }
      }
    } else {
#pragma omp parallel for schedule(static) if (team)
      for (Index i = 0; i < A.rows; ++i) scaled[i] = scale[i] * v[i];
    }
    part.fill_ghosts(scaled);
    const auto row_sum = [&](Index i) {
      double s = 0.0;
      for (Offset k = A.row_begin(i); k < A.row_end(i); ++k) s += double(A.val[k]) * scaled[A.col[k]];
      return s;
    };
    if (blocks) {
#pragma omp parallel for schedule(static) if (team)
      for (Index n = 0; n < L_inv.nodes(); ++n) {
        const Index first = L_inv.first_row(n), size = L_inv.node_rows(n);
        double y[kMaxNodeRows];
        for (Index i = 0; i < size; ++i) y[i] = row_sum(first + i);
        L_inv.multiply_block(n, y, 1.0, [&](Index i, double t) { w[i] = t - beta * v_prev[i]; });
      }
    } else {
#pragma omp parallel for schedule(static) if (team)
      for (Index i = 0; i < A.rows; ++i) w[i] = scale[i] * row_sum(i) - beta * v_prev[i];
    }
    return ops.dot(w, v);
  };
  const auto orthogonalize = [&](double alpha, const Vector<double>& v, Vector<double>& w) {
    return lanczos_orthogonalize(ops, alpha, v, w);
  };
  return lanczos_largest_ritz_value(ops, A.rows, part.rows_everywhere(A.rows), steps, seed, product, orthogonalize);
}

// Through the setup's backend (amg/smoothed_aggregation.hpp); the mpi backend's in amg/mpi/.
template <class Value>
double system_spectral_radius(const CpuBackend&, const CsrMatrix<Value>& A, std::shared_ptr<const Array<Index>> blocks,
                              const NearNullspace& level, int steps, std::uint64_t seed) {
  return system_max_eigenvalue(A, std::move(blocks), level, steps, seed);
}
template <class Value>
double system_gershgorin_bound(const CpuBackend&, const CsrMatrix<Value>& A, std::shared_ptr<const Array<Index>> blocks) {
  return blocks ? gershgorin_bound_block_dinv_a(A, std::move(blocks)) : gershgorin_bound_dinv_a(A);
}

}  // namespace amgsolve
