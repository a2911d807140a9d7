// Smoothed aggregation for systems (amg.block_size, near-nullspace vectors; amg/system_setup.hpp): the
// rigid-body modes against the distance-preserving property of rigid motions, the QR tentative prolongator
// against its invariants (orthonormal columns, T B_c = B, dependent columns left out), the nodes' strength
// against a dense amalgamation and against the scalar test, and 2D linear elasticity solved to Eigen's answer
// in far fewer iterations with the rigid-body modes than without, the same on any thread count, in mixed
// precision and after a re-setup; and the refusals.
#include <cmath>
#include <omp.h>

#include "amg/hierarchy.hpp"
#include "amg/near_nullspace.hpp"
#include "amg/node_strength.hpp"
#include "amg/qr_tentative_prolongation.hpp"
#include "amg/rigid_body_modes.hpp"
#include "amg/strength.hpp"
#include "amgsolve/solver.hpp"
#include "common/error.hpp"
#include "common/hash.hpp"
#include "common/memory.hpp"
#include "problems/poisson.hpp"
#include "sparse/csr_ops.hpp"
#include "sparse/matrix_market.hpp"
#include "test_support.hpp"

namespace amgsolve {
namespace {

using namespace test;

Parameters system_parameters(int block_size, NearNullspaceVectors vectors = {}) {
  Parameters p;
  p.amg.block_size = block_size;
  p.amg.near_nullspace = std::move(vectors);
  p.solver.tolerance = 1e-8;
  p.solver.max_iterations = 2000;
  return p;
}

Vector<double> seeded_vector(Index n, std::uint64_t seed) {
  Vector<double> v(static_cast<std::size_t>(n));
  for (Index i = 0; i < n; ++i) v[i] = seeded_uniform(seed, static_cast<std::uint64_t>(i)) - 0.5;
  return v;
}

// Points that give a rotation no mode (all at one place in 2D, on one line along an axis in 3D) are named
// before the modes are formed; spread points, nodes with rotational unknowns and a line off the axes are not.
TEST(RigidBodyModes, PointsWhoseRotationMovesNoneOfThemAreNamed) {
  EXPECT_NE(vanishing_rotation_problem({1, 2, 1, 2, 1, 2}, 2, 2).find("all lie at one place"), std::string::npos);
  EXPECT_EQ(vanishing_rotation_problem({1, 2, 1, 2, 1, 2}, 2, 3), "");  // theta_z moves the nodes' rotations
  EXPECT_EQ(vanishing_rotation_problem({1, 2, 1, 3, 1, 2}, 2, 2), "");
  EXPECT_NE(vanishing_rotation_problem({0, 5, 7, 1, 5, 7, 2, 5, 7}, 3, 3).find("along the x axis"), std::string::npos);
  EXPECT_NE(vanishing_rotation_problem({5, 7, 0, 5, 7, 1}, 3, 3).find("along the z axis"), std::string::npos);
  EXPECT_EQ(vanishing_rotation_problem({0, 0, 0, 1, 1, 0, 2, 2, 0}, 3, 3), "");  // a line off the axes
  EXPECT_EQ(vanishing_rotation_problem({0, 5, 7, 1, 5, 7}, 3, 6), "");
  // Where the check passes, every mode has a nonzero entry.
  const NearNullspaceVectors modes = rigid_body_modes({0, 0, 0, 1, 1, 0, 2, 2, 1}, 3, 3);
  for (int m = 0; m < modes.count; ++m) {
    double largest = 0;
    const auto stride = static_cast<std::size_t>(modes.count);
    for (std::size_t k = static_cast<std::size_t>(m); k < modes.values->size(); k += stride)
      largest = std::max(largest, std::abs((*modes.values)[k]));
    EXPECT_GT(largest, 0.0) << "mode " << m;
  }
}

TEST(RigidBodyModes, MoveEveryPairOfPointsWithoutStretchingIt) {
  // (dimension, unknowns per node): displacements only, or with the rotations of beams, plates and shells.
  for (const auto& [dimension, block] : {std::pair{2, 2}, std::pair{2, 3}, std::pair{3, 3}, std::pair{3, 6}}) {
    const Index nodes = 40;
    const Vector<double> points = seeded_vector(nodes * dimension, 7 + dimension);
    const NearNullspaceVectors modes = rigid_body_modes(points, dimension, block);
    const int rotations = dimension == 2 ? 1 : 3;
    ASSERT_EQ(modes.count, dimension + rotations);
    ASSERT_EQ(modes.values->size(), static_cast<std::size_t>(nodes * block * modes.count));
    const auto u = [&](Index node, int unknown, int mode) {
      return (*modes.values)[static_cast<std::size_t>(node * block + unknown) * modes.count + mode];
    };
    const auto x = [&](Index node, int d) { return points[node * dimension + d]; };
    for (int mode = 0; mode < modes.count; ++mode) {
      // The mode's rotation vector omega: 0 for a translation, the unit axis for a rotation (as its rotational
      // unknowns say, where the nodes have them).
      double omega[3] = {0, 0, 0};
      if (mode >= dimension) omega[dimension == 2 ? 2 : mode - dimension] = 1;
      for (Index p = 0; p < nodes; ++p) {
        if (block > dimension) {
          for (int r = 0; r < rotations; ++r) EXPECT_EQ(u(p, dimension + r, mode), omega[dimension == 2 ? 2 : r]);
        }
        for (Index q = 0; q < nodes; ++q) {
          // A rigid motion: u_p - u_q = omega x (x_p - x_q).
          const double dx[3] = {x(p, 0) - x(q, 0), x(p, 1) - x(q, 1), dimension == 3 ? x(p, 2) - x(q, 2) : 0.0};
          const double cross[3] = {omega[1] * dx[2] - omega[2] * dx[1], omega[2] * dx[0] - omega[0] * dx[2],
                                   omega[0] * dx[1] - omega[1] * dx[0]};
          for (int d = 0; d < dimension; ++d)
            EXPECT_NEAR(u(p, d, mode) - u(q, d, mode) - (mode < dimension ? 0.0 : cross[d]), 0.0, 1e-14)
                << "mode " << mode << ", nodes of " << block << " unknowns in " << dimension << "D";
        }
      }
    }
    // and the modes are independent: their Gram matrix is nonsingular.
    Eigen::MatrixXd B(nodes * block, modes.count);
    for (Index r = 0; r < B.rows(); ++r)
      for (int m = 0; m < modes.count; ++m) B(r, m) = (*modes.values)[static_cast<std::size_t>(r) * modes.count + m];
    EXPECT_EQ(numerical_rank(B.transpose() * B), modes.count);
  }
  EXPECT_THROW(rigid_body_modes(Vector<double>(7, 0.0), 2), InputError);
  EXPECT_THROW(rigid_body_modes(Vector<double>(8, 0.0), 4), InputError);
  EXPECT_THROW(rigid_body_modes(Vector<double>(9, 0.0), 3, 4), InputError);
}

// Aggregates of `nodes` nodes in runs of the given sizes (the last run's nodes left out when `unaggregated`).
Aggregates runs_of(Index nodes, std::initializer_list<Index> sizes, bool unaggregated = false) {
  Aggregates a;
  a.id.assign(static_cast<std::size_t>(nodes), kNotAggregated);
  Index node = 0;
  for (Index size : sizes) {
    for (Index k = 0; k < size && node < nodes; ++k) a.id[node++] = a.count;
    ++a.count;
  }
  if (unaggregated) {
    --a.count;
    for (Index& id : a.id)
      if (id == a.count) id = kNotAggregated;
  }
  return a;
}

TEST(TentativeProlongationByQr, HasOrthonormalColumnsAndCarriesTheVectorsExactly) {
  const int block = 2, vectors = 3;
  const NearNullspaceVectors given{vectors, std::make_shared<const Vector<double>>(seeded_vector(2 * 30 * vectors, 11))};
  const NearNullspace B = finest_near_nullspace(2 * 30, block, given);
  // One aggregate of a single node (2 rows < 3 vectors: 2 columns kept), the last 4 nodes left out.
  const Aggregates aggregates = runs_of(30, {5, 1, 9, 11, 4}, true);
  NearNullspace coarse;
  Array<Index> row_aggregates;
  const CsrMatrix<double> T = tentative_prolongation<double>(aggregates, B, coarse, row_aggregates);
  EXPECT_EQ(T.cols, 3 * vectors + 2);
  EXPECT_EQ(coarse.nodes(), 4);
  EXPECT_EQ(coarse.rows(), T.cols);
  EXPECT_EQ(coarse.node_ptr[2] - coarse.node_ptr[1], 2);
  for (Index i = 52; i < 60; ++i) EXPECT_EQ(T.row_length(i), 0) << "row " << i << " is in no aggregate";
  const Eigen::MatrixXd dense_T = to_dense(T);
  EXPECT_LT((dense_T.transpose() * dense_T - Eigen::MatrixXd::Identity(T.cols, T.cols)).norm(), 1e-13);
  // T B_c = B on the aggregated rows.
  Eigen::MatrixXd Bc(coarse.rows(), vectors), Bf(B.rows(), vectors);
  for (Index r = 0; r < coarse.rows(); ++r)
    for (int v = 0; v < vectors; ++v) Bc(r, v) = coarse.values[static_cast<std::size_t>(r) * vectors + v];
  for (Index r = 0; r < B.rows(); ++r)
    for (int v = 0; v < vectors; ++v) Bf(r, v) = r < 52 ? B.values[static_cast<std::size_t>(r) * vectors + v] : 0.0;
  EXPECT_LT((dense_T * Bc - Bf).norm(), 1e-13 * Bf.norm());
  EXPECT_EQ(row_aggregates[10], 1);
  EXPECT_EQ(row_aggregates[55], kNotAggregated);
  // In float: T's entries are the double ones rounded.
  NearNullspace coarse_float;
  const CsrMatrix<float> T_float = tentative_prolongation<float>(aggregates, B, coarse_float, row_aggregates);
  EXPECT_EQ(T_float.col, T.col);
  for (std::size_t k = 0; k < T.val.size(); ++k) EXPECT_EQ(T_float.val[k], static_cast<float>(T.val[k]));
  EXPECT_EQ(coarse_float.values, coarse.values);
}

TEST(TentativeProlongationByQr, AnAggregateWhereTheVectorsVanishIsNoCoarseNode) {
  Vector<double> values = seeded_vector(12 * 2, 8);
  for (std::size_t k = 8; k < 16; ++k) values[k] = 0.0;  // rows 4-7, the second aggregate
  const NearNullspace B = finest_near_nullspace(12, 1, {2, std::make_shared<const Vector<double>>(values)});
  NearNullspace coarse;
  Array<Index> row_aggregates;
  const CsrMatrix<double> T = tentative_prolongation<double>(runs_of(12, {4, 4, 4}), B, coarse, row_aggregates);
  EXPECT_EQ(T.cols, 4);
  ASSERT_EQ(coarse.nodes(), 2);
  EXPECT_EQ(coarse.node_ptr, (Array<Index>{0, 2, 4}));
  for (Index i = 4; i < 8; ++i) EXPECT_EQ(T.row_length(i), 0);
  for (Index i : {0, 3, 8, 11}) EXPECT_EQ(T.row_length(i), 2);
}

TEST(TentativeProlongationByQr, LeavesOutAColumnTheOthersSpan) {
  // The third vector is the sum of the first two: each aggregate keeps two columns.
  const Index rows = 24;
  Vector<double> values(static_cast<std::size_t>(rows) * 3);
  const Vector<double> random = seeded_vector(2 * rows, 5);
  for (Index i = 0; i < rows; ++i) {
    values[3 * i] = random[2 * i];
    values[3 * i + 1] = random[2 * i + 1];
    values[3 * i + 2] = random[2 * i] + random[2 * i + 1];
  }
  const NearNullspace B = finest_near_nullspace(rows, 1, {3, std::make_shared<const Vector<double>>(values)});
  NearNullspace coarse;
  Array<Index> row_aggregates;
  const CsrMatrix<double> T = tentative_prolongation<double>(runs_of(rows, {6, 6, 12}), B, coarse, row_aggregates);
  EXPECT_EQ(T.cols, 6);
  EXPECT_EQ(coarse.nodes(), 3);
  // Still T B_c = B (the finest level's vectors, each scaled by a power of two), the dependent column included.
  Eigen::MatrixXd Bc(coarse.rows(), 3), Bf(rows, 3);
  for (Index r = 0; r < coarse.rows(); ++r)
    for (int v = 0; v < 3; ++v) Bc(r, v) = coarse.values[static_cast<std::size_t>(r) * 3 + v];
  for (Index r = 0; r < rows; ++r)
    for (int v = 0; v < 3; ++v) {
      Bf(r, v) = B.values[static_cast<std::size_t>(r) * 3 + v];
      const double factor = Bf(r, v) / values[static_cast<std::size_t>(r) * 3 + v];
      EXPECT_EQ(factor, std::exp2(std::round(std::log2(factor)))) << "a power of two";
    }
  EXPECT_LT((to_dense(T) * Bc - Bf).norm(), 1e-12 * Bf.norm());
}

TEST(NodeStrength, OfSingleRowNodesIsTheScalarStrength) {
  PoissonParams p;
  p.stencil = Stencil::p9;
  p.size = {20, 20};
  const CsrMatrix<double> A = poisson_matrix(p);
  const NearNullspace B = finest_near_nullspace(A.rows, 1, {});
  for (double theta : {0.02, 0.3}) {
    const NodeStrength nodes = node_strength(A, B.node_ptr, theta);
    const Strength scalar = strength_of_connection(A, theta);
    EXPECT_EQ(nodes.rows.keep, scalar.keep);
    EXPECT_EQ(nodes.rows.weak_entries, scalar.weak_entries);
    EXPECT_EQ(nodes.nodes.adj, scalar.graph.adj);
    EXPECT_EQ(nodes.rows.graph.adj, scalar.graph.adj);
  }
}

// Each thread's markers and sums span the nodes: where they do not fit, the step refuses with the one-line
// error naming them, before it allocates (inside the parallel region an allocation that failed ended the
// process). 10^7 single-row nodes on 2 threads (240 MB of markers) with 256 MiB of address space left.
TEST(NodeStrength, MarkersThatDoNotFitAreRefusedBeforeTheyAreAllocated) {
  if (available_memory_bytes() < (std::uint64_t{2} << 30)) GTEST_SKIP() << "under 2 GiB free: proves nothing";
  const Index n = 10'000'000;
  CsrMatrix<double> identity(n, n);
  identity.col.resize(static_cast<std::size_t>(n));
  identity.val.assign(static_cast<std::size_t>(n), 1.0);
  for (Index i = 0; i < n; ++i) {
    identity.row_ptr[static_cast<std::size_t>(i) + 1] = i + 1;
    identity.col[static_cast<std::size_t>(i)] = i;
  }
  const NearNullspace B = finest_near_nullspace(n, 1, {});
  omp_set_num_threads(2);
  std::string refusal = "not refused";
  const bool limited = test::with_address_space_headroom(std::uint64_t{256} << 20, [&] {
    try {
      node_strength(identity, B.node_ptr, 0.1);
    } catch (const MemoryLimitError& e) {
      refusal = e.what();
    }
  });
  omp_set_num_threads(omp_get_num_procs());
  if (!limited) GTEST_SKIP() << "a hard address-space limit is set";
  EXPECT_NE(refusal.find("the node strength's markers (2 of 10000000 nodes)"), std::string::npos) << refusal;
  EXPECT_EQ(refusal.find('\n'), std::string::npos) << refusal;
}

TEST(NodeStrength, ClassifiesWholeBlocksByTheirFrobeniusNorms) {
  Vector<double> coordinates;
  const CsrMatrix<double> A = elasticity_2d(6, 4, coordinates);
  const Array<Index> node_ptr = finest_near_nullspace(A.rows, 2, {}).node_ptr;
  const Eigen::MatrixXd dense = to_dense(A);
  const Index nodes = A.rows / 2;
  const auto block_norm = [&](Index I, Index J) { return dense.block(2 * I, 2 * J, 2, 2).norm(); };
  for (double theta : {0.1, 0.25, 0.4}) {
    const NodeStrength s = node_strength(A, node_ptr, theta);
    Offset weak = 0;
    for (Index i = 0; i < A.rows; ++i)
      for (Offset k = A.row_begin(i); k < A.row_end(i); ++k) {
        const Index I = i / 2, J = A.col[k] / 2;
        const bool strong = I == J || block_norm(I, J) >= theta * std::sqrt(block_norm(I, I) * block_norm(J, J));
        EXPECT_EQ(s.rows.keep[k], strong) << "entry (" << i << ", " << A.col[k] << "), theta " << theta;
        weak += !strong;
      }
    EXPECT_EQ(s.rows.weak_entries, weak);
    EXPECT_EQ(s.nodes.nodes, nodes);
    for (Index I = 0; I < nodes; ++I)
      for (Offset k = s.nodes.row_ptr[I]; k < s.nodes.row_ptr[I + 1]; ++k) {
        const Index J = s.nodes.adj[k];
        EXPECT_NE(I, J);
        EXPECT_GE(block_norm(I, J), theta * std::sqrt(block_norm(I, I) * block_norm(J, J)));
      }
  }
}

TEST(NodeStrength, ANodeWithoutStrongNeighboursIsIsolatedRowByRow) {
  // Nodes of 2 unknowns: nodes 0 and 1 strongly coupled, node 2 coupled to node 1 by a weak block only.
  const std::vector<Triplet<double>> t = {
      {0, 0, 4}, {0, 1, 1}, {1, 0, 1}, {1, 1, 4}, {2, 2, 4}, {2, 3, 1}, {3, 2, 1}, {3, 3, 4}, {4, 4, 4}, {4, 5, 1},
      {5, 4, 1}, {5, 5, 4}, {0, 2, -2}, {2, 0, -2}, {1, 3, -2}, {3, 1, -2}, {2, 4, -0.01}, {4, 2, -0.01}};
  const CsrMatrix<double> A = csr_from_triplets(6, 6, std::vector<Triplet<double>>(t));
  const NodeStrength s = node_strength(A, Array<Index>{0, 2, 4, 6}, 0.1);
  EXPECT_EQ(s.nodes.degree(2), 0);
  EXPECT_EQ(s.rows.weak_entries, 2);
  // A node with strong neighbours: its rows name its own other unknown too (they are no isolated rows).
  EXPECT_EQ(s.rows.graph.degree(0), 2);
  EXPECT_EQ(s.rows.graph.degree(2), 2);  // row 2: its own unknown 3 and node 0's 0; the weak 4 left out
  // The isolated node's rows have no neighbours at all, so the filtered matrix may keep their diagonal alone.
  EXPECT_EQ(s.rows.graph.degree(4), 0);
  EXPECT_EQ(s.rows.graph.degree(5), 0);
}

class Elasticity : public ::testing::Test {
 protected:
  void SetUp() override {
    A = std::make_shared<const CsrMatrix<double>>(elasticity_2d(64, 16, coordinates));
    b = seeded_vector(A->rows, 3);
    // Eigen's direct solve, the reference.
    const Eigen::VectorXd xe = sparse_direct_solve(to_eigen(*A), Eigen::Map<const Eigen::VectorXd>(b.data(), A->rows));
    exact.assign(xe.data(), xe.data() + xe.size());
  }
  double error_of(const Vector<double>& x) const {
    double e = 0, n = 0;
    for (std::size_t i = 0; i < x.size(); ++i) e += (x[i] - exact[i]) * (x[i] - exact[i]), n += exact[i] * exact[i];
    return std::sqrt(e / n);
  }
  std::shared_ptr<const CsrMatrix<double>> A;
  Vector<double> coordinates, b, exact;
};

TEST_F(Elasticity, RigidBodyModesSolveInAFractionOfTheScalarIterations) {
  const Solved scalar = solve_with(A, system_parameters(1), b);
  const Solved components = solve_with(A, system_parameters(2), b);
  const Solved rigid = solve_with(A, system_parameters(2, rigid_body_modes(coordinates, 2)), b);
  for (const Solved* s : {&scalar, &components, &rigid}) {
    ASSERT_TRUE(s->result.converged);
    EXPECT_LT(error_of(s->x), 1e-5);
  }
  // The scalar hierarchy's coarse levels cannot represent the rotations: PyAMG needs 227 iterations on a
  // larger such beam, 29 with its B of rigid-body modes (docs/BENCHMARKS.md, "Systems").
  EXPECT_LT(rigid.result.iterations * 3, scalar.result.iterations)
      << rigid.result.iterations << " against " << scalar.result.iterations;
  EXPECT_LT(rigid.result.iterations, components.result.iterations);
  // Each coarse node is an aggregate with its three modes' columns (fewer where they depend).
  ASSERT_GE(rigid.setup.levels.size(), 2u);
  EXPECT_LE(rigid.setup.levels[1].rows, 3 * rigid.setup.levels[0].aggregates);
  EXPECT_GT(rigid.setup.levels[1].rows, 2 * rigid.setup.levels[0].aggregates);
}

TEST(Elasticity3d, SixRigidBodyModesSolveInAFractionOfTheScalarIterations) {
  Vector<double> coordinates;
  const auto A = std::make_shared<const CsrMatrix<double>>(elasticity_3d(10, coordinates));
  const NearNullspaceVectors modes = rigid_body_modes(coordinates, 3);
  // K B = 0 away from the clamped face (a rigid motion strains nothing).
  Vector<double> mode(static_cast<std::size_t>(A->rows)), image;
  for (int m = 0; m < 6; ++m) {
    for (Index i = 0; i < A->rows; ++i) mode[i] = (*modes.values)[static_cast<std::size_t>(i) * 6 + m];
    spmv(*A, mode, image);
    for (Index i = 0; i < A->rows; ++i) {
      if (coordinates[3 * (i / 3)] <= 0.15) continue;  // near the clamped face
      ASSERT_NEAR(image[i], 0.0, 1e-12) << "mode " << m << ", row " << i;
    }
  }
  const Vector<double> b = seeded_vector(A->rows, 9);
  const Eigen::VectorXd exact = sparse_direct_solve(to_eigen(*A), Eigen::Map<const Eigen::VectorXd>(b.data(), A->rows));
  const Solved scalar = solve_with(A, system_parameters(1), b);
  const Solved rigid = solve_with(A, system_parameters(3, modes), b);
  ASSERT_TRUE(rigid.result.converged);
  EXPECT_LT((Eigen::Map<const Eigen::VectorXd>(rigid.x.data(), A->rows) - exact).norm(), 1e-5 * exact.norm());
  EXPECT_LT(2 * rigid.result.iterations, scalar.result.iterations)
      << rigid.result.iterations << " against " << scalar.result.iterations;
  // 6 coarse unknowns per aggregate (fewer only where one or two nodes, or nodes on a line, cannot hold all
  // six modes: TentativeProlongationByQr above; none here).
  ASSERT_GE(rigid.setup.levels.size(), 2u);
  EXPECT_EQ(rigid.setup.levels[1].rows, 6 * rigid.setup.levels[0].aggregates);
}

TEST(SharedMatrices, ShellsAndSolidsNeedFewerIterationsWithTheirBlockSize) {
  // bcsstk16: a dam of 3D solid elements (3 unknowns per node); bcsstk17: a pressure vessel of shells (6).
  const auto matrices = shared_matrices({"bcsstk16", "bcsstk17"});
  if (matrices.empty()) GTEST_SKIP() << no_shared_matrices();
  for (const auto& [name, path] : matrices) {
    const auto A = std::make_shared<const CsrMatrix<double>>(read_matrix_market(path));
    const int block = name == "bcsstk16" ? 3 : 6;
    const Vector<double> b(static_cast<std::size_t>(A->rows), 1.0);
    const Solved scalar = solve_with(A, system_parameters(1), b);
    const Solved system = solve_with(A, system_parameters(block), b);
    ASSERT_TRUE(system.result.converged) << name;
    EXPECT_LE(true_relative_residual(*A, b, system.x), 1e-8) << name;
    EXPECT_LT(system.result.iterations, scalar.result.iterations)
        << name << ": " << system.result.iterations << " against " << scalar.result.iterations;
  }
}

TEST(ElasticityLarger, TheHierarchyIsTheSameOnAnyThreadCount) {
  // Over 256 aggregates, so that the QR's chunks of aggregates go to several threads.
  Vector<double> coordinates;
  const auto A = std::make_shared<const CsrMatrix<double>>(elasticity_2d(192, 48, coordinates));
  const Vector<double> b = seeded_vector(A->rows, 4);
  const Parameters params = system_parameters(2, rigid_body_modes(coordinates, 2));
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  const Solved one = solve_with(A, params, b);
  ASSERT_GT(one.setup.levels[0].aggregates, 3 * 256);
  omp_set_num_threads(3);
  const Solved several = solve_with(A, params, b);
  omp_set_num_threads(threads);
  EXPECT_EQ(one.result.iterations, several.result.iterations);
  EXPECT_EQ(one.result.history, several.result.history);
  EXPECT_EQ(one.x, several.x);
}

TEST_F(Elasticity, SolvesInMixedPrecisionAndAfterAReSetup) {
  Parameters params = system_parameters(2, rigid_body_modes(coordinates, 2));
  params.solver.precision = Precision::mixed;
  params.amg.keep_structure = true;
  Solver solver(A, params);
  Vector<double> x;
  const SolveResult first = solver.solve(b, x);
  ASSERT_TRUE(first.converged);
  EXPECT_LT(error_of(x), 1e-5);
  // A stiffer material on the same mesh: the aggregates and QR are kept, x halves.
  solver.rebuild(std::make_shared<const CsrMatrix<double>>(scaled(*A, 2.0)));
  EXPECT_TRUE(solver.setup().reused) << solver.setup().rebuild_note;
  const SolveResult second = solver.solve(b, x);
  ASSERT_TRUE(second.converged);
  for (double& v : x) v *= 2;
  EXPECT_LT(error_of(x), 1e-5);
  // A fresh setup of 2A has the same aggregates (strength does not see the scale) and the same relaxed
  // near-nullspace (nor does D^-1 A): its hierarchy and so its solve are the re-setup's, bit for bit.
  params.amg.keep_structure = false;
  EXPECT_EQ(solve_with(std::make_shared<const CsrMatrix<double>>(scaled(*A, 2.0)), params, b).result.history,
            second.history);
}

TEST_F(Elasticity, ASetupOnASystemsStructureIsASystemsSetup) {
  AmgParams system = system_parameters(2, rigid_body_modes(coordinates, 2)).amg;
  system.keep_structure = true;
  const AmgHierarchy<double> kept(A, system);
  // Parameters of a scalar problem: the structure's nodes and near-nullspace still make its levels.
  const AmgHierarchy<double> on_it(CpuBackend{}, std::make_shared<const CsrMatrix<double>>(scaled(*A, 3.0)),
                                   AmgParams{}, kept);
  ASSERT_EQ(on_it.info().size(), kept.info().size());
  for (std::size_t l = 0; l < kept.info().size(); ++l) EXPECT_EQ(on_it.info()[l].rows, kept.info()[l].rows);
  EXPECT_EQ(on_it.params().near_nullspace.count, 3);
}

TEST_F(Elasticity, RefusesWhatDoesNotFit) {
  const auto message = [&](const Parameters& params, std::shared_ptr<const CsrMatrix<double>> M = nullptr) {
    try {
      Solver solver(M ? M : A, params);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(system_parameters(3)).find("amg.block_size is 3, but the matrix has"), std::string::npos);
  NearNullspaceVectors short_vectors{3, std::make_shared<const Vector<double>>(Vector<double>(30, 1.0))};
  EXPECT_NE(message(system_parameters(2, short_vectors)).find("the near-nullspace has 30 values"), std::string::npos);
  Vector<double> values = *rigid_body_modes(coordinates, 2).values;
  values[3 * 17 + 1] = std::nan("");
  EXPECT_NE(message(system_parameters(2, {3, std::make_shared<const Vector<double>>(values)}))
                .find("vector 2 has a value that is not finite in row 18"),
            std::string::npos);
  Parameters too_large = system_parameters(65);
  EXPECT_NE(message(too_large).find("amg.block_size must be >= 1 and <= 64, got 65"), std::string::npos);
  // A system's nullspace is among its vectors: the constant, a scalar problem's, is not declared for one.
  Parameters constant = system_parameters(2);
  constant.amg.nullspace = NullspaceChoice::constant;
  EXPECT_NE(message(constant).find("amg.nullspace constant is a scalar problem's"), std::string::npos);
}

TEST(SingularSystems, ANeumannLaplacianInNodesOfTwoFindsTheConstantAmongItsUnitVectors) {
  // Its rows sum to zero: e_x + e_y, the constant, is the nullspace the unit vectors of the two components
  // hold (amg/system_nullspace.hpp); a singular system, solved on its range (to zero mean).
  PoissonParams neumann;
  neumann.size = {32, 32};
  neumann.boundary = Boundary::neumann;
  const auto A = std::make_shared<const CsrMatrix<double>>(poisson_matrix(neumann));
  Vector<double> b = seeded_vector(A->rows, 5);
  double mean = 0;
  for (double v : b) mean += v / static_cast<double>(b.size());
  for (double& v : b) v -= mean;
  const Solved system = solve_with(A, system_parameters(2), b);
  EXPECT_EQ(system.setup.nullspace, "near_nullspace");
  EXPECT_EQ(system.setup.nullspace_vectors, 1);
  ASSERT_TRUE(system.result.converged);
  EXPECT_LE(true_relative_residual(*A, b, system.x), 1e-8);
  double sum = 0, magnitude = 0;
  for (double v : system.x) sum += v, magnitude += std::abs(v);
  EXPECT_LT(std::abs(sum), 1e-12 * magnitude);
}

}  // namespace
}  // namespace amgsolve
