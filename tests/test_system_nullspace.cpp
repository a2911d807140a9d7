// Singular systems (amg/system_nullspace.hpp): a body free to move, whose stiffness matrix maps some rigid-body
// motions to zero. The nullspace found among the near-nullspace vectors against the motions themselves (all
// three when nothing holds the body, the rotation about a pinned corner alone), the refusals, the coarsest
// pseudo-inverse with several nullspace vectors against Eigen's, and the solves against the two properties
// that define A^+ b (A x = b, x orthogonal to the nullspace), on any thread count, in mixed precision and
// after a re-setup; an inconsistent right-hand side refused.
#include <Eigen/Dense>
#include <cmath>
#include <omp.h>

#include "amg/hierarchy.hpp"
#include "amg/near_nullspace.hpp"
#include "amg/rigid_body_modes.hpp"
#include "amg/nullspace.hpp"
#include "amg/system_nullspace.hpp"
#include "amgsolve/solver.hpp"
#include "common/error.hpp"
#include "common/hash.hpp"
#include "problems/poisson.hpp"
#include "sparse/sparse_ldlt.hpp"
#include "test_support.hpp"

namespace amgsolve {
namespace {

using namespace test;
using Dense = Eigen::MatrixXd;

// |cos| of the angle between u and v: 1 where they are parallel.
double alignment(const Eigen::VectorXd& u, const Eigen::VectorXd& v) { return std::abs(u.dot(v)) / (u.norm() * v.norm()); }

struct Body {
  std::shared_ptr<const CsrMatrix<double>> A;
  NearNullspaceVectors modes;
  Vector<double> coordinates;
  Body(Index nx, Index ny, Support support) {
    A = std::make_shared<const CsrMatrix<double>>(elasticity_2d(nx, ny, coordinates, support));
    modes = rigid_body_modes(coordinates, 2);
  }
  NearNullspace finest() const { return finest_near_nullspace(A->rows, 2, modes); }
  // Its nullspace's vectors (resolved by auto) as the columns of a dense matrix.
  Dense nullspace() const {
    const SystemNullspace resolved = resolve_system_nullspace(*A, finest(), NullspaceChoice::automatic);
    if (!resolved.combinations) return Dense(A->rows, 0);
    const Vector<double> N = nullspace_vectors(finest(), *resolved.combinations);
    return Eigen::Map<const Dense>(N.data(), A->rows, static_cast<Eigen::Index>(N.size() / A->rows));
  }
  // A random right-hand side with its part along the nullspace N removed (loads in equilibrium).
  Vector<double> consistent_rhs(std::uint64_t seed) const {
    Eigen::VectorXd b(A->rows);
    for (Index i = 0; i < A->rows; ++i) b[i] = seeded_uniform(seed, i) - 0.5;
    const Dense N = nullspace();
    if (N.cols() > 0) b -= N * least_squares(N, b);
    return Vector<double>(b.data(), b.data() + b.size());
  }
};

TEST(SystemNullspace, IsTheRigidMotionsTheBodyIsFreeToMake) {
  // Nothing holds it: the three modes. Clamped: none.
  const Body floating(16, 4, Support::floating), clamped(16, 4, Support::clamped);
  const SystemNullspace all = resolve_system_nullspace(*floating.A, floating.finest(), NullspaceChoice::automatic);
  ASSERT_EQ(all.choice, NullspaceChoice::near_nullspace);
  EXPECT_EQ(all.combinations->size(), 9u);  // 3 x 3
  EXPECT_EQ(resolve_system_nullspace(*clamped.A, clamped.finest(), NullspaceChoice::automatic).choice,
            NullspaceChoice::none);
  EXPECT_EQ(resolve_system_nullspace(*floating.A, floating.finest(), NullspaceChoice::none).choice, NullspaceChoice::none);
  // The unit vectors of the components (block_size alone): the two translations, not the rotation.
  const SystemNullspace translations = resolve_system_nullspace(
      *floating.A, finest_near_nullspace(floating.A->rows, 2, {}), NullspaceChoice::automatic);
  ASSERT_EQ(translations.choice, NullspaceChoice::near_nullspace);
  EXPECT_EQ(translations.combinations->size(), 4u);  // 2 x 2
  // Pinned at the corner (0, 0): the rotation about it, (-y, x), a combination of the centroid's rotation
  // and the translations.
  const Body pinned(16, 4, Support::pinned_corner);
  const Dense N = pinned.nullspace();
  ASSERT_EQ(N.cols(), 1);
  Eigen::VectorXd about_corner(pinned.A->rows);
  for (Index node = 0; node < pinned.A->rows / 2; ++node) {
    about_corner[2 * node] = -pinned.coordinates[2 * node + 1];
    about_corner[2 * node + 1] = pinned.coordinates[2 * node];
  }
  EXPECT_GT(alignment(N.col(0), about_corner), 1 - 1e-12);
  EXPECT_LT((to_dense(*pinned.A) * N).norm(), 1e-12 * N.norm());
}

// The body's modes, vector v scaled by factors[v % factors.size()]; a matrix scaled by `factor`.
NearNullspace scaled_modes(const Body& body, const std::vector<double>& factors) {
  NearNullspace B = body.finest();
  for (std::size_t e = 0; e < B.values.size(); ++e) B.values[e] *= factors[e % factors.size()];
  return B;
}
CsrMatrix<double> scaled_matrix(const CsrMatrix<double>& A, double factor) {
  CsrMatrix<double> scaled = A;
  for (double& v : scaled.val) v *= factor;
  return scaled;
}
// The smallest cosine between a rigid-body mode of `body` and its projection onto span(N).
double worst_mode_in_span(const Body& body, const Dense& N) {
  const NearNullspace B = body.finest();
  const Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> modes(
      B.values.data(), B.rows(), B.vectors);
  double worst = 1.0;
  for (Eigen::Index v = 0; v < modes.cols(); ++v) {
    const Eigen::VectorXd mode = modes.col(v);
    worst = std::min(worst, alignment(mode, N * least_squares(N, mode)));
  }
  return worst;
}

TEST(SystemNullspace, IsFoundForVectorsAndMatricesOfAnyScale) {
  // Vectors 1e-300 to 1e200 long, and matrices of 1e-200 and 1e200: their squares over- or underflow in double.
  const Body floating(16, 4, Support::floating), clamped(16, 4, Support::clamped);
  const auto nullspace_of = [](const CsrMatrix<double>& A, const NearNullspace& B) {
    const SystemNullspace resolved = resolve_system_nullspace(A, B, NullspaceChoice::automatic);
    if (!resolved.combinations) return Dense(A.rows, 0);
    const Vector<double> N = nullspace_vectors(B, *resolved.combinations);
    return Dense(Eigen::Map<const Dense>(N.data(), A.rows, static_cast<Eigen::Index>(N.size() / A.rows)));
  };
  for (const std::vector<double>& factors :
       {std::vector<double>{1e200, 1e-300, 1.0}, std::vector<double>{1e-300}, std::vector<double>{1e200}}) {
    const NearNullspace B = scaled_modes(floating, factors);
    for (const double matrix_factor : {1.0, 1e-200, 1e200}) {
      SCOPED_TRACE(::testing::Message() << "modes x " << factors[0] << ", matrix x " << matrix_factor);
      const Dense N = nullspace_of(scaled_matrix(*floating.A, matrix_factor), B);
      ASSERT_EQ(N.cols(), 3);
      EXPECT_GT(worst_mode_in_span(floating, N), 1 - 1e-10);
      EXPECT_EQ(nullspace_of(scaled_matrix(*clamped.A, matrix_factor), scaled_modes(clamped, factors)).cols(), 0);
    }
  }
  // A vector that is zero everywhere is a mistake, not a motion.
  NearNullspace with_zero = floating.finest();
  for (std::size_t e = 1; e < with_zero.values.size(); e += 3) with_zero.values[e] = 0.0;
  try {
    resolve_system_nullspace(*floating.A, with_zero, NullspaceChoice::automatic);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("vector 2 is zero on every row"), std::string::npos) << e.what();
  }
  Parameters parameters;
  parameters.amg.block_size = 2;
  parameters.amg.near_nullspace = {3, std::make_shared<const Vector<double>>(with_zero.values)};
  EXPECT_THROW(Solver(floating.A, parameters), InputError);
}

TEST(SystemNullspace, RefusesWhatItCannotBe) {
  const Body pinned(8, 4, Support::pinned_corner);
  const auto message = [&](NullspaceChoice choice) {
    try {
      resolve_system_nullspace(*pinned.A, pinned.finest(), choice);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  // Declared: every vector must be A's; the pinned body's translations are not.
  EXPECT_NE(message(NullspaceChoice::near_nullspace).find("does not map near-nullspace vector 1 to zero"),
            std::string::npos)
      << message(NullspaceChoice::near_nullspace);
  EXPECT_NE(message(NullspaceChoice::constant).find("amg.nullspace constant is a scalar problem's"), std::string::npos);
  // Two bodies side by side, free: each moves on its own, more motions than the modes of both together.
  const Body one(4, 4, Support::floating);
  std::vector<Triplet<double>> t;
  for (int copy = 0; copy < 2; ++copy)
    for (Index i = 0; i < one.A->rows; ++i)
      for (Offset k = one.A->row_begin(i); k < one.A->row_end(i); ++k)
        t.push_back({copy * one.A->rows + i, copy * one.A->rows + one.A->col[k], one.A->val[k]});
  const CsrMatrix<double> two = csr_from_triplets(2 * one.A->rows, 2 * one.A->rows, std::move(t));
  Vector<double> both = one.coordinates;
  for (std::size_t i = 0; i < one.coordinates.size(); i += 2) both.insert(both.end(), {one.coordinates[i] + 5, one.coordinates[i + 1]});
  try {
    resolve_system_nullspace(two, finest_near_nullspace(two.rows, 2, rigid_body_modes(both, 2)), NullspaceChoice::automatic);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("falls into 2 disconnected parts"), std::string::npos) << e.what();
  }
  // A scalar problem has no near-nullspace to declare.
  Parameters scalar;
  scalar.amg.nullspace = NullspaceChoice::near_nullspace;
  EXPECT_THROW(Solver(pinned.A, scalar), InputError);
}

// Two fields of one body that nothing couples (two Neumann Laplacians, interleaved as the unknowns of 2D
// nodes), stored with their nodes' 2x2 blocks in full (zeros between the fields, as scipy's tobsr().tocsr()
// keeps them) or without: one part of nodes, whose nullspace is each field's constant, which the
// combinations of the near-nullspace (the block size's constants) hold; solved to A^+ b either way.
TEST(SystemNullspace, DecoupledFieldsOfOneBodyAreOnePartOfNodes) {
  PoissonParams neumann;
  neumann.stencil = Stencil::p5;
  neumann.size = {16, 12};
  neumann.boundary = Boundary::neumann;
  const CsrMatrix<double> field = poisson_matrix(neumann);
  for (const bool full_blocks : {false, true}) {
    SCOPED_TRACE(full_blocks ? "full node blocks" : "no zeros stored");
    std::vector<Triplet<double>> t;
    for (Index i = 0; i < field.rows; ++i)
      for (Offset k = field.row_begin(i); k < field.row_end(i); ++k) {
        const Index j = field.col[k];
        t.push_back({2 * i, 2 * j, field.val[k]});
        t.push_back({2 * i + 1, 2 * j + 1, 0.5 * field.val[k]});
        if (full_blocks) {
          t.push_back({2 * i, 2 * j + 1, 0.0});
          t.push_back({2 * i + 1, 2 * j, 0.0});
        }
      }
    const auto A = std::make_shared<const CsrMatrix<double>>(csr_from_triplets(2 * field.rows, 2 * field.rows, std::move(t)));
    EXPECT_EQ(connected_components(*A), 2) << "two fields";
    const NearNullspace B = finest_near_nullspace(A->rows, 2, NearNullspaceVectors{});
    EXPECT_EQ(connected_components(*A, &B.node_ptr), 1) << "one body";
    const SystemNullspace found = resolve_system_nullspace(*A, B, NullspaceChoice::automatic);
    EXPECT_EQ(found.choice, NullspaceChoice::near_nullspace);
    ASSERT_TRUE(found.combinations);
    EXPECT_EQ(found.combinations->size(), 4u) << "both fields' constants";
    Parameters params;
    params.amg.block_size = 2;
    params.solver.tolerance = 1e-8;
    Solver solver(A, params);
    EXPECT_EQ(solver.setup().nullspace_vectors, 2);
    Vector<double> b(static_cast<std::size_t>(A->rows));
    double sums[2] = {0, 0};
    for (std::size_t i = 0; i < b.size(); ++i) sums[i % 2] += b[i] = std::cos(0.7 * static_cast<double>(i));
    for (std::size_t i = 0; i < b.size(); ++i) b[i] -= sums[i % 2] / static_cast<double>(field.rows);
    Vector<double> x;
    ASSERT_TRUE(solver.solve(b, x).converged);
    EXPECT_LE(true_relative_residual(*A, b, x), 1e-8);
    double x_sums[2] = {0, 0}, x_magnitude = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      x_sums[i % 2] += x[i];
      x_magnitude += std::abs(x[i]);
    }
    EXPECT_LT(std::abs(x_sums[0]), 1e-12 * x_magnitude) << "x has no part along the nullspace";
    EXPECT_LT(std::abs(x_sums[1]), 1e-12 * x_magnitude);
  }
}

TEST(SystemNullspace, TheCoarsestSolveIsThePseudoInverse) {
  const Body floating(6, 3, Support::floating);
  const Dense A = to_dense(*floating.A), N = floating.nullspace();
  ASSERT_EQ(N.cols(), 3);
  const Vector<double> columns(N.data(), N.data() + N.size());
  const Dense pseudo_inverse = A.completeOrthogonalDecomposition().pseudoInverse();
  const SparseLdlt<double> ldlt(*floating.A, columns);
  EXPECT_TRUE(ldlt.singular());
  for (std::uint64_t seed : {1, 2}) {
    Vector<double> b(static_cast<std::size_t>(A.rows())), x;
    for (Index i = 0; i < A.rows(); ++i) b[i] = seeded_uniform(seed, i) - 0.5;  // with a part along N: removed
    ldlt.solve(b, x);
    const Eigen::VectorXd expected = pseudo_inverse * Eigen::Map<const Eigen::VectorXd>(b.data(), A.rows());
    EXPECT_LT((Eigen::Map<const Eigen::VectorXd>(x.data(), A.rows()) - expected).norm(), 1e-9 * expected.norm());
  }
  const Vector<double> dense = dense_inverse(*floating.A, columns);
  EXPECT_LT((Eigen::Map<const Dense>(dense.data(), A.rows(), A.rows()) - pseudo_inverse).norm(),
            1e-9 * pseudo_inverse.norm());
}

Parameters floating_parameters(const Body& body) {
  Parameters p;
  p.amg.block_size = 2;
  p.amg.near_nullspace = body.modes;
  p.solver.tolerance = 1e-8;
  p.solver.max_iterations = 500;
  return p;
}

// A x = b to the tolerance, and x orthogonal to the nullspace N: x is A^+ b.
void expect_pseudo_inverse_solution(const Body& body, const Vector<double>& b, const Vector<double>& x) {
  EXPECT_LE(true_relative_residual(*body.A, b, x), 1e-8);
  const Dense N = body.nullspace();
  const Eigen::Map<const Eigen::VectorXd> xe(x.data(), static_cast<Eigen::Index>(x.size()));
  EXPECT_LT((N.transpose() * xe).norm(), 1e-12 * N.norm() * xe.norm());
}

TEST(SingularSystem, FloatingAndPinnedBodiesSolveToThePseudoInverseSolution) {
  for (const Support support : {Support::floating, Support::pinned_corner}) {
    const Body body(64, 16, support);
    const Vector<double> b = body.consistent_rhs(7);
    Solver solver(body.A, floating_parameters(body));
    EXPECT_EQ(solver.setup().nullspace, "near_nullspace");
    EXPECT_EQ(solver.setup().nullspace_vectors, support == Support::floating ? 3 : 1);
    Vector<double> x;
    const SolveResult result = solver.solve(b, x);
    ASSERT_TRUE(result.converged) << result.relative_residual;
    EXPECT_LT(result.iterations, 60);
    expect_pseudo_inverse_solution(body, b, x);
  }
}

// The same modes 1e200 or 1e-300 long (the QR of each aggregate and the nullspace's Gram matrices square
// them): the same solve, to the pseudo-inverse solution.
TEST(SingularSystem, ModesOfAnyLengthSolveAlike) {
  const Body body(64, 16, Support::floating);
  const Vector<double> b = body.consistent_rhs(7);
  Vector<double> x;
  const SolveResult reference = Solver(body.A, floating_parameters(body)).solve(b, x);
  for (const double factor : {1e200, 1e-300}) {
    SCOPED_TRACE(::testing::Message() << "modes x " << factor);
    Parameters p = floating_parameters(body);
    Vector<double> scaled = *body.modes.values;
    for (double& v : scaled) v *= factor;
    p.amg.near_nullspace.values = std::make_shared<const Vector<double>>(std::move(scaled));
    Solver solver(body.A, p);
    EXPECT_EQ(solver.setup().nullspace_vectors, 3);
    const SolveResult result = solver.solve(b, x);
    ASSERT_TRUE(result.converged) << result.relative_residual;
    EXPECT_EQ(result.iterations, reference.iterations);
    expect_pseudo_inverse_solution(body, b, x);
  }
}

TEST(SingularSystem, ARightHandSideWithNetForceIsRefused) {
  const Body body(16, 4, Support::floating);
  Solver solver(body.A, floating_parameters(body));
  const Vector<double> pull_right = [&] {
    Vector<double> b(static_cast<std::size_t>(body.A->rows), 0.0);
    for (Index node = 0; node < body.A->rows / 2; ++node) b[2 * node] = 1.0;  // a net force in x
    return b;
  }();
  Vector<double> x;
  try {
    solver.solve(pull_right, x);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("inconsistent with the singular matrix"), std::string::npos) << e.what();
  }
}

TEST(SingularSystem, IsTheSameOnAnyThreadCountInMixedPrecisionAndAfterAReSetup) {
  const Body body(192, 48, Support::floating);  // over 256 aggregates: the QR's chunks on several threads
  const Vector<double> b = body.consistent_rhs(8);
  Parameters params = floating_parameters(body);
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  Vector<double> one, several;
  const SolveResult first = Solver(body.A, params).solve(b, one);
  omp_set_num_threads(3);
  const SolveResult second = Solver(body.A, params).solve(b, several);
  omp_set_num_threads(threads);
  ASSERT_TRUE(first.converged);
  EXPECT_EQ(first.history, second.history);
  EXPECT_EQ(one, several);
  expect_pseudo_inverse_solution(body, b, one);
  // The float cycle
  params.solver.precision = Precision::mixed;
  params.amg.keep_structure = true;
  Solver mixed(body.A, params);
  Vector<double> x;
  ASSERT_TRUE(mixed.solve(b, x).converged);
  expect_pseudo_inverse_solution(body, b, x);
  // A stiffer material: the same nullspace (found again in other rounding: 3 A is not exact), the aggregates
  // kept, x a third.
  mixed.rebuild(std::make_shared<const CsrMatrix<double>>(scaled(*body.A, 3.0)));
  EXPECT_TRUE(mixed.setup().reused) << mixed.setup().rebuild_note;
  ASSERT_TRUE(mixed.solve(b, x).converged);
  for (double& v : x) v *= 3;
  expect_pseudo_inverse_solution(body, b, x);
  // Held at a corner now: another nullspace, so a full setup.
  const Body pinned(192, 48, Support::pinned_corner);
  mixed.rebuild(pinned.A);
  EXPECT_FALSE(mixed.setup().reused);
  EXPECT_NE(mixed.setup().rebuild_note.find("the matrix's nullspace changed"), std::string::npos)
      << mixed.setup().rebuild_note;
  EXPECT_EQ(mixed.setup().nullspace_vectors, 1);
}

TEST(SingularSystem, DeclaredVectorsThatDependOnEachOtherSpanTheNullspaceOnce) {
  // The three modes and the first again, declared to be A's nullspace: three vectors, no NaN from the fourth.
  const Body body(64, 16, Support::floating);
  Vector<double> four;
  for (std::size_t row = 0; row < body.modes.values->size() / 3; ++row) {
    const double* mode = body.modes.values->data() + 3 * row;
    four.insert(four.end(), {mode[0], mode[1], mode[2], mode[0]});
  }
  Parameters params = floating_parameters(body);
  params.amg.near_nullspace = {4, std::make_shared<const Vector<double>>(four)};
  params.amg.nullspace = NullspaceChoice::near_nullspace;
  const Vector<double> b = body.consistent_rhs(9);
  Solver solver(body.A, params);
  EXPECT_EQ(solver.setup().nullspace_vectors, 3);
  Vector<double> x;
  ASSERT_TRUE(solver.solve(b, x).converged);
  expect_pseudo_inverse_solution(body, b, x);
}

}  // namespace
}  // namespace amgsolve
