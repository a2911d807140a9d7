// A system's near-nullspace vectors relaxed on A x = 0 before the finest aggregation
// (amg.improve_near_nullspace; amg/improve_near_nullspace.hpp): the sweeps against the dense damped block
// Jacobi iteration (I - omega D_b^-1 A)^s B, a nullspace left as it is, every vector's energy b^T A b never
// raised with the prolongator smoothing's weight, the same bits on any thread count, and the iterations it
// saves on the shells of ../shared.
#include <omp.h>

#include "amg/improve_near_nullspace.hpp"
#include "amg/near_nullspace.hpp"
#include "amg/rigid_body_modes.hpp"
#include "amgsolve/solver.hpp"
#include "sparse/matrix_market.hpp"
#include "test_support.hpp"

namespace amgsolve {
namespace {

using namespace test;
using Dense = Eigen::MatrixXd;

// B's vectors as the columns of a dense matrix.
Dense dense_vectors(const NearNullspace& B) {
  Dense M(B.rows(), B.vectors);
  for (Index i = 0; i < B.rows(); ++i)
    for (int v = 0; v < B.vectors; ++v) M(i, v) = B.values[static_cast<std::size_t>(i) * B.vectors + v];
  return M;
}

struct Beam {
  explicit Beam(Support support = Support::clamped, Index nx = 12, Index ny = 6) {
    A = elasticity_2d(nx, ny, coordinates, support);
    modes = finest_near_nullspace(A.rows, 2, rigid_body_modes(coordinates, 2));
    components = finest_near_nullspace(A.rows, 2, {});
  }
  CsrMatrix<double> A;
  Vector<double> coordinates;
  NearNullspace modes, components;
};

TEST(ImproveNearNullspace, IsDampedBlockJacobiOnAxEqualsZero) {
  const Beam beam;
  const Dense A = to_dense(beam.A);
  const double omega = 0.4;
  const int sweeps = 3;
  const auto pairs = std::make_shared<const Array<Index>>(beam.modes.node_ptr);
  for (const auto& nodes : {pairs, single_row_nodes(beam.A.rows), uneven_nodes(beam.A.rows)}) {
    for (const NearNullspace* given : {&beam.modes, &beam.components}) {
      NearNullspace B = *given;
      improve_near_nullspace(beam.A, nodes, omega, sweeps, B);
      const Dense step = Dense::Identity(A.rows(), A.cols()) - omega * dense_inverse(dense_block_diagonal(A, *nodes)) * A;
      Dense expected = dense_vectors(*given);
      for (int s = 0; s < sweeps; ++s) expected = step * expected;
      EXPECT_LT((dense_vectors(B) - expected).cwiseAbs().maxCoeff(), 1e-12 * expected.cwiseAbs().maxCoeff());
      EXPECT_EQ(B.node_ptr, given->node_ptr);
      EXPECT_EQ(B.vectors, given->vectors);
    }
  }
}

TEST(ImproveNearNullspace, LeavesTheNullspaceAsItIs) {
  // Held nowhere, the beam's rigid-body modes are its stiffness matrix's nullspace: A b = 0, nothing to relax.
  const Beam floating(Support::floating);
  NearNullspace B = floating.modes;
  improve_near_nullspace(floating.A, std::make_shared<const Array<Index>>(B.node_ptr), 0.5, 8, B);
  const Dense before = dense_vectors(floating.modes);
  EXPECT_LT((dense_vectors(B) - before).cwiseAbs().maxCoeff(), 1e-10 * before.cwiseAbs().maxCoeff());
}

TEST(ImproveNearNullspace, NeverRaisesAVectorsEnergyWithTheProlongatorsWeight) {
  // omega = (4/3) / rho(D_b^-1 A): the sweep's error propagation has eigenvalues 1 - omega lambda in
  // [-1/3, 1), so no vector's energy b^T A b grows; where the clamp breaks a vector it falls (by a third to a
  // half here, in 4 sweeps).
  const Beam beam;
  const Dense A = to_dense(beam.A);
  const auto nodes = std::make_shared<const Array<Index>>(beam.modes.node_ptr);
  const double omega = (4.0 / 3.0) / generalized_symmetric_eigenpairs(A, dense_block_diagonal(A, *nodes)).values.maxCoeff();
  for (const NearNullspace* given : {&beam.modes, &beam.components}) {
    NearNullspace B = *given;
    const Dense initial = dense_vectors(B);
    Eigen::VectorXd energy = (initial.transpose() * A * initial).diagonal();
    for (int sweep = 0; sweep < 4; ++sweep) {
      improve_near_nullspace(beam.A, nodes, omega, 1, B);
      const Dense now = dense_vectors(B);
      const Eigen::VectorXd next = (now.transpose() * A * now).diagonal();
      for (int v = 0; v < B.vectors; ++v) EXPECT_LE(next[v], energy[v] * (1 + 1e-12)) << "sweep " << sweep << ", vector " << v;
      energy = next;
    }
    const Eigen::VectorXd first = (initial.transpose() * A * initial).diagonal();
    for (int v = 0; v < B.vectors; ++v) EXPECT_LT(energy[v], 0.8 * first[v]) << "vector " << v;
  }
}

TEST(ImproveNearNullspace, IsTheSameOnAnyThreadCount) {
  // Large enough (over 2^17 entries) for the sweeps' loops to take a team of threads.
  const Beam beam(Support::clamped, 192, 48);
  ASSERT_GT(beam.A.nnz(), Offset{1} << 17);
  const auto nodes = std::make_shared<const Array<Index>>(beam.modes.node_ptr);
  const int threads = omp_get_max_threads();
  NearNullspace one = beam.modes, several = beam.modes;
  omp_set_num_threads(1);
  improve_near_nullspace(beam.A, nodes, 0.5, 4, one);
  omp_set_num_threads(3);
  improve_near_nullspace(beam.A, nodes, 0.5, 4, several);
  omp_set_num_threads(threads);
  EXPECT_EQ(one.values, several.values);
}

Parameters relaxed(int block_size, int sweeps) {
  Parameters p;
  p.amg.block_size = block_size;
  p.amg.improve_near_nullspace = sweeps;
  p.solver.tolerance = 1e-8;
  p.solver.max_iterations = 2000;
  return p;
}

TEST(ImproveNearNullspace, TheSetupSaysHowManySweepsRelaxedTheVectors) {
  const Beam beam(Support::clamped, 64, 16);
  const auto A = std::make_shared<const CsrMatrix<double>>(beam.A);
  const Vector<double> b(static_cast<std::size_t>(A->rows), 1.0);
  EXPECT_EQ(solve_with(A, relaxed(2, 0), b).setup.near_nullspace_sweeps, 0);
  const Solved relaxed_four = solve_with(A, relaxed(2, 4), b);
  ASSERT_TRUE(relaxed_four.result.converged);
  EXPECT_EQ(relaxed_four.setup.near_nullspace_sweeps, 4);
  EXPECT_EQ(solve_with(A, relaxed(1, 4), b).setup.near_nullspace_sweeps, 0);  // a scalar problem: the constant
}

TEST(ImproveNearNullspace, AReSetupKeepsTheVectorsTheFirstMatrixRelaxed) {
  // D A D with D constant on each node (1 +- 10%): the nodes' strength does not see it (every block norm
  // scales by d_I d_J), so a re-setup keeps the aggregates and T; but D_b^-1 A changes (to D^-1 D_b^-1 A D),
  // so a fresh setup relaxes the vectors to others. Without relaxation the two are the same bit for bit.
  const Beam beam(Support::clamped, 64, 16);
  CsrMatrix<double> scaled = beam.A;
  const auto d = [](Index row) { return 1.0 + 0.1 * (seeded_uniform(7, static_cast<std::uint64_t>(row / 2)) - 0.5); };
  for (Index i = 0; i < scaled.rows; ++i)
    for (Offset k = scaled.row_begin(i); k < scaled.row_end(i); ++k) scaled.val[k] *= d(i) * d(scaled.col[k]);
  const auto first = std::make_shared<const CsrMatrix<double>>(beam.A);
  const auto second = std::make_shared<const CsrMatrix<double>>(std::move(scaled));
  const Vector<double> b(static_cast<std::size_t>(first->rows), 1.0);
  for (const int sweeps : {0, 4}) {
    Parameters params = relaxed(2, sweeps);
    params.amg.keep_structure = true;
    Solver solver(first, params);
    solver.rebuild(second);
    ASSERT_TRUE(solver.setup().reused) << solver.setup().rebuild_note;
    Vector<double> x;
    const SolveResult again = solver.solve(b, x);
    ASSERT_TRUE(again.converged);
    params.amg.keep_structure = false;
    const Solved fresh = solve_with(second, params, b);
    ASSERT_TRUE(fresh.result.converged);
    if (sweeps == 0)
      EXPECT_EQ(fresh.result.history, again.history);
    else
      EXPECT_NE(fresh.result.history, again.history);
  }
}

TEST(SharedMatrices, RelaxedVectorsSaveIterationsOnShells) {
  // bcsstk14 (a roof of shells) and bcsstk21 with 3 unknowns per node: the components' unit vectors are far
  // from the low-energy vectors (docs/BENCHMARKS.md, "Systems": 71 to 48 and 202 to 81 with 4 sweeps).
  const auto matrices = shared_matrices({"bcsstk14", "bcsstk21"});
  if (matrices.empty()) GTEST_SKIP() << no_shared_matrices();
  for (const auto& [name, path] : matrices) {
    const auto A = std::make_shared<const CsrMatrix<double>>(read_matrix_market(path));
    const Vector<double> b(static_cast<std::size_t>(A->rows), 1.0);
    const Solved as_given = solve_with(A, relaxed(3, 0), b);
    const Solved improved = solve_with(A, relaxed(3, 4), b);
    ASSERT_TRUE(improved.result.converged) << name;
    EXPECT_LE(true_relative_residual(*A, b, improved.x), 1e-8) << name;
    EXPECT_LT(improved.result.iterations * 5, as_given.result.iterations * 4)
        << name << ": " << improved.result.iterations << " against " << as_given.result.iterations;
  }
}

}  // namespace
}  // namespace amgsolve
