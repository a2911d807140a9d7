#include "sparse/sparse_ldlt.hpp"

#include <Eigen/Cholesky>
#include <Eigen/Dense>
#include <Eigen/SparseCholesky>
#include <Eigen/SparseCore>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "common/error.hpp"

namespace amgsolve {
namespace {

[[noreturn]] void not_positive_definite(Index rows) {
  throw NumericalError("the coarsest-level matrix (" + std::to_string(rows) +
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

// The nullspace of a singular matrix, normalised, and the node pinned to zero (the largest |B_k|).
struct Nullspace {
  Eigen::VectorXd basis;  // empty: the matrix is nonsingular
  Eigen::Index pinned = -1;

  Nullspace(const Vector<double>& B, Index rows) {
    if (B.empty()) return;
    if (B.size() != static_cast<std::size_t>(rows))
      throw Error("the coarsest level's nullspace has " + std::to_string(B.size()) + " entries for " +
                  std::to_string(rows) + " rows");
    basis = Eigen::Map<const Eigen::VectorXd>(B.data(), static_cast<Eigen::Index>(B.size()));
    basis.normalize();
    basis.cwiseAbs().maxCoeff(&pinned);
  }
  bool empty() const { return basis.size() == 0; }
  // Index in the matrix without the pinned row and column.
  Eigen::Index reduced(Eigen::Index i) const { return i < pinned || empty() ? i : i - 1; }
  Eigen::Index size(Index rows) const { return empty() ? rows : rows - 1; }
  // v - (basis^T v) basis
  void project(Eigen::VectorXd& v) const {
    if (!empty()) v -= basis.dot(v) * basis;
  }
};

// The entries of A, without the pinned row and column, in reduced indices.
template <class Value, class Add>
void for_each_kept_entry(const CsrMatrix<Value>& A, const Nullspace& nullspace, Add add) {
  for (Index i = 0; i < A.rows; ++i) {
    if (i == nullspace.pinned) continue;
    for (Offset k = A.row_begin(i); k < A.row_end(i); ++k)
      if (A.col[k] != nullspace.pinned)
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
         static_cast<std::uint64_t>(impl_->nullspace.basis.size()) * sizeof(double);
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
    s.reduced_rhs.resize(n - 1);
    for (Eigen::Index i = 0; i < n; ++i)
      if (i != N.pinned) s.reduced_rhs[N.reduced(i)] = s.rhs[i];
    const Eigen::VectorXd reduced = s.factor.solve(s.reduced_rhs);
    s.solution.resize(n);
    for (Eigen::Index i = 0; i < n; ++i) s.solution[i] = i == N.pinned ? 0.0 : reduced[N.reduced(i)];
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
      if (i != N.pinned && j != N.pinned) inverse(i, j) = reduced(N.reduced(i), N.reduced(j));
  if (!N.empty()) {
    // (I - u u^T) E (I - u u^T) = E - u w^T - w u^T + (u^T w) u u^T with w = E u: two rank-one updates.
    const Eigen::VectorXd w = inverse * N.basis;
    const double uw = N.basis.dot(w);
    inverse -= N.basis * w.transpose() + w * N.basis.transpose();
    inverse += uw * N.basis * N.basis.transpose();
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
