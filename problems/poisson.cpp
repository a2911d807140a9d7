#include "problems/poisson.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>

#include "common/error.hpp"

namespace amgsolve {
namespace {

struct Offset3 {
  int dx, dy, dz;
};

// Neighbour offsets of a stencil (centre included), in increasing order of the linear index
// i + nx (j + ny k), so that every assembled row comes out with sorted columns.
std::vector<Offset3> stencil_offsets(Stencil s) {
  std::vector<Offset3> out;
  const bool three_d = stencil_dimensions(s) == 3;
  const bool full = s == Stencil::p9 || s == Stencil::p27;
  for (int dz = three_d ? -1 : 0; dz <= (three_d ? 1 : 0); ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        const int distance = std::abs(dx) + std::abs(dy) + std::abs(dz);
        if (full || distance <= 1) out.push_back({dx, dy, dz});
      }
  return out;
}

std::array<std::int64_t, 3> grid_size(const PoissonParams& p) {
  return {p.size[0], p.size[1], p.size.size() > 2 ? p.size[2] : 1};
}

}  // namespace

int stencil_dimensions(Stencil s) { return s == Stencil::p5 || s == Stencil::p9 ? 2 : 3; }

Offset poisson_rows(const PoissonParams& p) {
  const auto n = grid_size(p);
  return n[0] * n[1] * n[2];
}

Offset poisson_nnz(const PoissonParams& p) {
  // Each offset (dx,dy,dz) contributes one entry per grid point whose neighbour is inside the grid.
  const auto n = grid_size(p);
  Offset total = 0;
  for (const Offset3& o : stencil_offsets(p.stencil))
    total += (n[0] - std::abs(o.dx)) * (n[1] - std::abs(o.dy)) * (n[2] - std::abs(o.dz));
  return total;
}

namespace {

// The grid of a Poisson problem as its assembly walks it: row r is the point (x, y, z) with
// r = x + nx (y + ny z), and the neighbour at offset o is inside the grid or across a face.
struct StencilGrid {
  std::array<std::int64_t, 3> n;
  std::vector<Offset3> offsets;  // the stencil's, centre included, in the order of their columns

  explicit StencilGrid(const PoissonParams& p) : n(grid_size(p)), offsets(stencil_offsets(p.stencil)) {}
  std::array<std::int64_t, 3> point(std::int64_t row) const { return {row % n[0], (row / n[0]) % n[1], row / (n[0] * n[1])}; }
  bool inside(const std::array<std::int64_t, 3>& q, const Offset3& o) const {
    return q[0] + o.dx >= 0 && q[0] + o.dx < n[0] && q[1] + o.dy >= 0 && q[1] + o.dy < n[1] && q[2] + o.dz >= 0 &&
           q[2] + o.dz < n[2];
  }
  Index column(std::int64_t row, const Offset3& o) const {
    return static_cast<Index>(row + o.dx + n[0] * (o.dy + n[1] * o.dz));
  }
};

bool is_centre(const Offset3& o) { return o.dx == 0 && o.dy == 0 && o.dz == 0; }

// Rows [first, last) with room for one entry per neighbour inside the grid (the centre included), the
// global column count as their width; the caller fills col and val row by row in the offsets' order.
CsrMatrix<double> stencil_rows(const StencilGrid& grid, Index first, Index last, Index columns) {
  CsrMatrix<double> A(last - first, columns);
#pragma omp parallel for schedule(static)
  for (Index local = 0; local < A.rows; ++local) {
    const auto q = grid.point(first + local);
    Offset count = 0;
    for (const Offset3& o : grid.offsets) count += grid.inside(q, o) ? 1 : 0;
    A.row_ptr[static_cast<std::size_t>(local) + 1] = count;
  }
  allocate_from_row_lengths(A);
  return A;
}

// A value per offset of a stencil (up to 27), in the offsets' order.
using StencilValues = std::array<double, 27>;

// Fills rows [first, first + A.rows) of stencil_rows' A: grid point q's neighbour at the stencil's offset
// number k gets values_of(q)[k], in the offsets' order (so the columns come out sorted).
template <class ValuesOf>
void fill_stencil_rows(const StencilGrid& grid, CsrMatrix<double>& A, Index first, const ValuesOf& values_of) {
#pragma omp parallel for schedule(static)
  for (Index local = 0; local < A.rows; ++local) {
    const std::int64_t row = first + local;
    const auto q = grid.point(row);
    const StencilValues values = values_of(q);
    Offset k = A.row_ptr[local];
    for (std::size_t at = 0; at < grid.offsets.size(); ++at) {
      if (!grid.inside(q, grid.offsets[at])) continue;
      A.col[k] = grid.column(row, grid.offsets[at]);
      A.val[k++] = values[at];
    }
  }
}

// The stencil options that a variable coefficient needs (5- or 7-point, one anisotropy per dimension).
void require_variable_coefficient_stencil(const PoissonParams& p) {
  if (p.stencil != Stencil::p5 && p.stencil != Stencil::p7)
    throw InputError(std::string("problem.anisotropy and problem.coefficient need stencil 5pt or 7pt, not ") +
                     to_string(p.stencil));
  if (!p.anisotropy.empty() && static_cast<int>(p.anisotropy.size()) != stencil_dimensions(p.stencil))
    throw InputError("problem.anisotropy has " + std::to_string(p.anisotropy.size()) + " entries but stencil " +
                     to_string(p.stencil) + " is " + std::to_string(stencil_dimensions(p.stencil)) + "D");
}

// Diffusion coefficient k of the cell of unknown (x, y, z).
double cell_coefficient(const PoissonParams& p, const std::array<std::int64_t, 3>& n, const std::array<std::int64_t, 3>& q) {
  if (p.coefficient == Coefficient::constant) return 1.0;
  auto cell = [&](std::int64_t i, std::int64_t size) { return (i * p.cells) / size; };
  const std::int64_t parity = cell(q[0], n[0]) + cell(q[1], n[1]) + cell(q[2], n[2]);
  return parity % 2 == 1 ? p.contrast : 1.0;
}

// Rows [first, last) of the variable-coefficient matrix (global column numbers): harmonic means of the
// cells' coefficients on the faces, each direction scaled by its anisotropy, the Dirichlet faces on the
// diagonal with the cell's own coefficient.
CsrMatrix<double> variable_coefficient_matrix(const PoissonParams& p, Index first, Index last) {
  const StencilGrid grid(p);
  const std::array<double, 3> eps = {p.anisotropy.size() > 0 ? p.anisotropy[0] : 1.0,
                                     p.anisotropy.size() > 1 ? p.anisotropy[1] : 1.0,
                                     p.anisotropy.size() > 2 ? p.anisotropy[2] : 1.0};
  CsrMatrix<double> A = stencil_rows(grid, first, last, static_cast<Index>(poisson_rows(p)));
#pragma omp parallel for schedule(static)
  for (Index local = 0; local < A.rows; ++local) {
    const Index row = first + local;
    const auto q = grid.point(row);
    const double k = cell_coefficient(p, grid.n, q);
    Offset at = A.row_ptr[local], centre = -1;
    double diagonal = 0.0;
    for (const Offset3& o : grid.offsets) {
      if (is_centre(o)) {
        centre = at;
        A.col[at++] = row;
        continue;
      }
      const double e = eps[o.dx != 0 ? 0 : o.dy != 0 ? 1 : 2];
      if (!grid.inside(q, o)) {  // Dirichlet face: the cell's own coefficient
        diagonal += e * k;
        continue;
      }
      const double kn = cell_coefficient(p, grid.n, {q[0] + o.dx, q[1] + o.dy, q[2] + o.dz});
      const double coupling = e * 2.0 * k * kn / (k + kn);
      diagonal += coupling;
      A.col[at] = grid.column(row, o);
      A.val[at++] = -coupling;
    }
    A.val[centre] = diagonal;
  }
  return A;
}

// a_ii = -sum_{j != i} a_ij: the boundary's couplings leave the diagonal (homogeneous Neumann for the 5- and
// 7-point stencils of a variable coefficient, where that is the mirror closure). A holds the rows from
// `first` on.
void insulate_boundary(CsrMatrix<double>& A, Index first) {
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < A.rows; ++i) {
    double couplings = 0.0;
    Offset diagonal = -1;
    for (Offset k = A.row_begin(i); k < A.row_end(i); ++k) {
      if (A.col[k] == first + i)
        diagonal = k;
      else
        couplings += A.val[k];
    }
    A.val[diagonal] = -couplings;
  }
}

// Homogeneous Neumann for the constant stencils on the cell-centred grid, whose boundary lies half a cell
// beyond the outermost points: each point outside the grid is the mirror image of the point it faces, so its
// coupling folds onto that point (q + o clamped to the grid). For the 5- and 7-point stencils that point is
// the row's own, and the coupling just leaves the diagonal; for the 9- and 27-point box stencils a coupling
// along the boundary is counted once per offset that folds onto it (twice beside a face). Dropping those
// (as insulate_boundary does) leaves the box stencils' boundary rows first-order accurate; folded, the
// discretisation is second order (tests/test_problems.cpp). Rows sum to zero, and the matrix stays symmetric
// (a coupling's count depends on both ends alike).
CsrMatrix<double> mirrored_neumann_matrix(const PoissonParams& p, Index first, Index last) {
  const StencilGrid grid(p);
  CsrMatrix<double> A = stencil_rows(grid, first, last, static_cast<Index>(poisson_rows(p)));
  const auto index_of = [&grid](const Offset3& o) {
    for (std::size_t k = 0; k < grid.offsets.size(); ++k)
      if (grid.offsets[k].dx == o.dx && grid.offsets[k].dy == o.dy && grid.offsets[k].dz == o.dz) return k;
    return grid.offsets.size();  // not reached: a clamped offset of a stencil's is one of its offsets
  };
  const std::size_t centre = index_of({0, 0, 0});
  const auto clamp = [](std::int64_t at, int d, std::int64_t n) { return at + d < 0 || at + d >= n ? 0 : d; };
  // Per offset of the stencil: minus how many offsets fold onto it from point q; the centre, their count.
  fill_stencil_rows(grid, A, first, [&](const std::array<std::int64_t, 3>& q) {
    StencilValues values{};
    for (const Offset3& o : grid.offsets) {
      const Offset3 c{clamp(q[0], o.dx, grid.n[0]), clamp(q[1], o.dy, grid.n[1]), clamp(q[2], o.dz, grid.n[2])};
      if (is_centre(o) || is_centre(c)) continue;  // the centre, or folded onto it: no coupling
      values[index_of(c)] -= 1.0;
      values[centre] += 1.0;
    }
    return values;
  });
  return A;
}

CsrMatrix<double> dirichlet_matrix(const PoissonParams& p, Index first, Index last) {
  if (p.variable_coefficients()) {
    require_variable_coefficient_stencil(p);
    return variable_coefficient_matrix(p, first, last);
  }
  const StencilGrid grid(p);
  const double centre = static_cast<double>(grid.offsets.size() - 1);
  CsrMatrix<double> A = stencil_rows(grid, first, last, static_cast<Index>(poisson_rows(p)));
  StencilValues values{};
  for (std::size_t at = 0; at < grid.offsets.size(); ++at) values[at] = is_centre(grid.offsets[at]) ? centre : -1.0;
  fill_stencil_rows(grid, A, first, [&values](const std::array<std::int64_t, 3>&) { return values; });
  return A;
}

}  // namespace

CsrMatrix<double> poisson_matrix(const PoissonParams& p) {
  return poisson_matrix_rows(p, 0, poisson_rows(p));
}

CsrMatrix<double> poisson_matrix_rows(const PoissonParams& p, std::int64_t first, std::int64_t last) {
  if (first < 0 || last < first || last > poisson_rows(p))
    throw Error("poisson_matrix_rows: rows [" + std::to_string(first) + ", " + std::to_string(last) +
                ") of a matrix of " + std::to_string(poisson_rows(p)));
  if (p.boundary == Boundary::neumann && !p.variable_coefficients())
    return mirrored_neumann_matrix(p, static_cast<Index>(first), static_cast<Index>(last));
  CsrMatrix<double> A = dirichlet_matrix(p, static_cast<Index>(first), static_cast<Index>(last));
  if (p.boundary == Boundary::neumann) insulate_boundary(A, static_cast<Index>(first));
  return A;
}

}  // namespace amgsolve
