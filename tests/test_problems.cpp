// Problem generators against analytic properties of the discrete Laplacians.
#include <cmath>
#include <numbers>

#include "common/error.hpp"
#include "problems/problem.hpp"
#include "test_support.hpp"

namespace amgsolve {
namespace {

PoissonParams params(Stencil s, std::vector<std::int64_t> size) {
  PoissonParams p;
  p.stencil = s;
  p.size = std::move(size);
  return p;
}

TEST(Poisson, EveryStencilIsASymmetricMMatrixWithTheAnnouncedSize) {
  for (auto p : {params(Stencil::p5, {7, 5}), params(Stencil::p9, {7, 5}), params(Stencil::p7, {5, 4, 3}),
                 params(Stencil::p27, {5, 4, 3})}) {
    const CsrMatrix<double> A = poisson_matrix(p);
    ASSERT_TRUE(is_valid_csr(A));
    EXPECT_EQ(A.rows, poisson_rows(p));
    EXPECT_EQ(A.nnz(), poisson_nnz(p));
    EXPECT_EQ(largest_asymmetry(A).relative, 0.0);
    const Eigen::MatrixXd D = test::to_dense(A);
    const int neighbours = p.stencil == Stencil::p5 ? 4 : p.stencil == Stencil::p9 ? 8 : p.stencil == Stencil::p7 ? 6 : 26;
    for (Index i = 0; i < A.rows; ++i) {
      EXPECT_EQ(D(i, i), neighbours);
      double off = 0;
      for (Index j = 0; j < A.cols; ++j)
        if (j != i) {
          EXPECT_LE(D(i, j), 0.0);
          off += D(i, j);
        }
      EXPECT_GE(D(i, i) + off, 0.0) << "row sums are non-negative (zero inside, positive at the boundary)";
    }
    EXPECT_GT(test::symmetric_eigenvalues(D).minCoeff(), 0.0) << to_string(p.stencil);
  }
}

TEST(Poisson, SpectrumMatchesTheAnalyticEigenvalues) {
  // 7-point: lambda = sum over directions of 2 - 2 cos(k pi / (n + 1)), k = 1..n.
  const std::vector<std::int64_t> n = {6, 5, 4};
  const Eigen::MatrixXd D = test::to_dense(poisson_matrix(params(Stencil::p7, n)));
  Eigen::VectorXd computed = test::symmetric_eigenvalues(D);
  std::vector<double> analytic;
  auto mode = [](std::int64_t k, std::int64_t m) { return 2.0 - 2.0 * std::cos(k * std::numbers::pi / (m + 1.0)); };
  for (std::int64_t i = 1; i <= n[0]; ++i)
    for (std::int64_t j = 1; j <= n[1]; ++j)
      for (std::int64_t k = 1; k <= n[2]; ++k) analytic.push_back(mode(i, n[0]) + mode(j, n[1]) + mode(k, n[2]));
  std::sort(analytic.begin(), analytic.end());
  ASSERT_EQ(static_cast<std::size_t>(computed.size()), analytic.size());
  for (std::size_t i = 0; i < analytic.size(); ++i) EXPECT_NEAR(computed[static_cast<Eigen::Index>(i)], analytic[i], 1e-10);
}

TEST(Poisson, ManufacturedRightHandSideIsAOfTheExactSolution) {
  ProblemSpec spec;
  spec.poisson = params(Stencil::p27, {9, 8, 7});
  spec.poisson.rhs = PoissonRhs::manufactured;
  const LinearProblem p = make_problem(spec);
  ASSERT_TRUE(p.exact.has_value());
  ASSERT_TRUE(p.grid.has_value());
  EXPECT_EQ(p.grid->points(), p.A->rows);
  const Eigen::VectorXd u = Eigen::Map<const Eigen::VectorXd>(p.exact->data(), p.A->rows);
  const Eigen::VectorXd b = Eigen::Map<const Eigen::VectorXd>(p.b.data(), p.A->rows);
  EXPECT_LE((test::to_dense(*p.A) * u - b).norm(), 1e-12 * b.norm());
  // u* = x(1-x) y(1-y) z(1-z) e^(x+2y+3z) at the first interior point (x, y, z) = (h0, h1, h2).
  const double h0 = 1.0 / 10, h1 = 1.0 / 9, h2 = 1.0 / 8;
  EXPECT_NEAR(u[0], h0 * (1 - h0) * h1 * (1 - h1) * h2 * (1 - h2) * std::exp(h0 + 2 * h1 + 3 * h2), 1e-15);
  // No eigenvector of A (which would make b a multiple of u*, solved by a step of almost any method).
  const double rayleigh = u.dot(b) / u.dot(u);
  EXPECT_GT((b - rayleigh * u).norm(), 0.1 * b.norm());
}

// The stencil weighs every direction alike, so the grid it discretises has one spacing: the box drawn in the
// VTK output (1/16 in every direction for 15 x 7 x 3 unknowns; it was 1/16, 1/8, 1/4, a unit cube on which
// the equal weights are not the Laplacian).
TEST(Poisson, TheGridHasOneSpacingInEveryDirection) {
  ProblemSpec spec;
  spec.poisson = params(Stencil::p7, {15, 7, 3});
  const LinearProblem p = make_problem(spec);
  ASSERT_TRUE(p.grid.has_value());
  for (int d = 0; d < 3; ++d) {
    EXPECT_DOUBLE_EQ(p.grid->spacing[d], 1.0 / 16) << "direction " << d;
    EXPECT_DOUBLE_EQ(p.grid->origin[d], 1.0 / 16) << "direction " << d;
  }
}

TEST(Poisson, InvalidSizesAreInputErrors) {
  ProblemSpec spec;
  spec.poisson = params(Stencil::p7, {10, 10});
  EXPECT_THROW(make_problem(spec), InputError);  // 2 entries for a 3D stencil
  spec.poisson = params(Stencil::p5, {10, 0});
  EXPECT_THROW(make_problem(spec), InputError);
  spec.poisson = params(Stencil::p5, {10, -3});
  EXPECT_THROW(make_problem(spec), InputError);
  spec.poisson = params(Stencil::p7, {3000, 3000, 3000});
  try {
    make_problem(spec);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("32-bit"), std::string::npos) << e.what();
  }
}

TEST(Poisson, ProblemsTooLargeForMemoryAreRefusedBeforeAllocation) {
  ProblemSpec spec;
  spec.poisson = params(Stencil::p27, {1250, 1250, 1250});  // < 2^31 rows, but ~3 TB
  try {
    make_problem(spec);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("memory"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace amgsolve

namespace amgsolve {
namespace {

TEST(Poisson, AnyBlockOfRowsIsThoseRowsOfTheWholeMatrix) {
  std::vector<PoissonParams> problems(6);
  problems[0].stencil = Stencil::p7, problems[0].size = {9, 8, 7};
  problems[1].stencil = Stencil::p27, problems[1].size = {6, 7, 5};
  problems[2].stencil = Stencil::p9, problems[2].size = {13, 11};
  problems[3].stencil = Stencil::p5, problems[3].size = {17, 9}, problems[3].coefficient = Coefficient::checkerboard;
  problems[4].stencil = Stencil::p7, problems[4].size = {8, 8, 9}, problems[4].boundary = Boundary::neumann,
  problems[4].anisotropy = {1.0, 1e-3, 1.0};
  problems[5].stencil = Stencil::p27, problems[5].size = {6, 7, 5}, problems[5].boundary = Boundary::neumann;
  for (const PoissonParams& p : problems) {
    const CsrMatrix<double> whole = poisson_matrix(p);
    const std::int64_t n = whole.rows;
    for (const auto& [first, last] : {std::pair<std::int64_t, std::int64_t>{0, n}, {0, 0}, {n / 3, n / 2}, {n - 1, n}, {5, 6}}) {
      const CsrMatrix<double> block = poisson_matrix_rows(p, first, last);
      ASSERT_EQ(block.rows, last - first);
      ASSERT_EQ(block.cols, whole.cols);
      for (Index i = 0; i < block.rows; ++i) {
        const Index row = static_cast<Index>(first) + i;
        ASSERT_EQ(block.row_length(i), whole.row_length(row)) << row;
        for (Offset k = 0; k < block.row_length(i); ++k) {
          EXPECT_EQ(block.col[block.row_begin(i) + k], whole.col[whole.row_begin(row) + k]);
          EXPECT_EQ(block.val[block.row_begin(i) + k], whole.val[whole.row_begin(row) + k]);
        }
      }
    }
    EXPECT_THROW(poisson_matrix_rows(p, 1, n + 1), Error);
    // A problem assembled by rows has those rows of the whole one's b and manufactured solution, bit for bit
    // (the Neumann one's with the whole solution's mean removed).
    ProblemSpec spec;
    spec.poisson = p;
    spec.poisson.rhs = PoissonRhs::manufactured;
    const LinearProblem all = make_problem(spec);
    const RowRange rows{n / 3, n / 3 + 40};
    const LinearProblem part = make_problem(spec, &rows);
    ASSERT_TRUE(part.exact.has_value());
    EXPECT_EQ(part.b, Vector<double>(all.b.begin() + rows.first, all.b.begin() + rows.last));
    EXPECT_EQ(*part.exact, Vector<double>(all.exact->begin() + rows.first, all.exact->begin() + rows.last));
  }
}

// The relative error of the Neumann matrix's solution against u = prod_d cos(pi x_d) on the cell-centred
// grid x = (i + 1/2) / n, whose normal derivative vanishes on the boundary: b = scale h^2 f for
// f = -Laplace(u) (scale: what the stencil's h^2 multiple of -Laplace is), both with their mean removed.
double neumann_cosine_error(Stencil s, std::int64_t n, double scale) {
  const int d = stencil_dimensions(s);
  PoissonParams p = params(s, std::vector<std::int64_t>(static_cast<std::size_t>(d), n));
  p.boundary = Boundary::neumann;
  const CsrMatrix<double> A = poisson_matrix(p);
  const double h = 1.0 / static_cast<double>(n);
  Eigen::VectorXd u(A.rows), b(A.rows);
  for (Index i = 0; i < A.rows; ++i) {
    double value = 1;
    std::int64_t rest = i;
    for (int k = 0; k < d; ++k, rest /= n) value *= std::cos(std::numbers::pi * (static_cast<double>(rest % n) + 0.5) * h);
    u[i] = value;
    b[i] = scale * h * h * d * std::numbers::pi * std::numbers::pi * value;
  }
  u.array() -= u.mean();
  b.array() -= b.mean();
  Eigen::SparseMatrix<double> M = test::to_eigen(A);
  Eigen::SparseMatrix<double> shift(A.rows, A.rows);
  shift.setIdentity();
  Eigen::VectorXd x = test::sparse_direct_solve(M + 1e-12 * shift, b);  // singular: the mean left out
  x.array() -= x.mean();
  return (x - u).norm() / u.norm();
}

// Neumann is second order for every stencil: the box stencils' couplings along the boundary fold their
// mirror images in (dropped, their boundary rows were first order: 9pt errors 0.104, 0.047, 0.022). The
// error falls by about 4 per halving of h.
TEST(Poisson, NeumannIsSecondOrderForEveryStencil) {
  const struct {
    Stencil stencil;
    std::int64_t n;
    double scale;
  } cases[] = {{Stencil::p5, 16, 1}, {Stencil::p9, 16, 3}, {Stencil::p7, 8, 1}, {Stencil::p27, 8, 9}};
  for (const auto& c : cases) {
    const double coarse = neumann_cosine_error(c.stencil, c.n, c.scale);
    const double fine = neumann_cosine_error(c.stencil, 2 * c.n, c.scale);
    EXPECT_GT(std::log2(coarse / fine), 1.8) << to_string(c.stencil) << ": " << coarse << " -> " << fine;
    EXPECT_LT(fine, 0.05) << to_string(c.stencil);
  }
}

// The mirror closure of the 5- and 7-point stencils drops the couplings across the boundary: the unit
// variable-coefficient matrix (insulated by its rows' sums) is the same matrix; every Neumann matrix is
// symmetric with rows summing to zero.
TEST(Poisson, NeumannMatricesAreSymmetricWithZeroRowSums) {
  for (auto p : {params(Stencil::p5, {9, 7}), params(Stencil::p9, {9, 7}), params(Stencil::p7, {6, 5, 4}),
                 params(Stencil::p27, {6, 5, 4}), params(Stencil::p27, {1, 5, 4})}) {
    p.boundary = Boundary::neumann;
    const CsrMatrix<double> A = poisson_matrix(p);
    EXPECT_EQ(largest_asymmetry(A).relative, 0.0) << to_string(p.stencil);
    for (Index i = 0; i < A.rows; ++i) {
      double sum = 0;
      for (Offset k = A.row_begin(i); k < A.row_end(i); ++k) sum += A.val[k];
      EXPECT_EQ(sum, 0.0) << to_string(p.stencil) << " row " << i;
    }
    if (p.stencil != Stencil::p5 && p.stencil != Stencil::p7) continue;
    PoissonParams unit = p;
    unit.anisotropy.assign(static_cast<std::size_t>(stencil_dimensions(p.stencil)), 1.0);
    const CsrMatrix<double> insulated = poisson_matrix(unit);
    EXPECT_EQ(insulated.col, A.col);
    EXPECT_EQ(insulated.val, A.val);
  }
}

TEST(VariableCoefficients, UnitCoefficientsReproduceTheConstantMatrix) {
  for (auto p : {params(Stencil::p5, {9, 7}), params(Stencil::p7, {6, 5, 4})}) {
    const CsrMatrix<double> standard = poisson_matrix(p);
    p.anisotropy.assign(static_cast<std::size_t>(stencil_dimensions(p.stencil)), 1.0);
    const CsrMatrix<double> variable = poisson_matrix(p);
    EXPECT_EQ(variable.row_ptr, standard.row_ptr);
    EXPECT_EQ(variable.col, standard.col);
    EXPECT_EQ(variable.val, standard.val);
  }
}

TEST(VariableCoefficients, JumpsAndAnisotropyGiveSymmetricMMatricesWithZeroInteriorRowSums) {
  PoissonParams p = params(Stencil::p7, {12, 10, 8});
  p.coefficient = Coefficient::checkerboard;
  p.contrast = 1e6;
  p.cells = 3;
  p.anisotropy = {1.0, 0.5, 1e-3};
  const CsrMatrix<double> A = poisson_matrix(p);
  EXPECT_EQ(A.nnz(), poisson_nnz(p));
  EXPECT_LT(largest_asymmetry(A).relative, 1e-15);
  for (Index i = 0; i < A.rows; ++i) {
    double sum = 0, diag = 0;
    for (Offset k = A.row_begin(i); k < A.row_end(i); ++k) {
      sum += A.val[k];
      if (A.col[k] == i) diag = A.val[k];
      else EXPECT_LT(A.val[k], 0.0);
    }
    EXPECT_GT(diag, 0.0);
    const std::int64_t x = i % 12, y = (i / 12) % 10, z = i / 120;
    const bool interior = x > 0 && x < 11 && y > 0 && y < 9 && z > 0 && z < 7;
    if (interior) {
      EXPECT_NEAR(sum, 0.0, 1e-9 * diag) << "row " << i;
    } else {
      EXPECT_GT(sum, 0.0) << "row " << i;
    }
  }
  // Both coefficient values occur and faces between them use the harmonic mean (about 2 for 1e6 : 1).
  double smallest = 1e300, largest = 0;
  for (double v : A.val) {
    smallest = std::min(smallest, std::abs(v));
    largest = std::max(largest, std::abs(v));
  }
  EXPECT_GT(largest, 1e6);
  EXPECT_LT(smallest, 1e-2);
}

TEST(VariableCoefficients, OnlyFaceStencils) {
  PoissonParams p = params(Stencil::p27, {4, 4, 4});
  p.coefficient = Coefficient::checkerboard;
  EXPECT_THROW(poisson_matrix(p), InputError);
  p = params(Stencil::p7, {4, 4, 4});
  p.anisotropy = {1.0, 1.0};
  EXPECT_THROW(poisson_matrix(p), InputError);
}

}  // namespace
}  // namespace amgsolve
