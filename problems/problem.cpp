#include "problems/problem.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <limits>
#include <numbers>

#include "common/error.hpp"
#include "common/exact_sum.hpp"
#include "common/memory.hpp"
#include "common/parallel.hpp"
#include "sparse/csr_ops.hpp"
#include "sparse/matrix_market.hpp"

namespace amgsolve {
namespace {

constexpr std::int64_t kMaxRows = std::numeric_limits<Index>::max();

void check_poisson_size(const PoissonParams& p) {
  const int dims = stencil_dimensions(p.stencil);
  if (static_cast<int>(p.size.size()) != dims)
    throw InputError(std::string("problem.size has ") + std::to_string(p.size.size()) + " entries but stencil " +
                     to_string(p.stencil) + " is " + std::to_string(dims) + "D");
  double rows = 1;
  for (std::int64_t n : p.size) {
    if (n <= 0) throw InputError("problem.size entries must be positive, got " + std::to_string(n));
    rows *= static_cast<double>(n);
  }
  if (rows > static_cast<double>(kMaxRows)) {
    // The product is a double (it may pass int64); printed as one.
    char count[32];
    std::snprintf(count, sizeof count, "%.3g", rows);
    throw InputError(std::string("problem.size gives ") + count + " unknowns, more than the 32-bit index limit of " +
                     std::to_string(kMaxRows));
  }
}

// u* = x(1-x) y(1-y) [z(1-z)] e^(x + 2y [+ 3z]) at the grid's point idx: smooth, zero on the boundary, and
// no eigenvector of A. (sin(pi x) sin(2 pi y) sin(3 pi z), used before, is one on these grids: b was then a
// multiple of u*, which even one Jacobi-preconditioned CG step solves, so it told little about a solver.)
double manufactured_value(const Grid& g, std::int64_t idx) {
  const std::int64_t i = idx % g.size[0], j = (idx / g.size[0]) % g.size[1], k = idx / (std::int64_t{g.size[0]} * g.size[1]);
  const double x = (i + 1.0) / (g.size[0] + 1.0), y = (j + 1.0) / (g.size[1] + 1.0);
  const double z = g.dims == 3 ? (k + 1.0) / (g.size[2] + 1.0) : 0.0;
  const double bump = x * (1 - x) * y * (1 - y) * (g.dims == 3 ? z * (1 - z) : 1.0);
  return bump * std::exp(x + 2 * y + 3 * z);
}

// u* at the points [first, last).
Vector<double> manufactured_solution(const Grid& g, std::int64_t first, std::int64_t last) {
  Vector<double> u(static_cast<std::size_t>(last - first));
#pragma omp parallel for schedule(static)
  for (std::int64_t idx = first; idx < last; ++idx) u[idx - first] = manufactured_value(g, idx);
  return u;
}

// The mean of u* over every point, its sum exact: the same on every rank, whichever rows it holds.
double manufactured_mean(const Grid& g) {
  const ExactSum sum = deterministic_partial_sum(g.points(), [&](std::int64_t idx) { return manufactured_value(g, idx); });
  return sum.value() / static_cast<double>(g.points());
}

// A manufactured right-hand side b = A u* on A's rows (the first of them `first`), u* made only on the span
// of their columns (a rank's rows and the planes next to them), and u* there: problem.b and problem.exact.
void manufacture(const CsrMatrix<double>& A, std::int64_t first, const Grid& g, LinearProblem& problem) {
  std::int64_t lo = first, hi = first + A.rows;  // the span [lo, hi): the rows' own points and their columns
  for (Index j : A.col) lo = std::min<std::int64_t>(lo, j), hi = std::max<std::int64_t>(hi, j + 1);
  const Vector<double> u = manufactured_solution(g, lo, hi);
  problem.b.assign(static_cast<std::size_t>(A.rows), 0.0);
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < A.rows; ++i) {
    double sum = 0.0;
    for (Offset k = A.row_begin(i); k < A.row_end(i); ++k) sum += A.val[k] * u[static_cast<std::size_t>(A.col[k] - lo)];
    problem.b[static_cast<std::size_t>(i)] = sum;
  }
  problem.exact.emplace(u.begin() + (first - lo), u.begin() + (first - lo + A.rows));
}

// What a rank that assembles its rows holds beyond its share of the matrix, the hierarchy and the vectors
// (estimated_solve_bytes): on rank 0, which has the first rows, the whole solution, right-hand side, exact
// solution and error it gathers to write.
std::uint64_t whole_vector_bytes(const RowRange* rows, std::int64_t unknowns) {
  if (!rows || rows->first != 0) return 0;
  return 4 * sizeof(double) * static_cast<std::uint64_t>(unknowns);
}

// A problem's part in a memory message: "the <what>", or "this rank's share of the <what>" where the rank
// assembles only its rows.
std::string share_of(const RowRange* rows, const std::string& what) {
  return (rows ? "this rank's share of the " : "the ") + what;
}

LinearProblem make_poisson(const PoissonParams& p, const RowRange* rows) {
  check_poisson_size(p);
  const std::string what = std::string("poisson ") + to_string(p.stencil) + " problem";
  const double share = rows ? static_cast<double>(rows->last - rows->first) / static_cast<double>(poisson_rows(p)) : 1.0;
  require_memory_of_each_rank(static_cast<std::uint64_t>(share * static_cast<double>(estimated_solve_bytes(
                                                             poisson_rows(p), poisson_nnz(p)))) +
                                  whole_vector_bytes(rows, poisson_rows(p)),
                              share_of(rows, what));

  LinearProblem problem;
  Grid grid;
  grid.dims = stencil_dimensions(p.stencil);
  for (int d = 0; d < grid.dims; ++d) grid.size[d] = static_cast<Index>(p.size[d]);
  // Interior points only, one spacing h in every direction, as the stencil's equal weights in every
  // direction say: h = 1 / (n + 1) for the largest n, so the box is the unit square or cube when the sizes
  // are equal and shorter along the other directions; the first unknown lies one spacing inside.
  const std::int64_t largest = *std::max_element(p.size.begin(), p.size.end());
  for (int d = 0; d < grid.dims; ++d) {
    grid.spacing[d] = 1.0 / (static_cast<double>(largest) + 1.0);
    grid.origin[d] = grid.spacing[d];
  }

  auto A = std::make_shared<CsrMatrix<double>>(rows ? poisson_matrix_rows(p, rows->first, rows->last)
                                                    : poisson_matrix(p));
  if (rows) {
    problem.global_rows = poisson_rows(p);
    problem.first_row = rows->first;
  }
  problem.description = what + " ";
  for (std::size_t d = 0; d < p.size.size(); ++d) {
    if (d > 0) problem.description += 'x';
    problem.description += std::to_string(p.size[d]);
  }
  if (!p.anisotropy.empty()) {
    problem.description += ", anisotropy [";
    for (std::size_t d = 0; d < p.anisotropy.size(); ++d) {
      char eps[32];
      std::snprintf(eps, sizeof eps, "%s%g", d ? ", " : "", p.anisotropy[d]);
      problem.description += eps;
    }
    problem.description += "]";
  }
  if (p.coefficient == Coefficient::checkerboard) {
    char jump[96];
    std::snprintf(jump, sizeof jump, ", checkerboard coefficient %g : 1 on %lld cells per direction", p.contrast,
                  static_cast<long long>(p.cells));
    problem.description += jump;
  }
  if (p.boundary == Boundary::neumann) problem.description += ", Neumann boundary (singular: constants)";
  if (p.rhs == PoissonRhs::manufactured) {
    manufacture(*A, rows ? rows->first : 0, grid, problem);
    // Neumann: u* is known up to a constant, and the solver returns the solution of zero mean.
    if (p.boundary == Boundary::neumann) {
      const double mean = manufactured_mean(grid);
      for (double& u : *problem.exact) u -= mean;
    }
    problem.description += ", manufactured solution";
  } else {
    problem.b.assign(static_cast<std::size_t>(A->rows), 1.0);
  }
  problem.A = std::move(A);
  problem.grid = grid;
  return problem;
}

}  // namespace

std::string matrix_market_description(const MatrixMarketParams& p, std::int64_t rows) {
  return "matrix " + p.matrix + " (" + std::to_string(rows) + " rows)";
}

namespace {

// The columns of a Matrix Market matrix (array or coordinate; entries not stored are 0).
std::vector<Vector<double>> columns_of(const CsrMatrix<double>& M) {
  std::vector<Vector<double>> columns(static_cast<std::size_t>(M.cols), Vector<double>(static_cast<std::size_t>(M.rows), 0.0));
  for (Index i = 0; i < M.rows; ++i)
    for (Offset k = M.row_begin(i); k < M.row_end(i); ++k) columns[static_cast<std::size_t>(M.col[k])][i] = M.val[k];
  return columns;
}

// The columns of a file of vectors (`what`: "right-hand side", "initial guess") for a matrix of `rows` rows,
// from its header: a row where a column is meant, another row count or too many columns are errors.
std::int64_t vector_file_columns(const std::string& path, const char* what, const MatrixMarketParams& p,
                                 std::int64_t rows) {
  const MatrixMarketHeader header = read_matrix_market_header(path);
  if (header.rows == 1 && header.cols == rows && rows > 1)
    throw InputError(path + ": " + what + " is 1 x " + std::to_string(rows) + ", a row; a vector is a column (n x 1), "
                     "several are the columns of n x m");
  if (header.rows != rows)
    throw InputError(path + ": " + what + " has " + std::to_string(header.rows) + " rows but " + p.matrix + " has " +
                     std::to_string(rows));
  if (header.cols < 1 || header.cols > kMaxRightHandSides)
    throw InputError(path + ": " + what + " has " + std::to_string(header.cols) + " columns; 1 to " +
                     std::to_string(kMaxRightHandSides) + " right-hand sides (load cases) are taken");
  return header.cols;
}

std::vector<Vector<double>> read_columns(const std::string& path, std::int64_t columns) {
  if (columns == 1) return {read_matrix_market_vector(path)};
  return columns_of(read_matrix_market(path));
}

}  // namespace

std::int64_t matrix_market_rhs_columns(const MatrixMarketParams& p, std::int64_t rows) {
  const std::int64_t columns = p.rhs.empty() ? 1 : vector_file_columns(p.rhs, "right-hand side", p, rows);
  if (!p.x0.empty()) {
    const std::int64_t starts = vector_file_columns(p.x0, "initial guess", p, rows);
    if (starts != columns)
      throw InputError(p.x0 + ": initial guess has " + std::to_string(starts) + " column(s), one per right-hand side "
                       "is needed: " + std::to_string(columns));
  }
  return columns;
}

std::uint64_t right_hand_side_bytes(const MatrixMarketParams& p, std::int64_t rows, std::int64_t columns,
                                    bool reading) {
  const double entries = static_cast<double>(rows) * static_cast<double>(columns);
  // b and x per column (an initial guess is read into its solution); a file of several columns passes
  // through the reader's triplets and matrix.
  const double files = (p.rhs.empty() ? 0.0 : 1.0) + (p.x0.empty() ? 0.0 : 1.0);
  const double bytes = 16.0 * entries + (reading && columns > 1 ? 28.0 * files * entries : 0.0);
  return saturating_bytes(bytes);
}

void read_right_hand_sides(const MatrixMarketParams& p, std::int64_t rows, std::int64_t columns,
                           LinearProblem& problem) {
  std::vector<Vector<double>> loads = p.rhs.empty() ? std::vector<Vector<double>>{Vector<double>(static_cast<std::size_t>(rows), 1.0)}
                                                    : read_columns(p.rhs, columns);
  problem.b = std::move(loads.front());
  problem.more_b.assign(std::make_move_iterator(loads.begin() + 1), std::make_move_iterator(loads.end()));
  if (!p.x0.empty()) problem.x0 = read_columns(p.x0, columns);
}

void allocate_right_hand_sides(const MatrixMarketParams& p, std::int64_t rows, std::int64_t columns,
                               LinearProblem& problem) {
  const Vector<double> column(static_cast<std::size_t>(rows));
  problem.b = column;
  problem.more_b.assign(static_cast<std::size_t>(columns - 1), column);
  if (!p.x0.empty()) problem.x0.assign(static_cast<std::size_t>(columns), column);
}

namespace {

LinearProblem make_matrix_market(const MatrixMarketParams& p) {
  if (p.matrix.empty()) throw InputError("problem.matrix: a matrix_market problem needs a matrix file");
  const MatrixMarketHeader header = read_matrix_market_header(p.matrix);
  const std::int64_t columns = matrix_market_rhs_columns(p, header.rows);
  // The load cases come on top of the matrix, its reading and the solve.
  require_memory(estimated_read_and_solve_bytes(header.rows, header.entries_with_mirrors()) +
                     right_hand_side_bytes(p, header.rows, columns, true),
                 "the matrix in " + p.matrix +
                     (columns > 1 ? " and the " + std::to_string(columns) + " right-hand sides in " + p.rhs : ""));

  auto A = std::make_shared<CsrMatrix<double>>(read_matrix_market(p.matrix));
  drop_stored_zeros(*A);
  require_spd_candidate(p.matrix, *A);
  LinearProblem problem;
  problem.description = matrix_market_description(p, A->rows);
  read_right_hand_sides(p, A->rows, columns, problem);
  problem.A = std::move(A);
  return problem;
}

}  // namespace

std::uint64_t estimated_solve_bytes(Offset rows, Offset nnz) {
  // Fine matrix (12 bytes per nonzero, 8 per row), about three times that again for P, R, the coarse
  // operators and the A P intermediate, and some 16 vectors of length rows.
  const double matrix = 12.0 * static_cast<double>(nnz) + 8.0 * static_cast<double>(rows);
  const double bytes = 4.0 * matrix + 16.0 * 8.0 * static_cast<double>(rows);
  return saturating_bytes(bytes);
}

std::uint64_t estimated_read_and_solve_bytes(Offset rows, Offset nnz) {
  return estimated_solve_bytes(rows, nnz) + 16 * static_cast<std::uint64_t>(nnz);
}

namespace {

// The cantilever's stiffness matrix and weight (problems/elasticity.hpp), on the grid of its free nodes; rows:
// only those (whole nodes) of the matrix.
LinearProblem make_elasticity(const ElasticityParams& p, const RowRange* rows) {
  const int d = p.dimensions();
  const std::int64_t unknowns = elasticity_rows(p);
  if (rows && (rows->first % d != 0 || rows->last % d != 0))
    throw Error("make_problem: an elasticity problem's rows [" + std::to_string(rows->first) + ", " +
                std::to_string(rows->last) + ") are not whole nodes of " + std::to_string(d) + " unknowns");
  const double share = rows ? static_cast<double>(rows->last - rows->first) / static_cast<double>(unknowns) : 1.0;
  require_memory_of_each_rank(
      static_cast<std::uint64_t>(share * static_cast<double>(estimated_solve_bytes(unknowns, elasticity_nnz_bound(p)))) +
          whole_vector_bytes(rows, unknowns),
      share_of(rows, "elasticity problem (problem.box)"));
  LinearProblem problem;
  std::string cells;
  for (int a = 0; a < d; ++a) {
    if (a > 0) cells += 'x';
    cells += std::to_string(p.cells[a]);
  }
  problem.description = "elasticity " + std::to_string(d) + "D cantilever " + cells + " cells, E " +
                        format_number(p.young_modulus) + ", nu " + format_number(p.poisson_ratio) +
                        ", clamped at x = 0, under its weight";
  if (rows) {
    problem.A = std::make_shared<const CsrMatrix<double>>(elasticity_matrix_rows(p, rows->first / d, rows->last / d));
    problem.global_rows = unknowns;
    problem.first_row = rows->first;
  } else {
    problem.A = std::make_shared<const CsrMatrix<double>>(elasticity_matrix(p));
  }
  problem.b = rows ? elasticity_load(p, rows->first / d, rows->last / d) : elasticity_load(p);
  const double h = 1.0 / static_cast<double>(p.cells[1]);
  Grid grid;
  grid.dims = d;
  grid.size = {static_cast<Index>(p.cells[0]), static_cast<Index>(p.cells[1] + 1), d == 3 ? static_cast<Index>(p.cells[2] + 1) : 1};
  grid.origin = {h, 0, 0};
  grid.spacing = {h, h, h};
  problem.grid = grid;
  problem.unknowns_per_point = d;
  return problem;
}

}  // namespace

LinearProblem make_problem(const ProblemSpec& spec, const RowRange* rows) {
  switch (spec.type) {
    case ProblemType::poisson: return make_poisson(spec.poisson, rows);
    case ProblemType::matrix_market: return make_matrix_market(spec.matrix_market);
    case ProblemType::elasticity: return make_elasticity(spec.elasticity, rows);
    case ProblemType::mouse: break;
  }
  throw Error("make_problem: the mouse has a builder of its own (make_mouse_problem: a right-hand side per source)");
}

}  // namespace amgsolve
