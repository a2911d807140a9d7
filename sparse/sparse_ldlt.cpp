#include "sparse/sparse_ldlt.hpp"

#include <Eigen/Cholesky>
#include <Eigen/Dense>
#include <Eigen/SparseCholesky>
#include <Eigen/SparseCore>
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "common/error.hpp"

namespace amgsolve {
namespace {

[[noreturn]] void not_positive_definite(Index rows) {
  throw SingularCoarsestLevel("the coarsest-level matrix (" + std::to_string(rows) +
                       " rows) is singular or not positive definite: the input matrix is not SPD");
}

// A singular matrix factorises with a last pivot of rounding size, not zero: a pivot that small against
// its own row's diagonal entry (in the factor's ordering) means singular, not positive definite. Against
// its own diagonal, so that the test does not change under a diagonal scaling D A D, which leaves a valid
// matrix SPD however far apart D spreads the pivots (1e-13 against 1 is an SPD diag(1, 1e-13)). (Pivots of
// an SPD coarse matrix of a coefficient contrast of 1e10, the largest the config accepts, stay some 1e-10
// of their diagonal entries.)
bool positive_pivots(const Eigen::VectorXd& pivots, const Eigen::VectorXd& diagonal) {
  for (Eigen::Index k = 0; k < pivots.size(); ++k)
    if (!(pivots[k] > 1e3 * std::numeric_limits<double>::epsilon() * std::abs(diagonal[k]))) return false;
  return true;
}

// The nullspace of a singular matrix: its m vectors orthonormalised (modified Gram-Schmidt, twice), and m
// nodes pinned to zero where the basis is well conditioned (one vector: the largest |B_k|; several: the pivot
// rows of an LU factorisation of the basis with full pivoting), so that the matrix without them is SPD.
struct Nullspace {
  std::vector<Eigen::VectorXd> basis;  // empty: the matrix is nonsingular
  std::vector<Eigen::Index> pinned;    // sorted
  std::vector<Eigen::Index> reduced_index;  // each row's in the matrix without the pinned ones (-1: pinned)

  Nullspace(const Vector<double>& B, Index rows) {
    if (B.empty()) return;
    if (rows == 0 || B.size() % static_cast<std::size_t>(rows) != 0)
      throw Error("the coarsest level's nullspace has " + std::to_string(B.size()) + " entries for " +
                  std::to_string(rows) + " rows");
    const auto m = static_cast<Eigen::Index>(B.size() / static_cast<std::size_t>(rows));
    const Eigen::Map<const Eigen::MatrixXd> vectors(B.data(), rows, m);
    for (Eigen::Index v = 0; v < m; ++v) {
      Eigen::VectorXd q = vectors.col(v);
      for (int pass = 0; pass < 2; ++pass)
        for (const Eigen::VectorXd& earlier : basis) q -= earlier.dot(q) * earlier;
      q.normalize();
      basis.push_back(std::move(q));
    }
    if (m == 1) {
      Eigen::Index k;
      basis[0].cwiseAbs().maxCoeff(&k);
      pinned = {k};
    } else {
      Eigen::MatrixXd Q(rows, m);
      for (Eigen::Index v = 0; v < m; ++v) Q.col(v) = basis[static_cast<std::size_t>(v)];
      const Eigen::FullPivLU<Eigen::MatrixXd> lu(Q);
      // P Q's first m rows are the pivots: P applied to the row numbers says which rows of Q they are.
      const Eigen::VectorXi order = lu.permutationP() * Eigen::VectorXi::LinSpaced(rows, 0, rows - 1);
      for (Eigen::Index v = 0; v < m; ++v) pinned.push_back(order[v]);
      std::sort(pinned.begin(), pinned.end());
    }
    reduced_index.assign(static_cast<std::size_t>(rows), 0);
    Eigen::Index next = 0;
    for (Eigen::Index i = 0; i < rows; ++i)
      reduced_index[static_cast<std::size_t>(i)] = std::binary_search(pinned.begin(), pinned.end(), i) ? -1 : next++;
  }
  bool empty() const { return basis.empty(); }
  bool is_pinned(Eigen::Index i) const { return !empty() && reduced_index[static_cast<std::size_t>(i)] < 0; }
  // Index in the matrix without the pinned rows and columns.
  Eigen::Index reduced(Eigen::Index i) const { return empty() ? i : reduced_index[static_cast<std::size_t>(i)]; }
  Eigen::Index size(Index rows) const { return rows - static_cast<Eigen::Index>(pinned.size()); }
  // v - Q Q^T v, vector by vector
  void project(Eigen::VectorXd& v) const {
    for (const Eigen::VectorXd& q : basis) v -= q.dot(v) * q;
  }
  std::size_t values() const { return basis.empty() ? 0 : basis.size() * static_cast<std::size_t>(basis[0].size()); }
};

// The entries of A, without the pinned row and column, in reduced indices.
template <class Value, class Add>
void for_each_kept_entry(const CsrMatrix<Value>& A, const Nullspace& nullspace, Add add) {
  for (Index i = 0; i < A.rows; ++i) {
    if (nullspace.is_pinned(i)) continue;
    for (Offset k = A.row_begin(i); k < A.row_end(i); ++k)
      if (!nullspace.is_pinned(A.col[k]))
        add(nullspace.reduced(i), nullspace.reduced(A.col[k]), static_cast<double>(A.val[k]));
  }
}

// The same as Eigen's matrix in double: what its LDL^T factorises.
template <class Value>
Eigen::SparseMatrix<double> kept_matrix(const CsrMatrix<Value>& A, const Nullspace& nullspace) {
  std::vector<Eigen::Triplet<double>> entries;
  entries.reserve(static_cast<std::size_t>(A.nnz()));
  for_each_kept_entry(A, nullspace, [&](Eigen::Index i, Eigen::Index j, double v) { entries.emplace_back(i, j, v); });
  const Eigen::Index n = nullspace.size(A.rows);
  Eigen::SparseMatrix<double> M(n, n);
  M.setFromTriplets(entries.begin(), entries.end());
  return M;
}

}  // namespace

template <class Value>
struct SparseLdlt<Value>::Impl {
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> factor;
  Nullspace nullspace;
  Index rows;
  mutable Eigen::VectorXd rhs, reduced_rhs, solution;

  Impl(const Vector<double>& B, Index n) : nullspace(B, n), rows(n) {}
};

template <class Value>
SparseLdlt<Value>::SparseLdlt(const CsrMatrix<Value>& A, const Vector<double>& nullspace)
    : impl_(std::make_unique<Impl>(nullspace, A.rows)) {
  const Eigen::SparseMatrix<double> M = kept_matrix(A, impl_->nullspace);
  impl_->factor.compute(M);
  if (impl_->factor.info() != Eigen::Success)
    not_positive_definite(A.rows);
  const Eigen::VectorXd diagonal = impl_->factor.permutationP() * Eigen::VectorXd(M.diagonal());
  if (!positive_pivots(impl_->factor.vectorD(), diagonal)) not_positive_definite(A.rows);
}

template <class Value>
SparseLdlt<Value>::~SparseLdlt() = default;
template <class Value>
SparseLdlt<Value>::SparseLdlt(SparseLdlt&&) noexcept = default;
template <class Value>
SparseLdlt<Value>& SparseLdlt<Value>::operator=(SparseLdlt&&) noexcept = default;

template <class Value>
std::uint64_t SparseLdlt<Value>::bytes() const {
  using StorageIndex = Eigen::SparseMatrix<double>::StorageIndex;
  const auto& L = impl_->factor.matrixL().nestedExpression();
  const auto n = static_cast<std::uint64_t>(L.rows());
  return static_cast<std::uint64_t>(L.nonZeros()) * (sizeof(double) + sizeof(StorageIndex)) +
         (n + 1) * sizeof(StorageIndex) + n * sizeof(double) +  // L's column starts, D
         2 * n * sizeof(StorageIndex) +                         // the ordering and its inverse
         static_cast<std::uint64_t>(impl_->nullspace.values()) * sizeof(double);
}

template <class Value>
bool SparseLdlt<Value>::singular() const {
  return !impl_->nullspace.empty();
}

template <class Value>
void SparseLdlt<Value>::solve(const Vector<Value>& b, Vector<Value>& x) const {
  Impl& s = *impl_;
  const Nullspace& N = s.nullspace;
  const Eigen::Index n = static_cast<Eigen::Index>(b.size());
  s.rhs.resize(n);
  for (Eigen::Index i = 0; i < n; ++i) s.rhs[i] = b[i];
  if (N.empty()) {
    s.solution = s.factor.solve(s.rhs);
  } else {
    N.project(s.rhs);  // onto the range: what A x can reach
    s.reduced_rhs.resize(N.size(static_cast<Index>(n)));
    for (Eigen::Index i = 0; i < n; ++i)
      if (!N.is_pinned(i)) s.reduced_rhs[N.reduced(i)] = s.rhs[i];
    const Eigen::VectorXd reduced = s.factor.solve(s.reduced_rhs);
    s.solution.resize(n);
    for (Eigen::Index i = 0; i < n; ++i) s.solution[i] = N.is_pinned(i) ? 0.0 : reduced[N.reduced(i)];
    N.project(s.solution);  // the solution of least norm
  }
  x.resize(b.size());
  for (Eigen::Index i = 0; i < n; ++i) x[i] = static_cast<Value>(s.solution[i]);
}

namespace {

// Eigen's LDL^T, its column counts of L read after the symbolic analysis.
class SymbolicLdlt : public Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> {
 public:
  double work() const {
    double sum = 0;
    for (Eigen::Index j = 0; j < m_nonZerosPerCol.size(); ++j)
      sum += static_cast<double>(m_nonZerosPerCol[j]) * static_cast<double>(m_nonZerosPerCol[j] + 1);
    return sum;
  }
};

}  // namespace

template <class Value>
double factorisation_work(const CsrMatrix<Value>& A) {
  SymbolicLdlt symbolic;
  symbolic.analyzePattern(kept_matrix(A, Nullspace({}, A.rows)));
  return symbolic.work();
}

template <class Value>
Vector<double> dense_inverse(const CsrMatrix<Value>& A, const Vector<double>& nullspace) {
  const Nullspace N(nullspace, A.rows);
  const Eigen::Index n = A.rows, m = N.size(A.rows);
  Eigen::MatrixXd dense = Eigen::MatrixXd::Zero(m, m);
  for_each_kept_entry(A, N, [&](Eigen::Index i, Eigen::Index j, double v) { dense(i, j) = v; });
  const Eigen::LLT<Eigen::MatrixXd> cholesky(dense);
  if (cholesky.info() != Eigen::Success ||
      !positive_pivots(cholesky.matrixLLT().diagonal().array().square().matrix().eval(), dense.diagonal()))
    not_positive_definite(A.rows);
  const Eigen::MatrixXd reduced = cholesky.solve(Eigen::MatrixXd::Identity(m, m));
  Eigen::MatrixXd inverse = Eigen::MatrixXd::Zero(n, n);
  for (Eigen::Index j = 0; j < n; ++j)
    for (Eigen::Index i = 0; i < n; ++i)
      if (!N.is_pinned(i) && !N.is_pinned(j)) inverse(i, j) = reduced(N.reduced(i), N.reduced(j));
  for (const Eigen::VectorXd& u : N.basis) {
    // (I - u u^T) E (I - u u^T) = E - u w^T - w u^T + (u^T w) u u^T with w = E u: two rank-one updates, per
    // basis vector (orthonormal: the projections commute).
    const Eigen::VectorXd w = inverse * u;
    const double uw = u.dot(w);
    inverse -= u * w.transpose() + w * u.transpose();
    inverse += uw * u * u.transpose();
  }
  // Symmetric to rounding; made exactly so, so that a row can be read for a column.
  const Eigen::MatrixXd symmetric = 0.5 * (inverse + inverse.transpose());
  return Vector<double>(symmetric.data(), symmetric.data() + symmetric.size());
}

template class SparseLdlt<double>;
template class SparseLdlt<float>;
template Vector<double> dense_inverse(const CsrMatrix<double>&, const Vector<double>&);
template double factorisation_work(const CsrMatrix<double>&);
template double factorisation_work(const CsrMatrix<float>&);
template Vector<double> dense_inverse(const CsrMatrix<float>&, const Vector<double>&);

}  // namespace amgsolve
