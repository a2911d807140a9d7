#pragma once
// Finite-difference Poisson problems -Laplace(u) = f on the unit square/cube, homogeneous Dirichlet
// boundary, interior unknowns only, matrix without the 1/h^2 factor:
//   5pt (2D): 4 on the diagonal, -1 for the 4 edge neighbours (h^2 times -Laplace);
//   9pt (2D): 8 on the diagonal, -1 for all 8 neighbours (the "box" Laplacian: 3 h^2 times -Laplace, so
//             b = 1 stands for f = 1 / (3 h^2));
//   7pt (3D): 6 on the diagonal, -1 for the 6 face neighbours (h^2 times -Laplace);
//   27pt (3D): 26 on the diagonal, -1 for all 26 neighbours (the HPCG operator: 9 h^2 times -Laplace).
// Every one is an irreducibly diagonally dominant M-matrix, hence SPD.
//
// Variable coefficients (5pt/7pt only): -div(K grad u) with K = diag(eps_x, eps_y, eps_z) k(x), finite
// volumes on the unknowns' cells: the coupling across a face is eps_d times the harmonic mean of the two
// cells' k (a boundary face uses the cell's own k), the diagonal is the sum of the couplings of all 2d
// faces. With k = 1 and eps = 1 this is exactly the constant-coefficient matrix above. k is either 1 or a
// checkerboard of `contrast` and 1 on cells^d cells: the classic test of AMG robustness to jumps, as
// small eps_d is to anisotropy.
//
// boundary: neumann makes the boundary insulating instead (no flux through it), the boundary half a cell
// beyond the outermost points: a neighbour outside the grid is the mirror image of the point it faces, so
// its coupling folds onto that point, and every diagonal is the sum of the row's couplings, so the rows sum
// to zero. For the 5- and 7-point stencils (and a variable coefficient) this drops the couplings across
// the boundary: the cell-centred finite-volume matrix of the pure Neumann problem, the graph Laplacian of
// the grid; the box stencils count a coupling along the boundary twice (once for its mirror), which keeps
// them second order there. Symmetric positive semidefinite, singular with the constants as its nullspace,
// and A u = b solvable only for b summing to zero (amg.nullspace, amg/nullspace.hpp).
#include <cstdint>
#include <string>
#include <vector>

#include "common/enum_names.hpp"
#include "sparse/csr.hpp"

namespace amgsolve {

enum class Stencil { p5, p9, p7, p27 };
inline constexpr EnumName<Stencil> kStencilNames[] = {
    {"5pt", Stencil::p5}, {"9pt", Stencil::p9}, {"7pt", Stencil::p7}, {"27pt", Stencil::p27}};
constexpr const auto& names_of(Stencil) { return kStencilNames; }
enum class PoissonRhs {
  ones,          // b = 1
  manufactured,  // b = A u* for u* = x(1-x) y(1-y) z(1-z) e^(x+2y+3z) (no eigenvector of A): the solution is known
};

enum class Coefficient { constant, checkerboard };

enum class Boundary { dirichlet, neumann };

struct PoissonParams {
  Stencil stencil = Stencil::p7;
  std::vector<std::int64_t> size = {128, 128, 128};  // unknowns per direction (2 or 3 entries)
  PoissonRhs rhs = PoissonRhs::ones;
  std::vector<double> anisotropy;  // eps per direction; empty: all 1
  Coefficient coefficient = Coefficient::constant;
  double contrast = 1e6;           // checkerboard: k in odd cells
  std::int64_t cells = 4;          // checkerboard cells per direction
  // Time steps of a changing coefficient (the program's problem.steps): step s of steps has the
  // checkerboard's contrast raised to s / steps, on the same pattern at every step.
  std::int64_t steps = 1;
  Boundary boundary = Boundary::dirichlet;
  bool variable_coefficients() const { return !anisotropy.empty() || coefficient != Coefficient::constant; }
};

int stencil_dimensions(Stencil s);
inline const char* to_string(Stencil s) { return name_of(s); }  // problem.stencil's value

// Exact rows and nonzeros of the assembled matrix (for memory estimates before assembly).
Offset poisson_rows(const PoissonParams& p);
Offset poisson_nnz(const PoissonParams& p);

CsrMatrix<double> poisson_matrix(const PoissonParams& p);

// Rows [first, last) of poisson_matrix(p), with the global column numbers: what one MPI rank assembles of a
// distributed problem (the whole matrix is never built).
CsrMatrix<double> poisson_matrix_rows(const PoissonParams& p, std::int64_t first, std::int64_t last);

}  // namespace amgsolve
