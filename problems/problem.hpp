#pragma once
// A linear problem ready for the solver: the SPD matrix, the right-hand side, and what the output
// stage needs to present the solution (a grid for VTK, the exact solution when it is known).
//
// Adding a problem family: write problems/<name>.{hpp,cpp} with a params struct and a function that
// returns LinearProblem, add the params to ProblemSpec and a branch in make_problem(), and declare its
// keys in config/schema.cpp.
#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/enum_names.hpp"
#include "problems/elasticity.hpp"
#include "problems/matrix_market_problem.hpp"
#include "problems/mouse.hpp"
#include "problems/poisson.hpp"
#include "problems/row_range.hpp"
#include "sparse/csr.hpp"

namespace amgsolve {

// Structured grid of unknowns, x fastest: unknown (i, j, k) has index i + nx (j + ny k).
struct Grid {
  int dims = 3;
  std::array<Index, 3> size = {1, 1, 1};
  std::array<double, 3> origin = {0, 0, 0};
  std::array<double, 3> spacing = {1, 1, 1};
  std::int64_t points() const { return std::int64_t{size[0]} * size[1] * size[2]; }
};

struct LinearProblem {
  std::string description;                     // one line for the log, e.g. "poisson 7pt 128x128x128"
  std::shared_ptr<const CsrMatrix<double>> A;  // the matrix, or with global_rows this rank's rows of it
  // Set when A holds only rows [first_row, first_row + A->rows) of a global_rows x global_rows matrix (global
  // column numbers): a distributed problem assembled by each rank, whose b, more_b, x0 and exact are those
  // rows of the vectors too.
  std::optional<std::int64_t> global_rows;
  std::int64_t first_row = 0;
  Vector<double> b;
  // problem.rhs's further columns (load cases), each solved after b with the same hierarchy.
  std::vector<Vector<double>> more_b;
  // Where the solves start (problem.x0): one vector per right-hand side, b's first; none: from zero.
  std::vector<Vector<double>> x0;
  std::optional<Vector<double>> exact;         // known solution (manufactured right-hand sides)
  std::optional<Grid> grid;                    // present for grid problems (VTK output)
  int unknowns_per_point = 1;                  // a system's unknowns at each grid point, interleaved (elasticity)
};

enum class ProblemType { poisson, matrix_market, mouse, elasticity };
inline constexpr EnumName<ProblemType> kProblemTypeNames[] = {{"poisson", ProblemType::poisson},
                                                              {"matrix_market", ProblemType::matrix_market},
                                                              {"mouse", ProblemType::mouse},
                                                              {"elasticity", ProblemType::elasticity}};
constexpr const auto& names_of(ProblemType) { return kProblemTypeNames; }

struct ProblemSpec {
  ProblemType type = ProblemType::poisson;
  PoissonParams poisson;
  MatrixMarketParams matrix_market;
  ElasticityParams elasticity;
  MouseParams mouse;  // built by make_mouse_problem (many right-hand sides), not make_problem
};

// Rough peak memory of assembling and solving the problem (matrix, hierarchy, vectors), checked
// against the available memory before anything large is allocated.
std::uint64_t estimated_solve_bytes(Offset rows, Offset nnz);
// The same for a matrix read from a file, with the reader's triplets (16 bytes an entry) on top.
std::uint64_t estimated_read_and_solve_bytes(Offset rows, Offset nnz);

// A Matrix Market problem's description and right-hand sides for a matrix of `rows` rows: what make_problem
// uses, and the program when the ranks read the matrix by rows.
std::string matrix_market_description(const MatrixMarketParams& p, std::int64_t rows);
// Their count from problem.rhs's header (1 without a file), checked against the matrix's rows and
// problem.x0's: before any entries are read, so that a wrong or enormous size costs nothing.
std::int64_t matrix_market_rhs_columns(const MatrixMarketParams& p, std::int64_t rows);
// The bytes `columns` right-hand sides of `rows` and their solutions take, on the rank `reading` the files too.
std::uint64_t right_hand_side_bytes(const MatrixMarketParams& p, std::int64_t rows, std::int64_t columns,
                                    bool reading);
// problem.rhs's columns (ones without it) into b and more_b, and problem.x0's into x0, for a matrix of `rows`
// rows and `columns` right-hand sides (matrix_market_rhs_columns); or room for them, to be filled (the ranks
// that do not read the files).
void read_right_hand_sides(const MatrixMarketParams& p, std::int64_t rows, std::int64_t columns, LinearProblem& problem);
void allocate_right_hand_sides(const MatrixMarketParams& p, std::int64_t rows, std::int64_t columns,
                               LinearProblem& problem);

// At most this many right-hand sides in one problem.rhs file (load cases solved one after another).
inline constexpr Index kMaxRightHandSides = 10000;

// rows: assemble only those rows of the matrix where the problem can (Poisson; elasticity, rows of whole
// nodes); others ignore it and build the whole matrix (global_rows stays empty).
LinearProblem make_problem(const ProblemSpec& spec, const RowRange* rows = nullptr);

}  // namespace amgsolve
