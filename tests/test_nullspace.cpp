// Singular systems with the constant nullspace (amg.nullspace, amg/nullspace.hpp): the near-nullspace
// carried through the tentative prolongators, the coarsest level's pseudo-inverse against Eigen's, the
// detection and its refusals, and Neumann Poisson in 2D and 3D and a graph Laplacian solved in about as many
// iterations as their nonsingular (Dirichlet, grounded) twins.
#include <omp.h>

#include <cmath>
#include <functional>
#include <limits>
#include <numeric>

#include "amg/hierarchy.hpp"
#include "amg/mis2_aggregation.hpp"
#include "amg/near_nullspace.hpp"
#include "amg/nullspace.hpp"
#include "amg/rigid_body_modes.hpp"
#include "amg/strength.hpp"
#include "amg/tentative_prolongation.hpp"
#include "amgsolve/solver.hpp"
#include "common/error.hpp"
#include "common/unit_scale.hpp"
#include "problems/poisson.hpp"
#include "sparse/csr_ops.hpp"
#include "sparse/matrix_market.hpp"
#include "sparse/sparse_ldlt.hpp"
#include "test_support.hpp"

namespace amgsolve {
namespace {

CsrMatrix<double> poisson(Stencil s, std::vector<std::int64_t> size, Boundary boundary) {
  PoissonParams p;
  p.stencil = s;
  p.size = std::move(size);
  p.boundary = boundary;
  return poisson_matrix(p);
}

// The graph Laplacian D - W of a matrix's pattern (weights seeded in [1, 2)), symmetric with zero row sums.
CsrMatrix<double> graph_laplacian(const CsrMatrix<double>& pattern, std::uint64_t seed) {
  std::vector<Triplet<double>> t;
  for (Index i = 0; i < pattern.rows; ++i)
    for (Offset k = pattern.row_begin(i); k < pattern.row_end(i); ++k) {
      const Index j = pattern.col[k];
      if (j >= i) continue;  // each edge once, from its lower end
      const double w = 1.0 + seeded_uniform(seed, static_cast<std::uint64_t>(i) * pattern.rows + j);
      t.push_back({i, j, -w});
      t.push_back({j, i, -w});
      t.push_back({i, i, w});
      t.push_back({j, j, w});
    }
  return csr_from_triplets(pattern.rows, pattern.cols, std::move(t));
}

// b = A u for a seeded u: consistent with any nullspace of A.
Vector<double> consistent_rhs(const CsrMatrix<double>& A, std::uint64_t seed) {
  Vector<double> u(static_cast<std::size_t>(A.rows)), b;
  for (Index i = 0; i < A.rows; ++i) u[i] = seeded_uniform(seed, i) - 0.5;
  spmv(A, u, b);
  return b;
}

double mean(const Vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

// ---- the near-nullspace through the tentative prolongator

TEST(TentativeProlongation, CarriesTheNearNullspaceVectorExactly) {
  const CsrMatrix<double> A = poisson(Stencil::p5, {23, 17}, Boundary::dirichlet);
  const Aggregates agg = mis2_aggregation(strength_of_connection(A, 0.02).graph, 1);
  // Weights B^2 as a coarse level holds them: integers, the finest points per node.
  Vector<double> w(static_cast<std::size_t>(A.rows)), wc;
  for (Index i = 0; i < A.rows; ++i) w[i] = 1 + static_cast<double>(seeded_hash(5, i) % 30);
  const CsrMatrix<double> T = tentative_prolongation<double>(agg, w, wc);
  ASSERT_EQ(wc.size(), static_cast<std::size_t>(agg.count));
  const Eigen::MatrixXd Td = test::to_dense(T);
  EXPECT_LE((Td.transpose() * Td - Eigen::MatrixXd::Identity(agg.count, agg.count)).cwiseAbs().maxCoeff(), 1e-14);
  // T B^c = B on every aggregated node, with B = sqrt(w), B^c = sqrt(w^c).
  Eigen::VectorXd B(A.rows), Bc(agg.count);
  for (Index i = 0; i < A.rows; ++i) B[i] = std::sqrt(w[i]);
  for (Index j = 0; j < agg.count; ++j) Bc[j] = std::sqrt(wc[j]);
  const Eigen::VectorXd TBc = Td * Bc;
  for (Index i = 0; i < A.rows; ++i)
    if (agg.id[i] != kNotAggregated) {
      EXPECT_NEAR(TBc[i], B[i], 1e-13 * B[i]) << i;
    }
  // The finest level's form (w = 1) is 1 / sqrt(|aggregate|), bit for bit.
  const CsrMatrix<double> T1 = tentative_prolongation<double>(agg);
  std::vector<int> size(static_cast<std::size_t>(agg.count), 0);
  for (Index id : agg.id)
    if (id != kNotAggregated) ++size[id];
  for (Index i = 0; i < A.rows; ++i)
    if (agg.id[i] != kNotAggregated) {
      EXPECT_EQ(T1.val[T1.row_begin(i)], 1.0 / std::sqrt(double(size[agg.id[i]])));
    }
}

TEST(Hierarchy, NeumannKeepsTheConstantOnEveryLevel) {
  const auto A = std::make_shared<const CsrMatrix<double>>(poisson(Stencil::p7, {24, 22, 20}, Boundary::neumann));
  AmgParams params;
  params.coarse_size = 40;
  // A threshold that leaves half the nodes of level 1 without strong couplings: they become aggregates of
  // their own (MIS-2 leaves them out), and the weak entries are lumped along B.
  params.strength_threshold = 0.1;
  const AmgHierarchy<double> amg(A, params);
  ASSERT_GE(amg.levels(), 3u);
  EXPECT_TRUE(amg.singular());
  // The coarsest matrix annihilates the nullspace carried down: P_0 ... P_(L-1) B_L = 1 on the finest level.
  const CsrMatrix<double>& coarsest = *amg.coarsest_on_host();
  const Vector<double>& B = amg.coarse_nullspace();
  ASSERT_EQ(B.size(), static_cast<std::size_t>(coarsest.rows));
  Vector<double> AB;
  spmv(coarsest, B, AB);
  double ab = 0, b2 = 0, a2 = 0;
  for (std::size_t i = 0; i < B.size(); ++i) {
    ab += AB[i] * AB[i];
    b2 += B[i] * B[i];
  }
  for (double v : coarsest.val) a2 += v * v;
  EXPECT_LE(std::sqrt(ab), 1e-12 * std::sqrt(a2 * b2));
  Vector<double> v = B;
  for (std::size_t l = amg.levels() - 1; l-- > 0;) {
    Vector<double> fine;
    spmv(amg.prolongator(l), v, fine);
    v = std::move(fine);
  }
  for (double x : v) EXPECT_NEAR(x, 1.0, 1e-12);
  // The Dirichlet twin is not singular.
  const auto D = std::make_shared<const CsrMatrix<double>>(poisson(Stencil::p7, {24, 22, 20}, Boundary::dirichlet));
  EXPECT_FALSE(AmgHierarchy<double>(D, params).singular());
}

// ---- the coarsest level's pseudo-inverse

TEST(SparseLdlt, SingularSolveIsThePseudoInverse) {
  const CsrMatrix<double> L = graph_laplacian(test::random_sparse(60, 60, 0.08, 3), 4);
  ASSERT_EQ(connected_components(L), 1);
  const Vector<double> ones(static_cast<std::size_t>(L.rows), 1.0);
  const Eigen::MatrixXd pinv = test::to_dense(L).completeOrthogonalDecomposition().pseudoInverse();
  Vector<double> b(static_cast<std::size_t>(L.rows)), x;
  for (Index i = 0; i < L.rows; ++i) b[i] = seeded_uniform(9, i);  // inconsistent: the solve projects it
  const SparseLdlt<double> ldlt(L, ones);
  EXPECT_TRUE(ldlt.singular());
  ldlt.solve(b, x);
  const Eigen::VectorXd expected = pinv * Eigen::Map<const Eigen::VectorXd>(b.data(), L.rows);
  for (Index i = 0; i < L.rows; ++i) EXPECT_NEAR(x[i], expected[i], 1e-10 * expected.norm()) << i;
  // The dense form (the cuda backend's) is the same matrix.
  const Vector<double> dense = dense_inverse(L, ones);
  const Eigen::Map<const Eigen::MatrixXd> M(dense.data(), L.rows, L.rows);
  EXPECT_LE((M - pinv).cwiseAbs().maxCoeff(), 1e-10 * pinv.cwiseAbs().maxCoeff());
  EXPECT_EQ(M, M.transpose());
  // Without a nullspace the singular matrix is refused as not positive definite.
  EXPECT_THROW(SparseLdlt<double>{L}, NumericalError);
}

TEST(SparseLdlt, DenseInverseOfANonsingularMatrixIsItsInverse) {
  const CsrMatrix<double> A = poisson(Stencil::p5, {9, 7}, Boundary::dirichlet);
  const Vector<double> dense = dense_inverse(A);
  const Eigen::Map<const Eigen::MatrixXd> M(dense.data(), A.rows, A.rows);
  EXPECT_LE((M * test::to_dense(A) - Eigen::MatrixXd::Identity(A.rows, A.rows)).cwiseAbs().maxCoeff(), 1e-12);
}

// D A D for an SPD A and a diagonal D spread over 1e-5 to 1e5 is SPD, whatever its pivots' spread: the
// factorisation takes it (in sparse and dense form) and solves it as D^-1 A^-1 D^-1; diag(1, 1e-13) too.
// Before, pivots were judged against the largest one, and these were "singular or not positive definite".
TEST(SparseLdlt, ADiagonalScalingDoesNotMakeAnSpdMatrixSingular) {
  const CsrMatrix<double> A = poisson(Stencil::p5, {12, 10}, Boundary::dirichlet);
  CsrMatrix<double> scaled = A;
  const auto d = [&](Index i) { return std::pow(10.0, -5.0 + 10.0 * i / (A.rows - 1)); };
  for (Index i = 0; i < A.rows; ++i)
    for (Offset k = A.row_begin(i); k < A.row_end(i); ++k) scaled.val[k] *= d(i) * d(A.col[k]);
  Vector<double> b(static_cast<std::size_t>(A.rows)), x, y;
  for (Index i = 0; i < A.rows; ++i) b[i] = 1.0 + std::sin(0.7 * i);
  const SparseLdlt<double> ldlt(scaled);
  ldlt.solve(b, x);
  Vector<double> b_over_d(b.size());
  for (Index i = 0; i < A.rows; ++i) b_over_d[i] = b[i] / d(i);
  SparseLdlt<double>(A).solve(b_over_d, y);  // x = D^-1 A^-1 D^-1 b
  for (Index i = 0; i < A.rows; ++i) EXPECT_NEAR(x[i] * d(i), y[i], 1e-9 * std::abs(y[i])) << i;
  EXPECT_NO_THROW(dense_inverse(scaled));
  const CsrMatrix<double> tiny = csr_from_triplets<double>(2, 2, {{0, 0, 1.0}, {1, 1, 1e-13}});
  EXPECT_NO_THROW(SparseLdlt<double>{tiny});
  EXPECT_NO_THROW(dense_inverse(tiny));
}

// ---- detection and refusals

TEST(Nullspace, DetectedExactlyWhereRowsSumToZero) {
  for (const Stencil s : {Stencil::p5, Stencil::p9}) {
    EXPECT_EQ(resolve_nullspace(poisson(s, {12, 9}, Boundary::neumann), NullspaceChoice::automatic),
              NullspaceChoice::constant);
    EXPECT_EQ(resolve_nullspace(poisson(s, {12, 9}, Boundary::dirichlet), NullspaceChoice::automatic),
              NullspaceChoice::none);
  }
  for (const Stencil s : {Stencil::p7, Stencil::p27})
    EXPECT_EQ(resolve_nullspace(poisson(s, {6, 5, 4}, Boundary::neumann), NullspaceChoice::automatic),
              NullspaceChoice::constant);
  // none is taken at its word.
  EXPECT_EQ(resolve_nullspace(poisson(Stencil::p5, {12, 9}, Boundary::neumann), NullspaceChoice::none),
            NullspaceChoice::none);
}

// The row of the largest relative sum is the one a scan in row order keeps (the first of the largest; a NaN
// only in row 0), whatever the thread count that searched: rows that tie, in different threads' blocks, and
// rows of relative sum NaN (an infinite entry: inf / inf) before and after them. A matrix large enough for
// the thread team.
TEST(Nullspace, TheLargestRelativeRowSumIsTheFirstInRowOrderOnAnyThreadCount) {
  const auto scan = [](const CsrMatrix<double>& A) {  // the textbook scan: the reference
    RowSum largest;
    for (Index i = 0; i < A.rows; ++i) {
      double top = 0, sum = 0, magnitude = 0;
      for (Offset k = A.row_begin(i); k < A.row_end(i); ++k) top = std::max(top, std::abs(A.val[k]));
      const double scale = unit_scale(top);
      for (Offset k = A.row_begin(i); k < A.row_end(i); ++k) {
        sum += scale * A.val[k];
        magnitude += scale * std::abs(A.val[k]);
      }
      const double relative = magnitude > 0 ? std::abs(sum) / magnitude : 0.0;
      if (largest.row < 0 || relative > largest.relative) largest = {i, relative};
    }
    return largest;
  };
  const CsrMatrix<double> neumann = poisson(Stencil::p7, {40, 40, 40}, Boundary::neumann);  // every row sum 0
  ASSERT_GT(neumann.nnz(), 1 << 17);
  const auto with_rows = [&](std::vector<std::pair<Index, double>> diagonal_times) {
    CsrMatrix<double> A = neumann;
    for (const auto& [row, factor] : diagonal_times)
      for (Offset k = A.row_begin(row); k < A.row_end(row); ++k)
        if (A.col[k] == row) A.val[k] *= factor;
    return A;
  };
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<std::pair<CsrMatrix<double>, Index>> cases = {  // a matrix and the row the scan keeps
      {neumann, 0},                                                  // all 0: row 0
      {with_rows({{50000, 2}, {100, 2}, {30000, 2}}), 100},          // a tie: the first
      {with_rows({{7, inf}, {40000, 3}, {63000, 3}}), 40000},        // a NaN before the largest ones
      {with_rows({{0, inf}, {40000, 3}}), 0},                        // a NaN in row 0 is kept
      {with_rows({{63999, 5}, {20000, 4}, {63998, inf}}), 63999},    // the largest in the last row
      {CsrMatrix<double>(0, 0), -1},                                 // no rows: none
      {poisson(Stencil::p5, {1, 1}, Boundary::dirichlet), 0},        // one row
  };
  for (const auto& [A, row] : cases) {
    const RowSum expected = scan(A);
    ASSERT_EQ(expected.row, row) << "the case is not what it says";
    for (const int threads : {1, 2, 3, 5}) {
      omp_set_num_threads(threads);
      const RowSum found = largest_relative_row_sum(A);
      EXPECT_EQ(found.row, expected.row) << threads << " threads";
      EXPECT_TRUE(found.relative == expected.relative || (std::isnan(found.relative) && std::isnan(expected.relative)))
          << found.relative << " against " << expected.relative << ", " << threads << " threads";
      // auto's question, answered early: whether some row's sum is beyond a tolerance (NaN counts as beyond)
      for (const double tolerance : {zero_row_sum_tolerance<double>(), 0.3}) {
        bool beyond = false;
        for (Index i = 0; i < A.rows; ++i) beyond = beyond || !(relative_row_sum(A, i) <= tolerance);
        EXPECT_EQ(some_row_sum_beyond(A, tolerance), beyond) << tolerance << ", " << threads << " threads";
      }
    }
    omp_set_num_threads(2);
  }
}

// Rows of entries near double's limits are summed on their largest entry's scale: Dirichlet's rows of 1.5e308
// do not sum to zero (their sums of magnitudes overflowed to inf, every row looked of sum 0, and a
// nonsingular matrix singular), Neumann's do.
TEST(Nullspace, DetectedAlikeForEntriesNearDoublesLimits) {
  for (const double scale : {1.5e308, 1e-300}) {
    for (const Boundary boundary : {Boundary::dirichlet, Boundary::neumann}) {
      CsrMatrix<double> A = poisson(Stencil::p5, {12, 9}, boundary);
      const double unscaled = largest_relative_row_sum(A).relative;
      for (double& v : A.val) v *= scale / 4;  // the diagonal of 4 at scale
      EXPECT_NEAR(largest_relative_row_sum(A).relative, unscaled, 1e-3) << scale;
      EXPECT_EQ(resolve_nullspace(A, NullspaceChoice::automatic),
                boundary == Boundary::neumann ? NullspaceChoice::constant : NullspaceChoice::none)
          << scale;
    }
  }
}

// A start with a large part along the nullspace (a constant of 1e9 on a Neumann problem) converges as the
// start without it does: that part, which no residual sees, is removed first (it held the true residual at
// 1e-7 through the rounding of A x, and the solve stagnated).
TEST(Nullspace, AStartAlongTheNullspaceConvergesAsFromZero) {
  const auto A = std::make_shared<const CsrMatrix<double>>(poisson(Stencil::p5, {30, 30}, Boundary::neumann));
  Vector<double> b(A->rows);
  for (Index i = 0; i < A->rows; ++i) b[i] = std::sin(0.37 * i);
  CpuBackend{}.remove_mean(b);
  const Solver solver(A, Parameters{});
  Vector<double> from_zero;
  const SolveResult zero = solver.solve(b, from_zero);
  SolveOptions from_x;
  from_x.initial_guess = true;
  Vector<double> x(A->rows, 1e9);
  const SolveResult shifted = solver.solve(b, x, {}, from_x);
  EXPECT_TRUE(shifted.converged) << shifted.relative_residual;
  EXPECT_EQ(shifted.iterations, zero.iterations);
  EXPECT_LT(test::true_relative_residual(*A, b, x), 1e-8);
}

TEST(Nullspace, DeclaredConstantThatDoesNotHoldNamesTheRow) {
  try {
    (void)resolve_nullspace(poisson(Stencil::p5, {12, 9}, Boundary::dirichlet), NullspaceChoice::constant);
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("row 1 of the matrix sums to"), std::string::npos) << e.what();
  }
}

// Two 10 x 10 Neumann grids side by side: a nullspace of two vectors. With `zero_links`, their corners are
// linked by stored zeros (a pattern kept for a re-setup), which couple nothing: still two singular pieces.
std::shared_ptr<const CsrMatrix<double>> two_neumann_grids(bool zero_links) {
  const CsrMatrix<double> one = poisson(Stencil::p5, {10, 10}, Boundary::neumann);
  std::vector<Triplet<double>> t;
  for (Index part = 0; part < 2; ++part)
    for (Index i = 0; i < one.rows; ++i)
      for (Offset k = one.row_begin(i); k < one.row_end(i); ++k)
        t.push_back({part * one.rows + i, part * one.rows + one.col[k], one.val[k]});
  if (zero_links) {
    t.push_back({one.rows - 1, one.rows, 0.0});
    t.push_back({one.rows, one.rows - 1, 0.0});
  }
  auto two = std::make_shared<const CsrMatrix<double>>(csr_from_triplets(2 * one.rows, 2 * one.rows, std::move(t)));
  EXPECT_EQ(two->nnz(), 2 * one.nnz() + (zero_links ? 2 : 0)) << "the zeros are stored";
  return two;
}

void expect_refused_as_disconnected(const std::function<void()>& setup) {
  try {
    setup();
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("2 disconnected parts"), std::string::npos) << e.what();
  }
}

// Refused, not left to a breakdown of PCG or a singular coarsest matrix; stored zeros change nothing.
TEST(Nullspace, DisconnectedSingularMatrixIsRefusedBeforeTheSetup) {
  for (const bool zero_links : {false, true}) {
    SCOPED_TRACE(zero_links ? "linked by stored zeros" : "no links");
    const auto two = two_neumann_grids(zero_links);
    EXPECT_EQ(connected_components(*two), 2);
    expect_refused_as_disconnected([&] { Solver solver(two, Parameters{}); });
  }
}

// A rebuild for such a matrix is refused before any work, whatever would have followed (a re-setup in place,
// or a full setup for the new pattern): the hierarchy stays as it was and solves the matrix it was built for.
TEST(Nullspace, RebuildForADisconnectedSingularMatrixLeavesTheHierarchyAsItWas) {
  const auto grid = std::make_shared<const CsrMatrix<double>>(poisson(Stencil::p5, {20, 10}, Boundary::neumann));
  const auto two = two_neumann_grids(true);  // of the grid's size, on another pattern
  ASSERT_EQ(two->rows, grid->rows);
  Vector<double> b(static_cast<std::size_t>(grid->rows));
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = std::sin(0.3 * static_cast<double>(i));
  const double mean = std::accumulate(b.begin(), b.end(), 0.0) / static_cast<double>(b.size());
  for (double& v : b) v -= mean;  // consistent with the grid's nullspace, the constant
  for (const bool keep_structure : {false, true}) {
    SCOPED_TRACE(keep_structure ? "keep_structure" : "no keep_structure");
    Parameters params;
    params.amg.keep_structure = keep_structure;
    Solver solver(grid, params);
    const std::size_t levels = solver.setup().levels.size();
    expect_refused_as_disconnected([&] { solver.rebuild(two); });
    EXPECT_EQ(solver.setup().levels.size(), levels);
    Vector<double> x;
    const SolveResult result = solver.solve(b, x);
    EXPECT_TRUE(result.converged);
    EXPECT_LT(test::true_relative_residual(*grid, b, x), 1e-6);
  }
}

// A part whose rows sum to zero beside one that does not: not singular by the whole matrix's row sums
// (amg.nullspace auto finds none), singular all the same. The diagnosis names the part by its first row.
TEST(Nullspace, AFloatingPartIsNamedByItsFirstRowAndSize) {
  const CsrMatrix<double> held = poisson(Stencil::p5, {20, 20}, Boundary::dirichlet);  // 400 rows
  const CsrMatrix<double> floating = poisson(Stencil::p5, {6, 5}, Boundary::neumann);   // 30 rows
  const std::string named = floating_part(*test::side_by_side({held, floating}));
  EXPECT_NE(named.find("row 401 and the 29 rows coupled to it"), std::string::npos) << named;
  EXPECT_NE(named.find("floating part"), std::string::npos) << named;
  EXPECT_NE(floating_part(*test::side_by_side({floating, held})).find("row 1 and the 29 rows"), std::string::npos);
  // None: one part, two held parts, or a singular whole (its own refusal: "disconnected parts").
  EXPECT_EQ(floating_part(held), "");
  EXPECT_EQ(floating_part(*test::side_by_side({held, held})), "");
  // Two floating parts: the first in row order.
  const CsrMatrix<double> larger = poisson(Stencil::p5, {20, 10}, Boundary::neumann);
  EXPECT_NE(floating_part(*test::side_by_side({held, larger, held, floating})).find("row 401 and the 199 rows"),
            std::string::npos);
  EXPECT_EQ(floating_part(floating), "");
}

// The setup of such a matrix fails on its singular coarsest level, and the error says which part floats.
TEST(Nullspace, TheSetupsErrorForAFloatingPartNamesIt) {
  const auto A = test::side_by_side({poisson(Stencil::p5, {20, 20}, Boundary::dirichlet),
                                     poisson(Stencil::p5, {6, 5}, Boundary::neumann)});
  EXPECT_EQ(resolve_nullspace(*A, NullspaceChoice::automatic), NullspaceChoice::none);
  try {
    Solver solver(A, Parameters{});
    FAIL() << "a singular matrix was set up";
  } catch (const NumericalError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("singular or not positive definite"), std::string::npos) << what;
    EXPECT_NE(what.find("row 401 and the 29 rows coupled to it"), std::string::npos) << what;
  }
}

// A system's floating part: an elastic body held nowhere, beside a clamped one, moves as a rigid body, which
// its near-nullspace (the rigid-body modes) names; the setup's error says so.
TEST(Nullspace, ASystemsFloatingPartIsNamedByTheVectorItMovesAs) {
  const test::HeldAndFreeBodies bodies = test::held_and_free_bodies(12, 4, 6, 3);
  const auto& A = bodies.A;
  const NearNullspace B = finest_near_nullspace(A->rows, 2, bodies.modes);
  const std::string part = bodies.part();
  const std::string named = floating_part(*A, &B);
  EXPECT_NE(named.find(part), std::string::npos) << named;
  EXPECT_NE(named.find("A maps near-nullspace vector 1 to zero on its rows"), std::string::npos) << named;
  // Both bodies held: none.
  Vector<double> held_points;
  const CsrMatrix<double> held = test::elasticity_2d(12, 4, held_points, test::Support::clamped);
  Vector<double> twice = held_points;
  twice.insert(twice.end(), held_points.begin(), held_points.end());
  const NearNullspace both = finest_near_nullspace(2 * held.rows, 2, rigid_body_modes(twice, 2));
  EXPECT_EQ(floating_part(*test::side_by_side({held, held}), &both), "");
  Parameters params;
  params.amg.block_size = 2;
  params.amg.near_nullspace = bodies.modes;
  const std::string error = test::error_of<FloatingPartError>([&] {
    const Solver solver(A, params);
    Vector<double> x;
    (void)solver.solve(Vector<double>(static_cast<std::size_t>(A->rows), 1.0), x);
  });
  EXPECT_NE(error.find(part), std::string::npos) << error;
}

// In mixed precision the float setup of a larger such matrix survives (its coarse levels' rounding hides the
// singular block) and PCG breaks down on the cycle's huge correction along it: that error names the part too.
TEST(Nullspace, TheSolvesBreakdownOnAFloatingPartNamesIt) {
  const auto A = test::side_by_side({poisson(Stencil::p5, {100, 100}, Boundary::dirichlet),
                                     poisson(Stencil::p5, {6, 5}, Boundary::neumann)});
  Parameters params;
  params.solver.precision = Precision::mixed;
  try {
    const Solver solver(A, params);
    const Vector<double> b(static_cast<std::size_t>(A->rows), 1.0);
    Vector<double> x;
    (void)solver.solve(b, x);
    FAIL() << "a singular matrix was solved";
  } catch (const NumericalError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("PCG breakdown"), std::string::npos) << what;
    EXPECT_NE(what.find("row 10001 and the 29 rows coupled to it"), std::string::npos) << what;
  }
}

TEST(Nullspace, InconsistentRightHandSideIsAClearError) {
  const auto A = std::make_shared<const CsrMatrix<double>>(poisson(Stencil::p5, {40, 30}, Boundary::neumann));
  const Solver solver(A, Parameters{});
  EXPECT_EQ(solver.setup().nullspace, "constant");
  const Vector<double> ones(static_cast<std::size_t>(A->rows), 1.0);
  Vector<double> x;
  try {
    (void)solver.solve(ones, x);
    FAIL() << "solved";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("inconsistent with the singular matrix"), std::string::npos) << e.what();
  }
  // A part below the tolerance is removed, not refused: b + 1e-12 * 1.
  Vector<double> b = consistent_rhs(*A, 3);
  for (double& v : b) v += 1e-12;
  const SolveResult r = solver.solve(b, x);
  EXPECT_TRUE(r.converged);
}

// A constant part of b just below the tolerance stays in b's residual (no x removes it): the iteration
// brings the rest so far down that b's own residual meets the tolerance, and that is what it reports. Before,
// the range part alone met it: b's residual was 1.3e-8 at a tolerance of 1e-8, reported as 8.8e-9.
TEST(Nullspace, AConstantPartBelowTheToleranceCountsInTheResidual) {
  const auto A = std::make_shared<const CsrMatrix<double>>(poisson(Stencil::p5, {64, 64}, Boundary::neumann));
  const Solver solver(A, Parameters{});
  Vector<double> b = consistent_rhs(*A, 5);
  double norm = 0;
  for (double v : b) norm += v * v;
  norm = std::sqrt(norm);
  const double shift = 0.99e-8 * norm / std::sqrt(static_cast<double>(b.size()));  // a constant part of 0.99e-8
  for (double& v : b) v += shift;
  for (const SolverType type : {SolverType::pcg, SolverType::amg}) {
    Parameters params;
    params.solver.type = type;
    const Solver one(A, params);
    Vector<double> x;
    const SolveResult r = one.solve(b, x);
    ASSERT_TRUE(r.converged);
    const double attained = test::true_relative_residual(*A, b, x);
    EXPECT_LE(attained, 1e-8);
    EXPECT_NEAR(r.relative_residual, attained, 1e-3 * attained);
    EXPECT_GE(r.history.back(), 0.99e-8) << "b's residual never falls below its constant part";
  }
}

// ---- singular problems against their nonsingular twins

struct Twins {
  std::string name;
  std::shared_ptr<const CsrMatrix<double>> singular, twin;
};

// Solves both with the defaults; the singular one must converge to a true solution of least norm in about
// as many iterations as the twin.
void expect_like_the_twin(const Twins& t, Precision precision) {
  SCOPED_TRACE(t.name + (precision == Precision::mixed ? " (mixed)" : ""));
  Parameters params;
  params.solver.precision = precision;
  params.solver.tolerance = 1e-9;
  const Vector<double> b = consistent_rhs(*t.singular, 11);
  Vector<double> x, y;
  const Solver singular(t.singular, params);
  ASSERT_EQ(singular.setup().nullspace, "constant");
  const SolveResult r = singular.solve(b, x);
  ASSERT_TRUE(r.converged) << r.iterations;
  const Solver twin(t.twin, params);
  EXPECT_EQ(twin.setup().nullspace, "none");
  const SolveResult r_twin = twin.solve(consistent_rhs(*t.twin, 11), y);
  ASSERT_TRUE(r_twin.converged);
  EXPECT_LE(r.iterations, r_twin.iterations + r_twin.iterations / 4 + 2) << "twin: " << r_twin.iterations;
  // A x = b (independently of the solver's bookkeeping) and x has zero mean.
  Vector<double> Ax;
  spmv(*t.singular, x, Ax);
  double res = 0, bb = 0, xx = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    res += (b[i] - Ax[i]) * (b[i] - Ax[i]);
    bb += b[i] * b[i];
    xx += x[i] * x[i];
  }
  EXPECT_LE(std::sqrt(res / bb), 1.01e-9);
  EXPECT_LE(std::abs(mean(x)) * std::sqrt(double(x.size())), 1e-12 * std::sqrt(xx));
}

TEST(NeumannPoisson, TwoAndThreeDimensionsConvergeLikeTheirDirichletTwins) {
  const std::vector<Twins> problems = {
      {"5pt 200x180", std::make_shared<const CsrMatrix<double>>(poisson(Stencil::p5, {200, 180}, Boundary::neumann)),
       std::make_shared<const CsrMatrix<double>>(poisson(Stencil::p5, {200, 180}, Boundary::dirichlet))},
      {"7pt 40x36x32",
       std::make_shared<const CsrMatrix<double>>(poisson(Stencil::p7, {40, 36, 32}, Boundary::neumann)),
       std::make_shared<const CsrMatrix<double>>(poisson(Stencil::p7, {40, 36, 32}, Boundary::dirichlet))},
      {"27pt 24^3", std::make_shared<const CsrMatrix<double>>(poisson(Stencil::p27, {24, 24, 24}, Boundary::neumann)),
       std::make_shared<const CsrMatrix<double>>(poisson(Stencil::p27, {24, 24, 24}, Boundary::dirichlet))},
  };
  for (const Twins& t : problems) expect_like_the_twin(t, Precision::double_precision);
  expect_like_the_twin(problems[1], Precision::mixed);
}

TEST(GraphLaplacian, MatrixMarketMeshGraphConvergesLikeItsGroundedTwin) {
  AMGSOLVE_REQUIRE_SHARED_MATRIX(path, "jagmesh7");
  const CsrMatrix<double> L = graph_laplacian(read_matrix_market(path, PatternValues::ones), 17);
  ASSERT_EQ(connected_components(L), 1);
  // The grounded twin: node 0 tied to ground through one more edge of weight 1, nonsingular.
  CsrMatrix<double> grounded = L;
  for (Offset k = grounded.row_begin(0); k < grounded.row_end(0); ++k)
    if (grounded.col[k] == 0) grounded.val[k] += 1.0;
  expect_like_the_twin({"jagmesh7 Laplacian", std::make_shared<const CsrMatrix<double>>(L),
                        std::make_shared<const CsrMatrix<double>>(std::move(grounded))},
                       Precision::double_precision);
}

}  // namespace
}  // namespace amgsolve
