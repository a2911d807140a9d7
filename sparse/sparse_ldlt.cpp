#include "sparse/sparse_ldlt.hpp"

#include <Eigen/SparseCholesky>
#include <Eigen/SparseCore>
#include <vector>

#include "common/error.hpp"

namespace amgsolve {

template <class Value>
struct SparseLdlt<Value>::Impl {
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> factor;
  mutable Eigen::VectorXd rhs, solution;
};

template <class Value>
SparseLdlt<Value>::SparseLdlt(const CsrMatrix<Value>& A) : impl_(std::make_unique<Impl>()) {
  std::vector<Eigen::Triplet<double>> entries;
  entries.reserve(static_cast<std::size_t>(A.nnz()));
  for (Index i = 0; i < A.rows; ++i)
    for (Offset k = A.row_begin(i); k < A.row_end(i); ++k) entries.emplace_back(i, A.col[k], double(A.val[k]));
  Eigen::SparseMatrix<double> M(A.rows, A.cols);
  M.setFromTriplets(entries.begin(), entries.end());
  impl_->factor.compute(M);
  const bool positive = impl_->factor.info() == Eigen::Success &&
                        (A.rows == 0 || impl_->factor.vectorD().minCoeff() > 0.0);
  if (!positive) {
    throw NumericalError("the coarsest-level matrix (" + std::to_string(A.rows) +
                         " rows) is not positive definite: the input matrix is not SPD");
  }
}

template <class Value>
SparseLdlt<Value>::~SparseLdlt() = default;
template <class Value>
SparseLdlt<Value>::SparseLdlt(SparseLdlt&&) noexcept = default;
template <class Value>
SparseLdlt<Value>& SparseLdlt<Value>::operator=(SparseLdlt&&) noexcept = default;

template <class Value>
void SparseLdlt<Value>::solve(const Vector<Value>& b, Vector<Value>& x) const {
  const Eigen::Index n = static_cast<Eigen::Index>(b.size());
  impl_->rhs.resize(n);
  for (Eigen::Index i = 0; i < n; ++i) impl_->rhs[i] = b[i];
  impl_->solution = impl_->factor.solve(impl_->rhs);
  x.resize(b.size());
  for (Eigen::Index i = 0; i < n; ++i) x[i] = static_cast<Value>(impl_->solution[i]);
}

template class SparseLdlt<double>;
template class SparseLdlt<float>;

}  // namespace amgsolve
