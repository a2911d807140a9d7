// The elasticity problem family (problems/elasticity.hpp): its row-by-row assembly against the tests' own
// element-by-element one (tests/test_support.hpp: other formulas, triplets, another node order), the weight's
// load against the body's volume, and the cantilever's deflection
// against Euler-Bernoulli beam theory, solved with its rigid-body modes in a fraction of the scalar iterations;
// a rebuild at another size than the modes' refused with the hierarchy kept.
#include <cmath>
#include <map>

#include "amg/rigid_body_modes.hpp"
#include "amgsolve/solver.hpp"
#include "problems/elasticity.hpp"
#include "test_support.hpp"

namespace amgsolve {
namespace {

using namespace test;

// The position of each of `from`'s nodes among `to`'s, matched by their coordinates (d per node).
std::vector<Index> node_map(const Vector<double>& from, const Vector<double>& to, int d) {
  std::map<std::vector<long long>, Index> at;
  const auto key = [d](const Vector<double>& xyz, std::size_t n) {
    std::vector<long long> k(static_cast<std::size_t>(d));
    for (int a = 0; a < d; ++a) k[static_cast<std::size_t>(a)] = std::llround(xyz[n * d + a] * 1e6);
    return k;
  };
  for (std::size_t n = 0; n < to.size() / d; ++n) at[key(to, n)] = static_cast<Index>(n);
  std::vector<Index> map(from.size() / d);
  for (std::size_t n = 0; n < map.size(); ++n) map[n] = at.at(key(from, n));
  return map;
}

// A's entries against B's, the unknowns of node n of A being those of node map[n] of B.
void expect_same_matrix(const CsrMatrix<double>& A, const CsrMatrix<double>& B, const std::vector<Index>& map, int d) {
  ASSERT_EQ(A.rows, B.rows);
  const Eigen::MatrixXd dense = to_dense(B);
  const auto row_of = [&](Index i) { return map[static_cast<std::size_t>(i / d)] * d + i % d; };
  double largest = dense.cwiseAbs().maxCoeff(), worst = 0;
  Eigen::MatrixXd seen = Eigen::MatrixXd::Zero(A.rows, A.cols);
  for (Index i = 0; i < A.rows; ++i)
    for (Offset k = A.row_begin(i); k < A.row_end(i); ++k) seen(row_of(i), row_of(A.col[k])) += A.val[k];
  worst = (seen - dense).cwiseAbs().maxCoeff();
  EXPECT_LT(worst, 1e-13 * largest);
}

TEST(Elasticity, TheRowByRowAssemblyIsTheElementByElementOne2d) {
  ElasticityParams p;
  p.cells = {12, 5};
  Vector<double> reference_xy;
  const CsrMatrix<double> reference = elasticity_2d(12, 5, reference_xy);
  const CsrMatrix<double> A = elasticity_matrix(p);
  EXPECT_EQ(elasticity_rows(p), A.rows);
  EXPECT_LE(A.nnz(), elasticity_nnz_bound(p));
  expect_same_matrix(A, reference, node_map(elasticity_coordinates(p), reference_xy, 2), 2);
}

TEST(Elasticity, TheRowByRowAssemblyIsTheElementByElementOne3d) {
  ElasticityParams p;
  p.cells = {5, 3, 4};  // three different counts: an axis taken for another shows
  Vector<double> reference_xyz;
  const CsrMatrix<double> reference = elasticity_3d(5, 3, 4, reference_xyz);
  const CsrMatrix<double> A = elasticity_matrix(p);
  EXPECT_LE(A.nnz(), elasticity_nnz_bound(p));
  expect_same_matrix(A, reference, node_map(elasticity_coordinates(p), reference_xyz, 3), 3);
  for (Index i = 0; i < A.rows; ++i)  // columns sorted within each row, as the CSR kernels expect
    for (Offset k = A.row_begin(i) + 1; k < A.row_end(i); ++k) ASSERT_LT(A.col[k - 1], A.col[k]) << "row " << i;
}

TEST(Elasticity, TheLoadIsTheBodysWeight) {
  ElasticityParams p;
  p.cells = {10, 4, 3};  // the box [0, 2.5] x [0, 1] x [0, 0.75] of cells of side 1/4
  const Vector<double> b = elasticity_load(p);
  double weight = 0, sideways = 0;
  for (std::size_t i = 0; i < b.size(); ++i) (i % 3 == 1 ? weight : sideways) += b[i];
  // The whole weight (the volume) but the clamped face's share: Kuhn's simplices put half the corners of a
  // cell's elements on its face x = 0 (12 of the 6 tetrahedra's 24), so half of each first cell's weight.
  const double cell = std::pow(0.25, 3);
  EXPECT_NEAR(weight, -(2.5 * 1 * 0.75 - 4 * 3 * cell / 2), 1e-12);
  EXPECT_EQ(sideways, 0.0);
}

TEST(Elasticity, AnInteriorNodeCarriesOneCellsWeight) {
  // Kuhn's triangulation puts 6 triangles (2D) or 24 tetrahedra (3D) around an interior vertex, each giving
  // it 1 / (d + 1) of its volume h^d / d!: one cell's volume, h^d.
  for (const std::vector<std::int64_t>& cells : {std::vector<std::int64_t>{6, 4}, std::vector<std::int64_t>{5, 4, 3}}) {
    ElasticityParams p;
    p.cells = cells;
    const int d = p.dimensions();
    const Vector<double> b = elasticity_load(p);
    const double h = 1.0 / static_cast<double>(cells[1]);
    // The free node at grid point (2, 1, 1): node (i - 1) + cells_x (j + (cells_y + 1) k).
    const std::int64_t node = 1 + cells[0] * (1 + (cells[1] + 1) * (d == 3 ? 1 : 0));
    EXPECT_NEAR(b[static_cast<std::size_t>(d * node + 1)], -std::pow(h, d), 1e-15) << d << "D";
  }
}

TEST(Elasticity, ANodeRangesRowsAreThoseOfTheWholeMatrix) {
  for (const std::vector<std::int64_t>& cells : {std::vector<std::int64_t>{7, 3}, std::vector<std::int64_t>{4, 3, 2}}) {
    ElasticityParams p;
    p.cells = cells;
    const int d = p.dimensions();
    const CsrMatrix<double> whole = elasticity_matrix(p);
    const std::int64_t nodes = elasticity_nodes(p);
    for (const auto& [first, last] : {std::pair<std::int64_t, std::int64_t>{0, nodes}, {3, 11}, {nodes - 5, nodes}, {4, 4}}) {
      const CsrMatrix<double> part = elasticity_matrix_rows(p, first, last);
      ASSERT_EQ(part.rows, d * (last - first));
      ASSERT_EQ(part.cols, whole.cols);
      for (Index i = 0; i < part.rows; ++i) {
        const Index row = static_cast<Index>(d * first) + i;
        ASSERT_EQ(part.row_end(i) - part.row_begin(i), whole.row_end(row) - whole.row_begin(row)) << "row " << row;
        for (Offset k = part.row_begin(i), w = whole.row_begin(row); k < part.row_end(i); ++k, ++w) {
          EXPECT_EQ(part.col[k], whole.col[w]);
          EXPECT_EQ(part.val[k], whole.val[w]);
        }
      }
    }
    EXPECT_THROW(elasticity_matrix_rows(p, 2, nodes + 1), Error);
  }
}

// The cantilever's tip deflection (the largest downward displacement), solved with its rigid-body modes, and
// the solve's iterations.
struct Bent {
  double tip = 0;
  int iterations = 0, scalar_iterations = 0;
};
Bent bend(const std::vector<std::int64_t>& cells) {
  ElasticityParams p;
  p.cells = cells;
  const auto A = std::make_shared<const CsrMatrix<double>>(elasticity_matrix(p));
  const Vector<double> b = elasticity_load(p);
  Parameters params;
  params.amg.block_size = 2;
  params.amg.near_nullspace = rigid_body_modes(elasticity_coordinates(p), 2);
  params.solver.tolerance = 1e-9;
  params.solver.max_iterations = 2000;
  const Solved rigid = solve_with(A, params, b);
  EXPECT_TRUE(rigid.result.converged);
  Bent bent;
  for (std::size_t i = 1; i < rigid.x.size(); i += 2) bent.tip = std::max(bent.tip, -rigid.x[i]);
  bent.iterations = rigid.result.iterations;
  Parameters scalar;
  scalar.solver = params.solver;
  bent.scalar_iterations = solve_with(A, scalar, b).result.iterations;
  return bent;
}

TEST(Elasticity, TheCantileverBendsAsBeamTheorySays) {
  // Plane strain, a beam of length 8 and height 1 under its weight q = 1 per unit length. Euler-Bernoulli:
  // the tip deflects by q L^4 / (8 E' I), E' = E / (1 - nu^2), I = 1 / 12 (shear adds about 2%). Linear
  // triangles are too stiff in bending (locking), less so as the cells shrink: 95% of it at 8 cells through
  // the height, within 1% at 16.
  const double nu = ElasticityParams{}.poisson_ratio, beam_theory = std::pow(8.0, 4) * 12 * (1 - nu * nu) / 8;
  const Bent coarse = bend({64, 8}), fine = bend({128, 16});
  EXPECT_LT(coarse.tip, fine.tip);
  EXPECT_NEAR(fine.tip, beam_theory, 0.01 * beam_theory);
  for (const Bent& b : {coarse, fine})
    EXPECT_LT(3 * b.iterations, b.scalar_iterations) << b.iterations << " against " << b.scalar_iterations;
}

TEST(Elasticity, RefusesWhatIsNoBody) {
  ElasticityParams p;
  p.cells = {4};
  EXPECT_THROW(elasticity_matrix(p), InputError);
  p.cells = {4, 0, 2};
  EXPECT_THROW(elasticity_matrix(p), InputError);
  p.cells = {4, 2};
  p.poisson_ratio = 0.5;
  EXPECT_THROW(elasticity_matrix(p), InputError);
}


// A rebuild keeps the near-nullspace the solver was built with: a matrix of another size is refused before
// any work, naming the remedy, and the old hierarchy still solves as it did (before, the refusal came from the
// full setup tried in the re-setup's place, after the levels had gone).
TEST(Elasticity, ARebuildAtAnotherSizeIsRefusedAndKeepsTheHierarchy) {
  ElasticityParams p;
  p.cells = {16, 4};
  const auto A = std::make_shared<const CsrMatrix<double>>(elasticity_matrix(p));
  const Vector<double> b = elasticity_load(p);
  Parameters params;
  params.amg.block_size = 2;
  params.amg.near_nullspace = rigid_body_modes(elasticity_coordinates(p), 2);
  params.amg.keep_structure = true;
  Solver solver(A, params);
  const std::size_t levels = solver.setup().levels.size();
  p.cells = {32, 4};
  const auto longer = std::make_shared<const CsrMatrix<double>>(elasticity_matrix(p));
  try {
    solver.rebuild(longer);
    ADD_FAILURE() << "a rebuild at another size than the near-nullspace's";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("build a new Solver"), std::string::npos) << e.what();
  }
  EXPECT_EQ(solver.setup().levels.size(), levels);
  test::expect_identical_solves(solver, Solver(A, params), b);
}

}  // namespace
}  // namespace amgsolve
