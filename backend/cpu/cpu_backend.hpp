#pragma once
// The cpu backend: OpenMP threads over host memory. Its vector is amgsolve::Vector, its matrix the CSR
// every part shares (no copy: a hierarchy's matrices are used where they are), and its kernels are the
// loops below. Every reduction is a deterministic_sum (fixed blocks added in order), so results are
// bit-identical on any number of threads. backend/backend.hpp lists what a backend provides.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <utility>

#include "common/device.hpp"
#include "common/error.hpp"
#include "common/parallel.hpp"
#include "common/timer.hpp"
#include "sparse/block_diagonal.hpp"
#include "sparse/csr_ops.hpp"
#include "sparse/sliced_ellpack.hpp"
#include "sparse/sparse_ldlt.hpp"
#include "sparse/spmv_format.hpp"
#include "spgemm/numeric_product.hpp"
#include "spgemm/spgemm.hpp"

namespace amgsolve {

// The rows a matrix kernel computes: all of them, or a list. The distributed layer (backend/mpi/) computes
// the rows with only local columns while the halo exchange is in flight, then the others, with the same
// kernels, so each row's sum is formed in the same order as on one process.
struct AllRows {
  Index count = 0;
  Index size() const { return count; }
  Index operator[](Index k) const { return k; }
};
struct RowList {
  const Index* rows = nullptr;
  Index count = 0;
  Index size() const { return count; }
  Index operator[](Index k) const { return rows[k]; }
};
// Rows in a sliced ELLPACK copy of the matrix (sparse/sliced_ellpack.hpp): runs of chunks of kChunk rows,
// each run {first chunk, count} at most kSlicedRunChunks long, read from x alone (ArrayColumns). The
// distributed layer's interior chunks, those of its rows that read no ghost.
inline constexpr Index kSlicedRunChunks = 32;
template <class V>
struct SlicedRuns {
  const SlicedEllpack<V>* matrix = nullptr;
  const std::pair<Index, Index>* runs = nullptr;
  Index count = 0;
};
// f(row) for each row of `rows`, on the thread team where the rows' entries (`entries`) are worth one.
template <class Rows, class F>
void for_each_row(const Rows& rows, std::uint64_t entries, F&& f) {
#pragma omp parallel for schedule(static) if (worth_a_team(entries, kSerialMatrixEntries))
  for (Index k = 0; k < rows.size(); ++k) f(rows[k]);
}
// x_j as a kernel reads it: from one array (the distributed layer reads columns past the local ones from
// the halo's ghost values).
template <class V>
struct ArrayColumns {
  const V* x;
  V operator()(Index j) const { return x[j]; }
};

// What the cpu backend's solve multiplies: the hierarchy's CSR (shared, not copied) or, where it pays, a
// sliced ELLPACK copy (sparse/sliced_ellpack.hpp); either way each row's sum is formed in the same order, so
// the results are the same bits.
template <class V>
struct CpuMatrix {
  std::shared_ptr<const CsrMatrix<V>> csr;         // null when sliced is set
  std::shared_ptr<const SlicedEllpack<V>> sliced;  // null: the products read csr
  Index rows = 0, cols = 0;

  // A's products in CSR, A not copied (it must outlive the view).
  static CpuMatrix view(const CsrMatrix<V>& A) {
    return CpuMatrix{std::shared_ptr<const CsrMatrix<V>>(std::shared_ptr<void>(), &A), nullptr, A.rows, A.cols};
  }
};

class CpuBackend {
 public:
  static constexpr BackendKind kind = BackendKind::cpu;
  // A re-setup follows the kept product patterns while the filtered matrices lump the same rows.
  static constexpr bool records_lumped_rows = true;
  template <class V>
  using Vector = amgsolve::Vector<V>;
  template <class V>
  using Matrix = CpuMatrix<V>;  // what the solve multiplies
  template <class V>
  using Csr = CsrMatrix<V>;     // what the setup builds: the same CSR

  // The coarsest level's direct solve: the hierarchy's sparse LDL^T (which knows the nullspace of a
  // singular matrix), applied where it is.
  template <class V>
  class CoarseSolve {
   public:
    CoarseSolve(const CpuBackend&, const CsrMatrix<V>&, std::shared_ptr<const SparseLdlt<V>> factor,
                const amgsolve::Vector<double>& /*nullspace*/)
        : factor_(std::move(factor)) {}
    void solve(const Vector<V>& b, Vector<V>& x) const { factor_->solve(b, x); }
    std::uint64_t bytes() const { return 0; }  // counted with the hierarchy

   private:
    std::shared_ptr<const SparseLdlt<V>> factor_;
  };

  // ---- moving data: the host is where this backend's data lives, so nothing moves

  TransferCounts transfers() const { return {}; }

  template <class V>
  std::shared_ptr<const Csr<V>> csr(std::shared_ptr<const CsrMatrix<V>> host) const {
    return host;
  }
  // The matrix as the host sees it, valid while M lives (for callbacks and the coarsest factorisation).
  template <class V>
  std::shared_ptr<const CsrMatrix<V>> host_view(const Csr<V>& M) const {
    return std::shared_ptr<const CsrMatrix<V>>(&M, [](const CsrMatrix<V>*) {});
  }
  // M for the solve: with `csr` as given, otherwise as a sliced ELLPACK copy where that pays.
  template <class V>
  std::shared_ptr<const Matrix<V>> matrix(std::shared_ptr<const Csr<V>> M, SpmvFormat format) const {
    return for_the_solve(std::move(M), format, kSlicedPaddingBesideCsr);
  }
  // A level's P or R, which the hierarchy lets go of once the cycle holds them in sliced ELLPACK
  // (Hierarchy::release): the copy replaces the CSR instead of doubling it, so more padding pays.
  template <class V>
  std::shared_ptr<const Matrix<V>> transfer_matrix(std::shared_ptr<const Csr<V>> M, SpmvFormat format) const {
    return for_the_solve(std::move(M), format, kSlicedPaddingReplacingCsr);
  }
  // The matrix in another precision (the mixed-precision hierarchy).
  template <class To, class From>
  std::shared_ptr<const Csr<To>> cast(const Csr<From>& M) const {
    return std::make_shared<const Csr<To>>(cast_values<To>(M));
  }
  template <class V>
  Vector<V> upload(const amgsolve::Vector<V>& host) const {
    return host;
  }
  template <class V>
  void upload(const amgsolve::Vector<V>& host, Vector<V>& into) const {
    into = host;
  }
  template <class V>
  void download(const Vector<V>& from, amgsolve::Vector<V>& host) const {
    host = from;
  }
  template <class V>
  std::uint64_t bytes(const Matrix<V>& A) const {
    return A.sliced ? A.sliced->bytes() : 0;  // the CSR is the hierarchy's, counted there
  }

  // ---- vectors

  template <class V>
  void resize(Vector<V>& v, Index n) const {
    v.resize(static_cast<std::size_t>(n));
  }
  template <class V>
  void zero(Vector<V>& v, Index n) const {
    v.assign(static_cast<std::size_t>(n), V(0));
  }
  template <class V>
  void copy(const Vector<V>& from, Vector<V>& to) const {
    to = from;
  }
  // to = from in another precision (the mixed-precision cycle's input and output).
  template <class To, class From>
  void convert(const Vector<From>& from, Vector<To>& to) const {
    parallel_convert(from, to);
  }
  template <class V>
  double dot(const Vector<V>& a, const Vector<V>& b) const {
    return dot_partial(a, b).value();
  }
  // The reductions before rounding: what one rank contributes to a distributed one (common/exact_sum.hpp).
  template <class V>
  ExactSum dot_partial(const Vector<V>& a, const Vector<V>& b) const {
    return deterministic_partial_sum(static_cast<std::int64_t>(a.size()),
                                     [&](std::int64_t i) { return double(a[i]) * double(b[i]); });
  }
  template <class V>
  ExactSum sum_partial(const Vector<V>& v) const {
    return deterministic_partial_sum(static_cast<std::int64_t>(v.size()), [&](std::int64_t i) { return double(v[i]); });
  }
  template <class V>
  double norm2(const Vector<V>& v) const {
    return std::sqrt(dot(v, v));
  }
  // The sum of the entries, and v -= mean(v) (the constant nullspace of a singular matrix, amg/nullspace.hpp).
  template <class V>
  double sum(const Vector<V>& v) const {
    return sum_partial(v).value();
  }
  template <class V>
  void remove_mean(Vector<V>& v) const {
    if (!v.empty()) subtract(static_cast<V>(sum(v) / static_cast<double>(v.size())), v);
  }
  // v -= s
  template <class V>
  void subtract(V s, Vector<V>& v) const {
#pragma omp parallel for schedule(static) if (worth_a_team(v.size()))
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(v.size()); ++i) v[i] -= s;
  }
  // out[k] = x[indices[k]] (the entries a halo exchange sends: backend/mpi/mpi_over.hpp)
  template <class V>
  void gather(const Vector<V>& x, const Vector<Index>& indices, Vector<V>& out) const {
    out.resize(indices.size());
#pragma omp parallel for schedule(static) if (worth_a_team(indices.size()))
    for (std::int64_t k = 0; k < static_cast<std::int64_t>(indices.size()); ++k) out[k] = x[indices[k]];
  }
  // extended = [own | tail] (a vector and the ghost values a halo exchange brought, as a distributed
  // matrix's local columns number them)
  template <class V>
  void extend(const Vector<V>& own, const amgsolve::Vector<V>& tail, Vector<V>& extended) const {
    parallel_convert(own, extended);
    extended.insert(extended.end(), tail.begin(), tail.end());
  }
  // x += y
  template <class V>
  void add(const Vector<V>& y, Vector<V>& x) const {
#pragma omp parallel for schedule(static) if (worth_a_team(x.size()))
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(x.size()); ++i) x[i] += y[i];
  }
  // p = z + beta p
  template <class V>
  void xpby(const Vector<V>& z, V beta, Vector<V>& p) const {
#pragma omp parallel for schedule(static) if (worth_a_team(p.size()))
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(p.size()); ++i) p[i] = z[i] + beta * p[i];
  }

  // ---- products

  template <class V>
  void spmv(const Matrix<V>& A, const Vector<V>& x, Vector<V>& y) const {
    y.resize(static_cast<std::size_t>(A.rows));
    for_each_row_sum<false>(A, x, static_cast<const V*>(nullptr), [&](Index i, V s) { y[i] = s; });
  }
  // y += A x
  template <class V>
  void spmv_add(const Matrix<V>& A, const Vector<V>& x, Vector<V>& y) const {
    for_each_row_sum<false>(A, x, static_cast<const V*>(nullptr), [&](Index i, V s) { y[i] += s; });
  }
  // r = b - A x
  template <class V>
  void residual(const Matrix<V>& A, const Vector<V>& x, const Vector<V>& b, Vector<V>& r) const {
    r.resize(static_cast<std::size_t>(A.rows));
    for_each_row_sum<true>(A, x, b.data(), [&](Index i, V s) { r[i] = s; });
  }

  // ---- the products on a set of rows, reading x through `x` (ArrayColumns, or the distributed layer's
  // local-and-ghost columns); y, r sized by the caller. Each row's sum is formed as in the kernels above.

  template <class V, class Rows, class X>
  void spmv_rows(const CsrMatrix<V>& A, const Rows& rows, const X& x, Vector<V>& y) const {
    for_each_row_sum<false>(A, rows, x, static_cast<const V*>(nullptr), [&](Index i, V s) { y[i] = s; });
  }
  template <class V, class Rows, class X>
  void spmv_add_rows(const CsrMatrix<V>& A, const Rows& rows, const X& x, Vector<V>& y) const {
    for_each_row_sum<false>(A, rows, x, static_cast<const V*>(nullptr), [&](Index i, V s) { y[i] += s; });
  }
  template <class V, class Rows, class X>
  void residual_rows(const CsrMatrix<V>& A, const Rows& rows, const X& x, const Vector<V>& b, Vector<V>& r) const {
    for_each_row_sum<true>(A, rows, x, b.data(), [&](Index i, V s) { r[i] = s; });
  }
  // x_next = x + D_w (b - A x) on the rows; x_local holds the rows' own x.
  template <class V, class Rows, class X>
  void jacobi_sweep_rows(const CsrMatrix<V>& A, const Rows& rows, const X& x, const Vector<V>& scaled_dinv,
                         const Vector<V>& b, const Vector<V>& x_local, Vector<V>& x_next) const {
    for_each_row_sum<true>(A, rows, x, b.data(), jacobi_update(scaled_dinv, x_local, x_next));
  }
  // d = a d + c D^-1 (b - A x), x_next = x + d on the rows (a = 0: the old d is not read).
  template <class V, class Rows, class X>
  void chebyshev_step_rows(const CsrMatrix<V>& A, const Rows& rows, const X& x, const Vector<V>& dinv,
                           const Vector<V>& b, V a, V c, Vector<V>& d, const Vector<V>& x_local,
                           Vector<V>& x_next) const {
    for_each_row_sum<true>(A, rows, x, b.data(), chebyshev_update(a, c, dinv, d, x_local, x_next));
  }

  // ---- the setup's sparse operations (smoothed aggregation's own steps are in amg/, per method)

  // The counts the setup decides by (all ranks' on the mpi backend).
  template <class V>
  std::int64_t global_rows(const Csr<V>& A) const {
    return A.rows;
  }
  template <class V>
  std::int64_t global_nnz(const Csr<V>& A) const {
    return A.nnz();
  }
  // C = A B with one of this backend's SpGEMM backends.
  template <class V>
  Csr<V> multiply(const SpgemmBackend& spgemm, const Csr<V>& A, const Csr<V>& B, SpgemmStats* stats) const {
    return spgemm.multiply(A, B, stats);
  }
  template <class V>
  Csr<V> transpose(const Csr<V>& M) const {
    return amgsolve::transpose(M);
  }
  // A re-setup's products on kept patterns (amg/kept_structure.hpp): what of C = X Y to keep (its row_ptr
  // and col); for a product into a matrix the hierarchy holds, nothing, that matrix being the pattern; and
  // X Y by the numeric phase alone into a pattern.
  template <class V>
  using ProductPattern = CsrMatrix<V>;
  template <class V>
  CsrMatrix<V> product_pattern(const Csr<V>& /*X*/, const Csr<V>& /*Y*/, Csr<V>&& C) const {
    CsrMatrix<V> pattern(C.rows, C.cols);
    pattern.row_ptr = std::move(C.row_ptr);
    pattern.col = std::move(C.col);
    return pattern;
  }
  template <class V>
  CsrMatrix<V> held_product_pattern(const Csr<V>&, const Csr<V>&, const Csr<V>&) const {
    return {};
  }
  template <class V>
  std::shared_ptr<const CsrMatrix<V>> pattern_of(std::shared_ptr<const Csr<V>> M, const CsrMatrix<V>& /*kept*/) const {
    return M;
  }
  template <class V>
  Csr<V> multiply_into(const SpgemmBackend& spgemm, const Csr<V>& X, const Csr<V>& Y, const CsrMatrix<V>& pattern,
                       SpgemmStats& stats) const {
    if (!spgemm.sums_in_row_order())  // its bits are not the numeric phase's (smoothed_aggregation.hpp asks first)
      throw Error("the numeric phase stands in only for a SpGEMM that sums in A's row order, not " + spgemm.name());
    Timer timer;
    Csr<V> C = numeric_product(X, Y, pattern, &stats.multiplications);
    stats.numeric_seconds = timer.seconds();
    stats.nnz = C.nnz();
    stats.choice = kNumericPhaseChoice;
    return C;
  }
  // A Galerkin operator P^T A P has diagonal entries p_j^T A p_j, positive for SPD A: a non-positive one
  // proves that the input matrix is not positive definite.
  template <class V>
  void require_positive_diagonal(const Csr<V>& A, int level) const {
    positive_diagonal(A, level);
  }
  // The same, returning the diagonal it checked: the level's strength test takes it rather than find it again.
  template <class V>
  Vector<V> positive_diagonal(const Csr<V>& A, int level) const {
    Vector<V> d = diagonal(A);
    const auto i = static_cast<Index>(first_index_where(A.rows, [&](std::int64_t r) { return !(d[r] > 0); }));
    if (i < A.rows)
      throw NumericalError("AMG level " + std::to_string(level) + ": diagonal entry " + std::to_string(i + 1) +
                           " is " + format_number(static_cast<double>(d[i])) +
                           ", so the input matrix is not positive definite");
    return d;
  }
  template <class V>
  bool same_pattern(const Csr<V>& A, const Csr<V>& B) const {
    return A.same_pattern(B);
  }
  // Whether `mine` holds on every rank (here: the one process).
  bool everywhere(bool mine) const { return mine; }
  template <class V>
  std::vector<FormatCost> format_costs(const Csr<V>& M) const {
    return spmv_format_costs(M);
  }
  // numerator / a_ii per row, computed in double and rounded to V (the smoothers' diagonal scaling).
  template <class V>
  Vector<V> smoother_diagonal(const Csr<V>& A, double numerator) const {
    return scaled_inverse(diagonal(A), numerator);
  }
  // numerator A_II^-1 per node (a system's smoothers with node blocks, sparse/block_diagonal.hpp).
  template <class V>
  BlockDiagonal<V> smoother_block_diagonal(const Csr<V>& A, std::shared_ptr<const Array<Index>> nodes,
                                           double numerator) const {
    return inverse_node_blocks<V>(A, std::move(nodes), BlockInverse::inverse, numerator);
  }
  // numerator / d_i per entry, in double and rounded to V (the mpi backend scales its rows' diagonal so).
  template <class V>
  static Vector<V> scaled_inverse(Vector<V> d, double numerator) {
    for (V& entry : d) entry = static_cast<V>(numerator / static_cast<double>(entry));
    return d;
  }

  // ---- the fused passes of conjugate gradients (one sweep over memory each)

  // q = A p; returns p^T q.
  template <class V>
  double spmv_dot(const Matrix<V>& A, const Vector<V>& p, Vector<V>& q) const {
    q.resize(static_cast<std::size_t>(A.rows));
    if (A.sliced) {  // the product in its layout, then the same blocked sum of p_i q_i
      spmv(A, p, q);
      return deterministic_sum<double>(A.rows, [&](std::int64_t i) { return double(p[i]) * double(q[i]); });
    }
    const CsrMatrix<V>& M = *A.csr;
    return deterministic_sum<double>(A.rows, [&](std::int64_t i) {
      const V s = row_product(M, static_cast<Index>(i), ArrayColumns<V>{p.data()});
      q[i] = s;
      return double(p[i]) * double(s);
    });
  }
  // x += alpha p, r -= alpha q; returns r^T r.
  template <class V>
  double cg_update(V alpha, const Vector<V>& p, const Vector<V>& q, Vector<V>& x, Vector<V>& r) const {
    return cg_update_partial(alpha, p, q, x, r).value();
  }
  template <class V>
  ExactSum cg_update_partial(V alpha, const Vector<V>& p, const Vector<V>& q, Vector<V>& x, Vector<V>& r) const {
    return deterministic_partial_sum(static_cast<std::int64_t>(x.size()), [&](std::int64_t i) {
      x[i] += alpha * p[i];
      r[i] -= alpha * q[i];
      return double(r[i]) * double(r[i]);
    });
  }

  // ---- the smoothers' passes (amg/jacobi.hpp, amg/chebyshev.hpp)

  // x = D_w b, where D_w holds omega / a_ii (the first Jacobi sweep from x = 0)
  template <class V>
  void jacobi_from_zero(const Vector<V>& scaled_dinv, const Vector<V>& b, Vector<V>& x) const {
#pragma omp parallel for schedule(static) if (worth_a_team(x.size()))
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(x.size()); ++i) x[i] = scaled_dinv[i] * b[i];
  }
  // x_next = x + D_w (b - A x)
  template <class V>
  void jacobi_sweep(const Matrix<V>& A, const Vector<V>& scaled_dinv, const Vector<V>& b, const Vector<V>& x,
                    Vector<V>& x_next) const {
    x_next.resize(static_cast<std::size_t>(A.rows));  // x may be longer: own entries, then ghosts (mpi_over.hpp)
    for_each_row_sum<true>(A, x, b.data(), jacobi_update(scaled_dinv, x, x_next));
  }
  // d = inv_theta D^-1 b, x = d (the first Chebyshev step from x = 0)
  template <class V>
  void chebyshev_from_zero(const Vector<V>& dinv, const Vector<V>& b, V inv_theta, Vector<V>& d, Vector<V>& x) const {
#pragma omp parallel for schedule(static) if (worth_a_team(x.size()))
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(x.size()); ++i) {
      d[i] = inv_theta * dinv[i] * b[i];
      x[i] = d[i];
    }
  }
  // d = a d + c D^-1 (b - A x), x_next = x + d; with a = 0 the old d is not read (it may be uninitialised).
  template <class V>
  void chebyshev_step(const Matrix<V>& A, const Vector<V>& dinv, const Vector<V>& b, V a, V c, Vector<V>& d,
                      const Vector<V>& x, Vector<V>& x_next) const {
    x_next.resize(static_cast<std::size_t>(A.rows));  // as in jacobi_sweep
    for_each_row_sum<true>(A, x, b.data(), chebyshev_update(a, c, dinv, d, x, x_next));
  }

  // l1 hybrid Gauss-Seidel (amg/gauss_seidel.hpp) on the rows of A, cut into `blocks`: 1 / (a_ii + sum of
  // |a_ij| over row i's columns outside its block). Columns past the rows (a rank's ghosts) lie outside.
  template <class V>
  Vector<V> l1_gauss_seidel_inverse_diagonal(const CsrMatrix<V>& A, const Array<Index>& blocks) const {
    Vector<V> inverse(static_cast<std::size_t>(A.rows));
    for_each_sweep_block(blocks, [&](Index first, Index last) {
      for (Index i = first; i < last; ++i) {
        double diagonal = 0, outside = 0;
        for (Offset p = A.row_ptr[i]; p < A.row_ptr[i + 1]; ++p) {
          const Index j = A.col[p];
          if (j == i) diagonal += double(A.val[p]);
          else if (j < first || j >= last) outside += std::abs(double(A.val[p]));
        }
        inverse[i] = static_cast<V>(1.0 / (diagonal + outside));
      }
    });
    return inverse;
  }
  // One sweep in `direction` over each block's rows, x updated in place, the rows outside a block read from
  // `before`, which holds x as the sweep began (here a copy; over MPI ranks with the ghosts' entries after
  // the rank's own: mpi_backend.hpp). The blocks are independent, so any thread count gives the same bits.
  template <class V>
  void gauss_seidel_sweep(const CsrMatrix<V>& A, const Array<Index>& blocks, const Vector<V>& inverse_diagonal,
                          const Vector<V>& b, Vector<V>& x, Vector<V>& before, SweepDirection direction) const {
    before.assign(x.begin(), x.end());
    gauss_seidel_sweep_from(A, blocks, inverse_diagonal, b, x, before, direction);
  }
  template <class V>
  void gauss_seidel_sweep_from(const CsrMatrix<V>& A, const Array<Index>& blocks, const Vector<V>& inverse_diagonal,
                               const Vector<V>& b, Vector<V>& x, const Vector<V>& before,
                               SweepDirection direction) const {
    for_each_sweep_block(blocks, [&](Index first, Index last) {
      const auto update = [&](Index i) {
        V r = b[i];
        for (Offset p = A.row_ptr[i]; p < A.row_ptr[i + 1]; ++p) {
          const Index j = A.col[p];
          r -= A.val[p] * (j >= first && j < last ? x[j] : before[j]);
        }
        x[i] += r * inverse_diagonal[i];
      };
      if (direction == SweepDirection::forward)
        for (Index i = first; i < last; ++i) update(i);
      else
        for (Index i = last - 1; i >= first; --i) update(i);
    });
  }

  // The same passes with the node blocks D_b in place of the diagonal: the residual of every row first (into
  // x_next), then node by node the update from the node's residuals, over them.
  template <class V>
  void jacobi_from_zero(const BlockDiagonal<V>& scaled_dinv, const Vector<V>& b, Vector<V>& x) const {
    for_each_node(scaled_dinv, [&](Index n) { scaled_dinv.multiply_node(n, b.data(), V(1), [&](Index i, V t) { x[i] = t; }); });
  }
  template <class V>
  void jacobi_sweep(const Matrix<V>& A, const BlockDiagonal<V>& scaled_dinv, const Vector<V>& b, const Vector<V>& x,
                    Vector<V>& x_next) const {
    residual(A, x, b, x_next);
    block_jacobi_update(scaled_dinv, x, x_next);
  }
  // The node-by-node update of those two passes from the residual r in x_next (the mpi backend forms r its way).
  template <class V>
  static void block_jacobi_update(const BlockDiagonal<V>& scaled_dinv, const Vector<V>& x, Vector<V>& x_next) {
    for_each_node(scaled_dinv, [&](Index n) {
      scaled_dinv.multiply_node(n, x_next.data(), V(1), [&](Index i, V t) { x_next[i] = x[i] + t; });
    });
  }
  template <class V>
  void chebyshev_from_zero(const BlockDiagonal<V>& dinv, const Vector<V>& b, V inv_theta, Vector<V>& d,
                           Vector<V>& x) const {
    for_each_node(dinv, [&](Index n) {
      dinv.multiply_node(n, b.data(), inv_theta, [&](Index i, V t) { d[i] = x[i] = t; });
    });
  }
  template <class V>
  void chebyshev_step(const Matrix<V>& A, const BlockDiagonal<V>& dinv, const Vector<V>& b, V a, V c, Vector<V>& d,
                      const Vector<V>& x, Vector<V>& x_next) const {
    residual(A, x, b, x_next);
    block_chebyshev_update(dinv, a, c, d, x, x_next);
  }
  template <class V>
  static void block_chebyshev_update(const BlockDiagonal<V>& dinv, V a, V c, Vector<V>& d, const Vector<V>& x,
                                     Vector<V>& x_next) {
    const bool keep = a != V(0);
    for_each_node(dinv, [&](Index n) {
      dinv.multiply_node(n, x_next.data(), c, [&](Index i, V t) {
        d[i] = (keep ? a * d[i] : V(0)) + t;
        x_next[i] = x[i] + d[i];
      });
    });
  }

 private:
  // f(first, last) for every Gauss-Seidel block [blocks[k], blocks[k + 1]), a block a task.
  template <class F>
  static void for_each_sweep_block(const Array<Index>& blocks, F&& f) {
    const auto count = static_cast<std::int64_t>(blocks.size()) - 1;
#pragma omp parallel for schedule(dynamic, 1) if (count > 1 && worth_a_team(static_cast<std::uint64_t>(blocks.back())))
    for (std::int64_t k = 0; k < count; ++k) f(blocks[k], blocks[k + 1]);
  }
  // f(n) for every node of D, on the thread team where the rows are worth one.
  template <class V, class F>
  static void for_each_node(const BlockDiagonal<V>& D, F&& f) {
#pragma omp parallel for schedule(static) if (worth_a_team(static_cast<std::uint64_t>(D.rows())))
    for (Index n = 0; n < D.nodes(); ++n) f(n);
  }

  template <class V>
  static std::shared_ptr<const Matrix<V>> for_the_solve(std::shared_ptr<const Csr<V>> M, SpmvFormat format,
                                                        double padding_limit) {
    auto m = std::make_shared<Matrix<V>>();
    m->rows = M->rows;
    m->cols = M->cols;
    if (format != SpmvFormat::csr && M->rows >= SlicedEllpack<V>::kChunk && sliced_ellpack_vector_units() &&
        sliced_ellpack_padding(*M) <= padding_limit)
      m->sliced = std::make_shared<const SlicedEllpack<V>>(sliced_ellpack_from_csr(*M));
    else
      m->csr = std::move(M);
    return m;
  }

  // then(i, s) for every row i of A, s = b_i - sum_j a_ij x_j (kResidual) or sum_j a_ij x_j, formed in the
  // row's order from the sliced ELLPACK copy or the CSR: the sums of a block of rows first, then `then` on
  // them (so `then` is compiled as the CSR kernels' code is, whatever vector units the sums use).
  template <bool kResidual, class V, class Then>
  static void for_each_row_sum(const Matrix<V>& A, const Vector<V>& x, const V* b, Then&& then) {
    if (!A.sliced) {
      for_each_row_sum<kResidual>(*A.csr, AllRows{A.rows}, ArrayColumns<V>{x.data()}, b, then);
      return;
    }
    const SlicedEllpack<V>& S = *A.sliced;
    const Index blocks = (S.chunks() + kSlicedRunChunks - 1) / kSlicedRunChunks;
#pragma omp parallel for schedule(static) if (worth_a_team(S.val.size(), kSerialMatrixEntries))
    for (Index block = 0; block < blocks; ++block) {
      const Index first_chunk = block * kSlicedRunChunks;
      sliced_run_sums<kResidual>(S, first_chunk, std::min(kSlicedRunChunks, S.chunks() - first_chunk), x.data(), b, then);
    }
  }

  // then(i, s) for the rows of chunks [first_chunk, first_chunk + count) (count <= kSlicedRunChunks): their
  // sums side by side first, then `then` on each row of the matrix among them.
  template <bool kResidual, class V, class Then>
  static void sliced_run_sums(const SlicedEllpack<V>& S, Index first_chunk, Index count, const V* x, const V* b,
                              Then& then) {
    constexpr Index kChunk = SlicedEllpack<V>::kChunk;
    alignas(64) V sums[kSlicedRunChunks * kChunk];
    sliced_ellpack_sums<kResidual>(S, first_chunk, count, x, b, sums);
    const Index first_row = first_chunk * kChunk, last_row = std::min(S.rows, (first_chunk + count) * kChunk);
    for (Index i = first_row; i < last_row; ++i) then(i, sums[i - first_row]);
  }

  // The same on runs of a sliced copy's chunks (the distributed layer's interior chunks), which read x alone.
  template <bool kResidual, class V, class Then>
  static void for_each_row_sum(const CsrMatrix<V>& /*A: the copy's rows*/, const SlicedRuns<V>& chunks,
                                   const ArrayColumns<V>& x, const V* b, Then&& then) {
    const std::uint64_t entries = static_cast<std::uint64_t>(chunks.count) * kSlicedRunChunks * SlicedEllpack<V>::kChunk *
                                  (chunks.matrix->val.size() / std::max<std::size_t>(chunks.matrix->rows, 1));
#pragma omp parallel for schedule(static) if (worth_a_team(entries, kSerialMatrixEntries))
    for (Index k = 0; k < chunks.count; ++k)
      sliced_run_sums<kResidual>(*chunks.matrix, chunks.runs[k].first, chunks.runs[k].second, x.x, b, then);
  }

  // The same on the rows of a CSR matrix, reading x through `x`.
  template <bool kResidual, class V, class Rows, class X, class Then>
  static void for_each_row_sum(const CsrMatrix<V>& A, const Rows& rows, const X& x, const V* b, Then&& then) {
    // The rows' entries (all of A's when the rows are all; a row list's share otherwise, as a halo exchange
    // splits a rank's rows in two)
    const auto entries = static_cast<std::uint64_t>(
        static_cast<double>(A.nnz()) * static_cast<double>(rows.size()) / static_cast<double>(std::max<Index>(A.rows, 1)));
    for_each_row(rows, entries,
                 [&](Index i) { then(i, kResidual ? row_residual(A, i, b[i], x) : row_product(A, i, x)); });
  }

  // The smoothers' updates of row i from its residual r, one formula for the whole matrix and for a set of
  // rows (the distributed layer's), so both give the same bits.
  template <class V>
  static auto jacobi_update(const Vector<V>& scaled_dinv, const Vector<V>& x_local, Vector<V>& x_next) {
    return [&scaled_dinv, &x_local, &x_next](Index i, V r) { x_next[i] = x_local[i] + scaled_dinv[i] * r; };
  }
  template <class V>
  static auto chebyshev_update(V a, V c, const Vector<V>& dinv, Vector<V>& d, const Vector<V>& x_local,
                               Vector<V>& x_next) {
    const bool keep = a != V(0);
    return [=, &dinv, &d, &x_local, &x_next](Index i, V r) {
      d[i] = (keep ? a * d[i] : V(0)) + c * dinv[i] * r;
      x_next[i] = x_local[i] + d[i];
    };
  }

  // sum_k a_ik x_k and b_i - sum_k a_ik x_k, in the row's order (the order every backend's CSR kernel uses).
  template <class V, class X>
  static V row_product(const CsrMatrix<V>& A, Index i, const X& x) {
    V s = 0;
    for (Offset k = A.row_begin(i); k < A.row_end(i); ++k) s += A.val[k] * x(A.col[k]);
    return s;
  }
  template <class V, class X>
  static V row_residual(const CsrMatrix<V>& A, Index i, V b, const X& x) {
    V r = b;
    for (Offset k = A.row_begin(i); k < A.row_end(i); ++k) r -= A.val[k] * x(A.col[k]);
    return r;
  }
};

}  // namespace amgsolve
