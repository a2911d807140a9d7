#include "amg/spectral_radius.hpp"

#include "amg/system_spectral_radius.hpp"

#include <Eigen/Eigenvalues>

#include <algorithm>
#include <cmath>
#include <vector>

#include "backend/cpu/cpu_backend.hpp"
#include "common/error.hpp"
#include "common/hash.hpp"
#include "common/parallel.hpp"
#include "common/thread_errors.hpp"
#include "common/unit_scale.hpp"
#include "sparse/block_diagonal.hpp"
#include "sparse/csr_ops.hpp"

namespace amgsolve {

double largest_ritz_value(const std::vector<double>& alpha, const std::vector<double>& beta) {
  const int m = static_cast<int>(alpha.size());
  if (m == 0) return 0.0;
  Eigen::VectorXd diag(m), off(std::max(m - 1, 0));
  for (int i = 0; i < m; ++i) diag[i] = alpha[i];
  for (int i = 0; i + 1 < m; ++i) off[i] = beta[i];
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> tridiagonal;
  tridiagonal.computeFromTridiagonal(diag, off, Eigen::EigenvaluesOnly);
  return tridiagonal.eigenvalues().maxCoeff();
}

template <class Value>
Vector<double> inverse_sqrt_diagonal(const CpuBackend&, const CsrMatrix<Value>& A) {
  return inverse_sqrt(diagonal(A), 0);
}

template <class Value>
Vector<double> inverse_sqrt(const Vector<Value>& d, std::int64_t first_row) {
  const auto n = static_cast<std::int64_t>(d.size());
  const std::int64_t i = first_index_where(n, [&](std::int64_t r) { return !(d[r] > 0); });
  if (i < n)
    throw NumericalError("diagonal entry of row " + std::to_string(first_row + i + 1) +
                         " is not positive: the matrix is not positive definite");
  Vector<double> scale(d.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(d.size()); ++i) scale[i] = 1.0 / std::sqrt(static_cast<double>(d[i]));
  return scale;
}

Vector<double> seeded_vector(const CpuBackend&, Index n, std::uint64_t seed) {
  Vector<double> v(static_cast<std::size_t>(n));
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < n; ++i) v[i] = seeded_uniform(seed, static_cast<std::uint64_t>(i)) - 0.5;
  return v;
}

void lanczos_rescale(const CpuBackend&, const Vector<double>& src, double divisor, Vector<double>& v) {
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(v.size()); ++i) v[i] = src[i] / divisor;
}

template <class Value>
double lanczos_product(const CpuBackend&, const CsrMatrix<Value>& A, const Vector<double>& scale, double beta,
                       const Vector<double>& v_prev, const Vector<double>& v, Vector<double>& w,
                       Vector<double>& scaled, std::int64_t block) {
  return lanczos_product_partial(A, scale, v, beta, v_prev, v, w, scaled, block).value();
}

template <class Value>
ExactSum lanczos_product_partial(const CsrMatrix<Value>& A, const Vector<double>& scale,
                                 const Vector<double>& v_columns, double beta, const Vector<double>& v_prev,
                                 const Vector<double>& v, Vector<double>& w, Vector<double>& scaled,
                                 std::int64_t block) {
  // D^-1/2 v over the columns first: on coarse levels, whose columns scatter, the product waits on its
  // gathers, and one gather of u = D^-1/2 v replaces two.
  scaled.resize(v_columns.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t j = 0; j < static_cast<std::int64_t>(scaled.size()); ++j) scaled[j] = scale[j] * v_columns[j];
  return deterministic_partial_sum(A.rows, [&](std::int64_t i) {
    double s = 0.0;
    for (Offset k = A.row_begin(static_cast<Index>(i)); k < A.row_end(static_cast<Index>(i)); ++k) {
      const Index j = A.col[k];
      s += double(A.val[k]) * scaled[j];
    }
    w[i] = scale[i] * s - beta * v_prev[i];
    return w[i] * v[i];
  }, block);
}

double lanczos_orthogonalize(const CpuBackend&, double alpha, const Vector<double>& v, Vector<double>& w,
                             std::int64_t block) {
  return lanczos_orthogonalize_partial(alpha, v, w, block).value();
}

ExactSum lanczos_orthogonalize_partial(double alpha, const Vector<double>& v, Vector<double>& w, std::int64_t block) {
  return deterministic_partial_sum(static_cast<std::int64_t>(w.size()), [&](std::int64_t i) {
    w[i] -= alpha * v[i];
    return w[i] * w[i];
  }, block);
}

template <class Value>
double lanczos_max_eigenvalue_dinv_a(const CsrMatrix<Value>& A, int steps, std::uint64_t seed, std::int64_t block) {
  return lanczos_max_eigenvalue_dinv_a<CpuBackend, Value>(CpuBackend{}, A, steps, seed, block);
}

template <class Value>
double gershgorin_bound_dinv_a(const CsrMatrix<Value>& A) {
  double bound = 0.0;
#pragma omp parallel for schedule(static) reduction(max : bound)
  for (Index i = 0; i < A.rows; ++i) {
    double diag = 0.0;
    for (Offset k = A.row_begin(i); k < A.row_end(i); ++k)
      if (A.col[k] == i) diag = static_cast<double>(A.val[k]);
    // The row summed on the diagonal's scale: entries beyond 1e307 would overflow the sum to inf.
    const double scale = unit_scale(diag);
    double row = 0.0;
    for (Offset k = A.row_begin(i); k < A.row_end(i); ++k) row += scale * std::abs(static_cast<double>(A.val[k]));
    bound = std::max(bound, diag > 0 ? row / (scale * diag) : INFINITY);
  }
  return bound;
}

template <class Value>
double lanczos_max_eigenvalue_block_dinv_a(const CsrMatrix<Value>& A, std::shared_ptr<const Array<Index>> nodes,
                                           int steps, std::uint64_t seed) {
  NearNullspace level;
  level.node_ptr = *nodes;
  level.reduction_blocks = regular_reduction_blocks(level.nodes());
  return system_max_eigenvalue(A, std::move(nodes), level, steps, seed);
}

template <class Value>
double gershgorin_bound_block_dinv_a(const CsrMatrix<Value>& A, std::shared_ptr<const Array<Index>> nodes,
                                     const std::vector<std::int64_t>* column_order, std::int64_t first_row) {
  const BlockDiagonal<double> D_inv = inverse_node_blocks<double>(A, std::move(nodes), BlockInverse::inverse, 1.0, first_row);
  double bound = 0.0;
  ThreadErrors errors;  // a node's entries are gathered into a growing list: out of memory after the region
#pragma omp parallel reduction(max : bound) if (worth_a_team(static_cast<std::uint64_t>(A.nnz()), kSerialMatrixEntries))
  {
    struct Entry {
      std::int64_t col;  // the column's place in column_order
      Index row;         // row within the node
      double value;
    };
    std::vector<Entry> entries;
#pragma omp for schedule(static)
    for (Index n = 0; n < D_inv.nodes(); ++n) {
      // Row i of D_b^-1 A is sum_k (D_I^-1)_ik a_k. over the node's rows k: its entries column by column.
      const Index first = D_inv.first_row(n), size = D_inv.node_rows(n);
      const double* block = D_inv.values.data() + D_inv.block_ptr[n];
      const bool gathered = errors.run([&] {
        entries.clear();
        for (Index k = 0; k < size; ++k)
          for (Offset e = A.row_begin(first + k); e < A.row_end(first + k); ++e)
            entries.push_back({column_order ? (*column_order)[static_cast<std::size_t>(A.col[e])] : A.col[e], k,
                               static_cast<double>(A.val[e])});
      });
      if (!gathered) continue;
      std::sort(entries.begin(), entries.end(),
                [](const Entry& a, const Entry& b) { return a.col < b.col || (a.col == b.col && a.row < b.row); });
      double row_sums[kMaxNodeRows] = {};
      for (std::size_t begin = 0, end; begin < entries.size(); begin = end) {
        for (end = begin; end < entries.size() && entries[end].col == entries[begin].col;) ++end;
        for (Index i = 0; i < size; ++i) {
          double t = 0.0;
          for (std::size_t e = begin; e < end; ++e) t += block[i * size + entries[e].row] * entries[e].value;
          row_sums[i] += std::abs(t);
        }
      }
      for (Index i = 0; i < size; ++i) bound = std::max(bound, row_sums[i]);
    }
  }
  errors.rethrow();
  return bound;
}

#define AMGSOLVE_SPECTRAL_RADIUS(V)                                                                                  \
  template Vector<double> inverse_sqrt_diagonal(const CpuBackend&, const CsrMatrix<V>&);                             \
  template Vector<double> inverse_sqrt(const Vector<V>&, std::int64_t);                                              \
  template ExactSum lanczos_product_partial(const CsrMatrix<V>&, const Vector<double>&, const Vector<double>&, double,  \
                                            const Vector<double>&, const Vector<double>&, Vector<double>&,            \
                                            Vector<double>&, std::int64_t);                                          \
  template double lanczos_product(const CpuBackend&, const CsrMatrix<V>&, const Vector<double>&, double,             \
                                  const Vector<double>&, const Vector<double>&, Vector<double>&, Vector<double>&,    \
                                  std::int64_t);                                                                     \
  template double lanczos_max_eigenvalue_dinv_a(const CsrMatrix<V>&, int, std::uint64_t, std::int64_t);              \
  template double gershgorin_bound_dinv_a(const CsrMatrix<V>&);                                                       \
  template double lanczos_max_eigenvalue_block_dinv_a(const CsrMatrix<V>&, std::shared_ptr<const Array<Index>>, int,   \
                                                      std::uint64_t);                                                \
  template double gershgorin_bound_block_dinv_a(const CsrMatrix<V>&, std::shared_ptr<const Array<Index>>,        \
                                                const std::vector<std::int64_t>*, std::int64_t);
AMGSOLVE_SPECTRAL_RADIUS(double)
AMGSOLVE_SPECTRAL_RADIUS(float)
#undef AMGSOLVE_SPECTRAL_RADIUS

}  // namespace amgsolve
