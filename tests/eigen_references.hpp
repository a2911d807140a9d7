#pragma once
// Eigen's decompositions, the tests' independent references, compiled once for every test program instead
// of once in every test file that uses one (they are much of a test file's code, and CI compiles the tests
// twice, plain and sanitized). The tests form their matrices with Eigen's expressions and hand them here.
#include <Eigen/Core>
#include <Eigen/SparseCore>

namespace amgsolve::test {

// The eigenvalues of a symmetric matrix, ascending.
Eigen::VectorXd symmetric_eigenvalues(const Eigen::MatrixXd& A);

// A v = lambda B v with A symmetric and B symmetric positive definite: the eigenvalues ascending and the
// B-orthonormal eigenvectors as columns in the same order.
struct EigenPairs {
  Eigen::VectorXd values;
  Eigen::MatrixXd vectors;
};
EigenPairs generalized_symmetric_eigenpairs(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B);

Eigen::MatrixXd dense_inverse(const Eigen::MatrixXd& A);

// The numerical rank, by LU with full pivoting.
Eigen::Index numerical_rank(const Eigen::MatrixXd& A);

// The coefficients c minimising ||N c - b|| (QR with column pivoting).
Eigen::VectorXd least_squares(const Eigen::MatrixXd& N, const Eigen::VectorXd& b);

// x with A x = b by a sparse LDL^T factorisation (Eigen's SimplicialLDLT); A symmetric positive definite.
Eigen::VectorXd sparse_direct_solve(const Eigen::SparseMatrix<double>& A, const Eigen::VectorXd& b);

}  // namespace amgsolve::test
