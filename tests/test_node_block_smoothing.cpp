// Node-block smoothing for systems (amg.smoother.diagonal; sparse/block_diagonal.hpp): the blocks' inverses and
// inverse Cholesky factors against Eigen's dense ones, rho(D_b^-1 A) by Lanczos and Gershgorin against the
// dense generalized eigenproblem A v = lambda D_b v, the smoothers' error propagation on its eigenvectors
// against the polynomials they stand for (Jacobi 1 - omega lambda, Chebyshev T_k((theta - lambda) / delta) /
// T_k(theta / delta)), the V-cycle with node blocks symmetric and positive definite, and the solves: fewer
// iterations than pointwise on elasticity and the structural matrices, a scalar problem's `node` the point
// smoother bit for bit.
#include <cmath>

#include "amg/chebyshev.hpp"
#include "amg/hierarchy.hpp"
#include "amg/jacobi.hpp"
#include "amg/rigid_body_modes.hpp"
#include "amg/spectral_radius.hpp"
#include "amgsolve/solver.hpp"
#include "common/error.hpp"
#include "common/hash.hpp"
#include "problems/poisson.hpp"
#include "sparse/block_diagonal.hpp"
#include "sparse/matrix_market.hpp"
#include "test_support.hpp"

namespace amgsolve {
namespace {

using namespace test;
using Dense = Eigen::MatrixXd;

Dense dense_of(const BlockDiagonal<double>& B) {
  Dense D = Dense::Zero(B.rows(), B.rows());
  for (Index n = 0; n < B.nodes(); ++n)
    for (Index i = 0; i < B.node_rows(n); ++i)
      for (Index k = 0; k < B.node_rows(n); ++k)
        D(B.first_row(n) + i, B.first_row(n) + k) = B.values[B.block_ptr[n] + i * B.node_rows(n) + k];
  return D;
}

class SmallElasticity : public ::testing::Test {
 protected:
  void SetUp() override {
    Vector<double> coordinates;
    A = std::make_shared<const CsrMatrix<double>>(elasticity_2d(8, 4, coordinates));
    dense = to_dense(*A);
    nodes = uneven_nodes(A->rows);
    eigen = generalized_symmetric_eigenpairs(dense, dense_block_diagonal(dense, *nodes));  // A v = lambda D_b v
  }
  std::shared_ptr<const CsrMatrix<double>> A;
  Dense dense;
  std::shared_ptr<const Array<Index>> nodes;
  EigenPairs eigen;
};

TEST_F(SmallElasticity, BlockInversesAreEigensInversesAndInverseCholeskyFactors) {
  const Dense D = dense_block_diagonal(dense, *nodes);
  const Dense D_inverse = dense_inverse(D);
  const BlockDiagonal<double> inverse = inverse_node_blocks<double>(*A, nodes, BlockInverse::inverse, 0.5);
  EXPECT_LT((dense_of(inverse) - 0.5 * D_inverse).norm(), 1e-12 * D_inverse.norm());
  // L^-1 lower triangular with L^-1 D_b L^-T = I.
  const Dense L_inv = dense_of(inverse_node_blocks<double>(*A, nodes, BlockInverse::cholesky_factor));
  EXPECT_TRUE(L_inv.isApprox(Dense(L_inv.triangularView<Eigen::Lower>())));
  EXPECT_LT((L_inv * D * L_inv.transpose() - Dense::Identity(A->rows, A->rows)).norm(), 1e-12 * A->rows);
  // In float: the same, rounded.
  const BlockDiagonal<float> in_float = inverse_node_blocks<float>(cast_values<float>(*A), nodes, BlockInverse::inverse);
  for (std::size_t k = 0; k < in_float.values.size(); ++k)
    EXPECT_NEAR(in_float.values[k], 2 * inverse.values[k], 1e-6 * D_inverse.cwiseAbs().maxCoeff());
}

TEST(BlockDiagonal, ABlockThatIsNotPositiveDefiniteIsNamed) {
  // Positive diagonal entries, but the block of rows 3-4 is [[1, 2], [2, 1]] (eigenvalues 3 and -1).
  const CsrMatrix<double> A = csr_from_triplets<double>(
      4, 4, {{0, 0, 4.0}, {1, 1, 4.0}, {2, 2, 1.0}, {2, 3, 2.0}, {3, 2, 2.0}, {3, 3, 1.0}, {0, 1, 1.0}, {1, 0, 1.0}});
  const auto nodes = std::make_shared<const Array<Index>>(Array<Index>{0, 2, 4});
  try {
    inverse_node_blocks<double>(A, nodes, BlockInverse::inverse);
    FAIL() << "no error";
  } catch (const NumericalError& e) {
    EXPECT_NE(std::string(e.what()).find("the node of rows 3 to 4 is not positive definite"), std::string::npos)
        << e.what();
  }
}

TEST_F(SmallElasticity, LanczosAndGershgorinBoundTheLargestEigenvalueOfTheBlockScaledMatrix) {
  const double lambda_max = eigen.values.maxCoeff();
  // With as many steps as rows the Krylov space is everything: the largest eigenvalue itself.
  EXPECT_NEAR(lanczos_max_eigenvalue_block_dinv_a(*A, nodes, A->rows, 7), lambda_max, 1e-8 * lambda_max);
  // With 6 a lower bound, not far below.
  const double six = lanczos_max_eigenvalue_block_dinv_a(*A, nodes, 6, 7);
  EXPECT_LE(six, lambda_max * (1 + 1e-12));
  EXPECT_GT(six, 0.7 * lambda_max);
  // Gershgorin's bound is the infinity norm of D_b^-1 A, above the spectral radius.
  const Dense scaled = dense_inverse(dense_block_diagonal(dense, *nodes)) * dense;
  const double norm = scaled.cwiseAbs().rowwise().sum().maxCoeff();
  EXPECT_NEAR(gershgorin_bound_block_dinv_a(*A, nodes), norm, 1e-12 * norm);
  EXPECT_GE(norm, lambda_max);
  // Nodes of single rows: the pointwise estimates, the same bits.
  Array<Index> rows(static_cast<std::size_t>(A->rows) + 1);
  for (Index i = 0; i <= A->rows; ++i) rows[i] = i;
  const auto single = std::make_shared<const Array<Index>>(rows);
  EXPECT_DOUBLE_EQ(gershgorin_bound_block_dinv_a(*A, single), gershgorin_bound_dinv_a(*A));
  EXPECT_NEAR(lanczos_max_eigenvalue_block_dinv_a(*A, single, 6, 7), lanczos_max_eigenvalue_dinv_a(*A, 6, 7),
              1e-12 * lambda_max);
}

// The error a smoother leaves from x = 0 for b = A v, v an eigenvector of D_b^-1 A: v - x.
template <class Smoother>
Vector<double> error_left(const Smoother& smoother, const CsrMatrix<double>& A, const Vector<double>& v, int steps) {
  Vector<double> b, x(v.size(), 0.0);
  spmv(A, v, b);
  for (int s = 0; s < steps; ++s) smoother.smooth(b, x, s == 0);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = v[i] - x[i];
  return x;
}

double chebyshev_polynomial(int k, double t) {
  return std::abs(t) <= 1 ? std::cos(k * std::acos(t)) : std::cosh(k * std::acosh(std::abs(t))) * (t < 0 && k % 2 ? -1 : 1);
}

TEST_F(SmallElasticity, SmoothersMultiplyEachEigenvectorByTheirPolynomial) {
  const CpuBackend backend;
  const CpuMatrix<double> M = CpuMatrix<double>::view(*A);
  const double lambda_max = eigen.values.maxCoeff();
  SmootherSpec chebyshev;
  chebyshev.degree = 3;
  chebyshev.upper = 1.05 * lambda_max;
  chebyshev.lower = chebyshev.upper / 10;
  SmootherSpec jacobi;
  jacobi.type = SmootherType::jacobi;
  jacobi.sweeps = 2;
  jacobi.omega = 1.2 / lambda_max;
  const ChebyshevSmoother<CpuBackend, double, BlockDiagonal<double>> cheb(
      backend, M, chebyshev, backend.smoother_block_diagonal(*A, nodes, smoother_scale(chebyshev)));
  const JacobiSmoother<CpuBackend, double, BlockDiagonal<double>> jac(
      backend, M, jacobi, backend.smoother_block_diagonal(*A, nodes, smoother_scale(jacobi)));
  const double theta = (chebyshev.upper + chebyshev.lower) / 2, delta = (chebyshev.upper - chebyshev.lower) / 2;
  for (Index e : {Index{0}, A->rows / 3, A->rows / 2, A->rows - 1}) {
    const double lambda = eigen.values[e];
    Vector<double> v(eigen.vectors.col(e).data(), eigen.vectors.col(e).data() + A->rows);
    const double p = chebyshev_polynomial(3, (theta - lambda) / delta) / chebyshev_polynomial(3, theta / delta);
    // Two steps: the first from zero, the second from the first's x.
    const Vector<double> after_chebyshev = error_left(cheb, *A, v, 2);
    const Vector<double> after_jacobi = error_left(jac, *A, v, 1);
    const double q = std::pow(1 - jacobi.omega * lambda, 2);
    for (Index i = 0; i < A->rows; ++i) {
      EXPECT_NEAR(after_chebyshev[i], p * p * v[i], 1e-10) << "eigenvalue " << lambda << ", row " << i;
      EXPECT_NEAR(after_jacobi[i], q * v[i], 1e-10) << "eigenvalue " << lambda << ", row " << i;
    }
  }
}

Parameters system(int block_size, SmootherDiagonal diagonal) {
  Parameters p;
  p.amg.block_size = block_size;
  p.amg.smoother.diagonal = diagonal;
  p.solver.tolerance = 1e-8;
  p.solver.max_iterations = 2000;
  return p;
}

TEST(NodeBlockSmoothing, TheVCycleIsSymmetricAndPositiveDefinite) {
  Vector<double> coordinates;
  const auto A = std::make_shared<const CsrMatrix<double>>(elasticity_2d(32, 8, coordinates));
  AmgParams params = system(2, SmootherDiagonal::node).amg;
  params.near_nullspace = rigid_body_modes(coordinates, 2);
  params.coarse_size = 40;  // three levels: coarse nodes of up to 3 rows smoothed with their blocks too
  for (SmootherType type : {SmootherType::chebyshev, SmootherType::jacobi}) {
    params.smoother.type = type;
    const AmgHierarchy<double> amg(A, params);
    ASSERT_GE(amg.levels(), 3u);
    for (std::size_t l = 0; l + 1 < amg.levels(); ++l) ASSERT_TRUE(amg.smoother(l).nodes) << "level " << l;
    expect_symmetric_positive_definite(test::CpuVcycle<double>(amg), A->rows);
  }
}

TEST(NodeBlockSmoothing, SolvesElasticityInFewerIterationsThanPointwise) {
  // A nearly incompressible material (nu = 0.45), whose displacements couple strongly within a node: there
  // the node blocks save iterations whatever the aggregates; at nu = 0.3 the gain is within what another set
  // of aggregates moves (docs/BENCHMARKS.md, "MIS-2 with Luby's fresh priorities").
  Vector<double> coordinates;
  const auto A =
      std::make_shared<const CsrMatrix<double>>(elasticity_2d(64, 16, coordinates, Support::clamped, 0.45));
  Vector<double> b(static_cast<std::size_t>(A->rows));
  for (Index i = 0; i < A->rows; ++i) b[i] = seeded_uniform(3, i) - 0.5;
  Parameters point = system(2, SmootherDiagonal::point), node = system(2, SmootherDiagonal::automatic);
  point.amg.near_nullspace = node.amg.near_nullspace = rigid_body_modes(coordinates, 2);
  const Solved by_point = solve_with(A, point, b), by_node = solve_with(A, node, b);
  ASSERT_TRUE(by_node.result.converged);
  EXPECT_LE(true_relative_residual(*A, b, by_node.x), 1e-8);
  EXPECT_LT(by_node.result.iterations, by_point.result.iterations)
      << by_node.result.iterations << " against " << by_point.result.iterations;
  // The level table says which: auto is node blocks for a system.
  EXPECT_NE(by_node.setup.levels[0].smoother.find("node blocks"), std::string::npos) << by_node.setup.levels[0].smoother;
  EXPECT_EQ(by_point.setup.levels[0].smoother.find("node blocks"), std::string::npos);
  // and in mixed precision (the blocks inverted in double, rounded to float)
  node.solver.precision = Precision::mixed;
  const Solved mixed = solve_with(A, node, b);
  ASSERT_TRUE(mixed.result.converged);
  EXPECT_LE(true_relative_residual(*A, b, mixed.x), 1e-8);
  EXPECT_LE(mixed.result.iterations, by_node.result.iterations + 2);
}

TEST(NodeBlockSmoothing, AScalarProblemsNodesAreItsRows) {
  PoissonParams poisson;
  poisson.stencil = Stencil::p7;
  poisson.size = {12, 12, 12};
  const auto A = std::make_shared<const CsrMatrix<double>>(poisson_matrix(poisson));
  const Vector<double> b(static_cast<std::size_t>(A->rows), 1.0);
  const Solved point = solve_with(A, system(1, SmootherDiagonal::point), b);
  const Solved node = solve_with(A, system(1, SmootherDiagonal::node), b);
  EXPECT_EQ(point.result.history, node.result.history);
  EXPECT_EQ(point.x, node.x);
}

TEST(NodeBlockSmoothing, ShellsNeedFarFewerIterations) {
  // bcsstk14 (a roof of shells, 6 unknowns per node): PyAMG needs 52 iterations with block Jacobi, 327 with
  // pointwise Jacobi (docs/BENCHMARKS.md, "Systems").
  const auto matrices = shared_matrices({"bcsstk14"});
  if (matrices.empty()) GTEST_SKIP() << no_shared_matrices();
  const auto A = std::make_shared<const CsrMatrix<double>>(read_matrix_market(matrices.front().second));
  const Vector<double> b(static_cast<std::size_t>(A->rows), 1.0);
  const Solved point = solve_with(A, system(6, SmootherDiagonal::point), b);
  const Solved node = solve_with(A, system(6, SmootherDiagonal::node), b);
  ASSERT_TRUE(node.result.converged);
  EXPECT_LE(true_relative_residual(*A, b, node.x), 1e-8);
  EXPECT_LT(2 * node.result.iterations, point.result.iterations)
      << node.result.iterations << " against " << point.result.iterations;
}

}  // namespace
}  // namespace amgsolve
