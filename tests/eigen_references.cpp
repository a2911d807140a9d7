#include "eigen_references.hpp"

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <Eigen/LU>
#include <Eigen/QR>
#include <Eigen/SparseCholesky>
#include <stdexcept>

namespace amgsolve::test {

Eigen::VectorXd symmetric_eigenvalues(const Eigen::MatrixXd& A) {
  return Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(A, Eigen::EigenvaluesOnly).eigenvalues();
}

EigenPairs generalized_symmetric_eigenpairs(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B) {
  const Eigen::GeneralizedSelfAdjointEigenSolver<Eigen::MatrixXd> eigen(A, B);
  if (eigen.info() != Eigen::Success) throw std::runtime_error("the generalized eigenproblem did not converge");
  return {eigen.eigenvalues(), eigen.eigenvectors()};
}

Eigen::MatrixXd dense_inverse(const Eigen::MatrixXd& A) { return A.inverse(); }

Eigen::Index numerical_rank(const Eigen::MatrixXd& A) { return Eigen::FullPivLU<Eigen::MatrixXd>(A).rank(); }

Eigen::VectorXd least_squares(const Eigen::MatrixXd& N, const Eigen::VectorXd& b) {
  return N.colPivHouseholderQr().solve(b);
}

Eigen::VectorXd sparse_direct_solve(const Eigen::SparseMatrix<double>& A, const Eigen::VectorXd& b) {
  const Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> ldlt(A);
  if (ldlt.info() != Eigen::Success) throw std::runtime_error("the sparse LDL^T factorisation failed");
  return ldlt.solve(b);
}

}  // namespace amgsolve::test
