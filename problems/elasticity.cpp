#include "problems/elasticity.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

#include "common/error.hpp"
#include "common/memory.hpp"

namespace amgsolve {
namespace {

using Point = std::array<std::int64_t, 3>;  // a grid point (i, j, k), i = 0 on the clamped face; k = 0 in 2D

// The cells and the free nodes' numbering: x fastest, from the first column off the clamped face.
struct Body {
  explicit Body(const ElasticityParams& p) : d(p.dimensions()) {
    if (d != 2 && d != 3) throw InputError("elasticity: 2 or 3 cell counts are needed, got " + std::to_string(d));
    for (int a = 0; a < d; ++a) {
      if (p.cells[a] < 1) throw InputError("elasticity: a cell count is below 1");
      cells[a] = p.cells[a];
    }
    h = 1.0 / static_cast<double>(cells[1]);
    // The unknowns, counted in double: a box of 2^31 cells a side would wrap in integers.
    const double unknowns = d * static_cast<double>(cells[0]) * static_cast<double>(points(1)) * static_cast<double>(points(2));
    if (unknowns > 2147483647.0)
      throw InputError("elasticity: the box gives " + format_number(unknowns) + " unknowns, more than the 32-bit "
                       "index limit of 2147483647");
  }
  std::int64_t points(int axis) const { return cells[axis] + 1; }  // 1 along an axis beyond d (cells 0)
  std::int64_t nodes() const { return cells[0] * points(1) * points(2); }
  std::int64_t node(const Point& q) const { return (q[0] - 1) + cells[0] * (q[1] + points(1) * q[2]); }
  Point point(std::int64_t n) const {
    const std::int64_t i = n % cells[0], rest = n / cells[0];
    return {i + 1, rest % points(1), rest / points(1)};
  }
  // An Error naming `what` unless [first_node, last_node) are free nodes (a rank's part, or all of them).
  void require_nodes(const char* what, std::int64_t first_node, std::int64_t last_node) const {
    if (first_node < 0 || last_node < first_node || last_node > nodes())
      throw Error(std::string(what) + ": nodes [" + std::to_string(first_node) + ", " + std::to_string(last_node) +
                  ") are not among the " + std::to_string(nodes()) + " free nodes");
  }
  int d;
  double h = 1;
  Point cells = {0, 0, 0};
};

// One of a cell's Kuhn simplices: its corners (offsets from the cell's first corner), volume and the element
// matrix's d x d blocks, blocks[a][b] coupling corner a's displacement equation to corner b's displacement.
struct Simplex {
  std::array<Point, 4> corners{};
  double volume = 0;
  double blocks[4][4][3][3] = {};
};

// The d! simplices of the cell [0, h]^d: for each order of the axes, the path from corner 0 along them. Corner
// m's shape function is x_{o(m-1)} - x_{o(m)} (in units of h, with x_{o(-1)} = 1 and x_{o(d)} = 0).
std::vector<Simplex> kuhn_simplices(int d, double h, double lambda, double mu) {
  std::vector<Simplex> simplices;
  std::array<int, 3> order = {0, 1, 2};
  double factorial = 1;
  for (int m = 2; m <= d; ++m) factorial *= m;
  do {
    Simplex s;
    double gradient[4][3] = {};
    for (int m = 0; m < d; ++m) {
      s.corners[m + 1] = s.corners[m];
      ++s.corners[m + 1][order[m]];
      gradient[m][order[m]] -= 1 / h;  // the shape function of corner m falls along axis o(m)
      gradient[m + 1][order[m]] += 1 / h;
    }
    s.volume = std::pow(h, d) / factorial;
    for (int a = 0; a <= d; ++a)
      for (int b = 0; b <= d; ++b) {
        double dot = 0;
        for (int r = 0; r < d; ++r) dot += gradient[a][r] * gradient[b][r];
        for (int r = 0; r < d; ++r)
          for (int c = 0; c < d; ++c)
            s.blocks[a][b][r][c] = s.volume * (lambda * gradient[a][r] * gradient[b][c] +
                                               mu * gradient[a][c] * gradient[b][r] + (r == c ? mu * dot : 0.0));
      }
    simplices.push_back(s);
  } while (std::next_permutation(order.begin(), order.begin() + d));
  return simplices;
}

// The 3^d neighbours of a node, x fastest: the order of their numbers, so of a row's columns.
constexpr int kSlots = 27;
int slot_of(const Point& offset) { return (offset[0] + 1) + 3 * ((offset[1] + 1) + 3 * (offset[2] + 1)); }

// A node's row blocks: for every element around it, the blocks coupling it to the element's free corners,
// summed in a fixed order (cells, then simplices, then corners).
struct NodeRows {
  double blocks[kSlots][3][3] = {};
  bool touched[kSlots] = {};
};

// The cells around grid point p (those of the body that have it as a corner): [low, high] per axis.
std::array<Point, 2> cells_around(const Body& body, const Point& p) {
  Point low{}, high{};
  for (int a = 0; a < 3; ++a) {
    low[a] = a < body.d ? std::max<std::int64_t>(p[a] - 1, 0) : 0;
    high[a] = a < body.d ? std::min(p[a], body.cells[a] - 1) : 0;
  }
  return {low, high};
}

NodeRows node_rows(const Body& body, const std::vector<Simplex>& simplices, const Point& p) {
  NodeRows rows;
  const int d = body.d;
  const auto [low, high] = cells_around(body, p);
  for (std::int64_t ck = low[2]; ck <= high[2]; ++ck)
    for (std::int64_t cj = low[1]; cj <= high[1]; ++cj)
      for (std::int64_t ci = low[0]; ci <= high[0]; ++ci)
        for (const Simplex& s : simplices)
          for (int a = 0; a <= d; ++a) {
            const Point corner = {ci + s.corners[a][0], cj + s.corners[a][1], ck + s.corners[a][2]};
            if (corner != p) continue;
            for (int b = 0; b <= d; ++b) {
              const Point q = {ci + s.corners[b][0], cj + s.corners[b][1], ck + s.corners[b][2]};
              if (q[0] == 0) continue;  // clamped: not an unknown
              const int slot = slot_of({q[0] - p[0], q[1] - p[1], q[2] - p[2]});
              rows.touched[slot] = true;
              for (int r = 0; r < d; ++r)
                for (int c = 0; c < d; ++c) rows.blocks[slot][r][c] += s.blocks[a][b][r][c];
            }
          }
  return rows;
}

// How many of a cell's simplices have each of its corners, numbered by their offset (x + 2 y + 4 z): every
// simplex has the first and the opposite corner, the others fewer.
std::array<int, 8> simplices_at_corner(const std::vector<Simplex>& simplices, int d) {
  std::array<int, 8> count{};
  for (const Simplex& s : simplices)
    for (int a = 0; a <= d; ++a) ++count[s.corners[a][0] + 2 * s.corners[a][1] + 4 * s.corners[a][2]];
  return count;
}

// The free node at slot's offset from p (a neighbour an element reached: inside the body).
std::int64_t neighbour(const Body& body, const Point& p, int slot) {
  const Point q = {p[0] + slot % 3 - 1, p[1] + (slot / 3) % 3 - 1, p[2] + slot / 9 - 1};
  return body.node(q);
}

}  // namespace

std::int64_t elasticity_nodes(const ElasticityParams& p) { return Body(p).nodes(); }
std::int64_t elasticity_rows(const ElasticityParams& p) { return p.dimensions() * elasticity_nodes(p); }
namespace {
// A node of Kuhn's triangulation has 6 neighbours in 2D, 14 in 3D: rows of 7 d or 15 d entries at most.
int row_entries_bound(int d) { return d * (d == 2 ? 7 : 15); }
}  // namespace

std::int64_t elasticity_nnz_bound(const ElasticityParams& p) {
  return elasticity_rows(p) * row_entries_bound(p.dimensions());
}

std::uint64_t elasticity_matrix_bytes(const ElasticityParams& p, std::int64_t nodes) {
  const double rows = static_cast<double>(p.dimensions()) * static_cast<double>(nodes);
  return static_cast<std::uint64_t>(12.0 * rows * row_entries_bound(p.dimensions()) + 8.0 * rows);
}

std::uint64_t elasticity_near_nullspace_bytes(const ElasticityParams& p, std::int64_t nodes) {
  const double rows = static_cast<double>(nodes) * p.dimensions(), modes = p.dimensions() == 2 ? 3 : 6;
  return static_cast<std::uint64_t>(8.0 * rows * (modes + 1));
}

std::uint64_t elasticity_near_nullspace_bytes(const ElasticityParams& p) {
  return elasticity_near_nullspace_bytes(p, elasticity_rows(p) / p.dimensions());
}

Vector<double> elasticity_coordinates(const ElasticityParams& p, std::int64_t first_node, std::int64_t last_node) {
  const Body body(p);
  body.require_nodes("elasticity_coordinates", first_node, last_node);
  Vector<double> xyz(static_cast<std::size_t>((last_node - first_node) * body.d));
  for (std::int64_t n = first_node; n < last_node; ++n) {
    const Point q = body.point(n);
    for (int a = 0; a < body.d; ++a)
      xyz[static_cast<std::size_t>((n - first_node) * body.d + a)] = static_cast<double>(q[a]) * body.h;
  }
  return xyz;
}

Vector<double> elasticity_coordinates(const ElasticityParams& p) {
  return elasticity_coordinates(p, 0, Body(p).nodes());
}

namespace {

std::vector<Simplex> simplices_of(const ElasticityParams& p, const Body& body) {
  const double E = p.young_modulus, nu = p.poisson_ratio;
  if (!(E > 0 && E <= kMaxYoungModulus))
    throw InputError("elasticity: Young's modulus must be > 0 and <= " + format_number(kMaxYoungModulus) + ", got " +
                     format_number(E));
  if (!(nu >= 0 && nu <= kMaxPoissonRatio))
    throw InputError("elasticity: the Poisson ratio must be >= 0 and <= " + format_number(kMaxPoissonRatio) +
                     " (at 0.5 the material is incompressible), got " + format_number(nu));
  return kuhn_simplices(body.d, body.h, E * nu / ((1 + nu) * (1 - 2 * nu)), E / (2 * (1 + nu)));
}

// Whether a row's entry is stored: the diagonal always, another one where the elements leave it non-zero.
bool stored(int slot, int r, int c, double value) { return value != 0.0 || (slot == 13 && r == c); }

}  // namespace

CsrMatrix<double> elasticity_matrix_rows(const ElasticityParams& p, std::int64_t first_node, std::int64_t last_node) {
  const Body body(p);
  const std::vector<Simplex> simplices = simplices_of(p, body);
  body.require_nodes("elasticity_matrix_rows", first_node, last_node);
  const std::int64_t nodes = last_node - first_node;
  require_memory(elasticity_matrix_bytes(p, nodes), "the elasticity problem's matrix");
  const int d = body.d;
  // Within Index: Body checked the whole.
  CsrMatrix<double> A(static_cast<Index>(d * nodes), static_cast<Index>(d * body.nodes()));
  // Count each row's entries, then fill them: the same blocks, summed twice in the same order.
#pragma omp parallel for schedule(static)
  for (std::int64_t n = 0; n < nodes; ++n) {
    const NodeRows node = node_rows(body, simplices, body.point(first_node + n));
    for (int r = 0; r < d; ++r) {
      Offset count = 0;
      for (int slot = 0; slot < kSlots; ++slot)
        if (node.touched[slot])
          for (int c = 0; c < d; ++c) count += stored(slot, r, c, node.blocks[slot][r][c]);
      A.row_ptr[static_cast<std::size_t>(d * n + r + 1)] = count;
    }
  }
  std::partial_sum(A.row_ptr.begin(), A.row_ptr.end(), A.row_ptr.begin());
  A.col.resize(static_cast<std::size_t>(A.row_ptr.back()));
  A.val.resize(static_cast<std::size_t>(A.row_ptr.back()));
#pragma omp parallel for schedule(static)
  for (std::int64_t n = 0; n < nodes; ++n) {
    const Point point = body.point(first_node + n);
    const NodeRows node = node_rows(body, simplices, point);
    for (int r = 0; r < d; ++r) {
      Offset at = A.row_ptr[static_cast<std::size_t>(d * n + r)];
      for (int slot = 0; slot < kSlots; ++slot) {
        if (!node.touched[slot]) continue;
        const std::int64_t q = neighbour(body, point, slot);
        for (int c = 0; c < d; ++c)
          if (stored(slot, r, c, node.blocks[slot][r][c])) {
            A.col[static_cast<std::size_t>(at)] = static_cast<Index>(d * q + c);
            A.val[static_cast<std::size_t>(at++)] = node.blocks[slot][r][c];
          }
      }
    }
  }
  return A;
}

CsrMatrix<double> elasticity_matrix(const ElasticityParams& p) { return elasticity_matrix_rows(p, 0, elasticity_nodes(p)); }

Vector<double> elasticity_load(const ElasticityParams& p) { return elasticity_load(p, 0, Body(p).nodes()); }

Vector<double> elasticity_load(const ElasticityParams& p, std::int64_t first_node, std::int64_t last_node) {
  const Body body(p);
  body.require_nodes("elasticity_load", first_node, last_node);
  const std::vector<Simplex> simplices = simplices_of(p, body);
  const std::array<int, 8> at_corner = simplices_at_corner(simplices, body.d);
  const double share = simplices.front().volume / (body.d + 1);  // an element's weight at each corner
  Vector<double> b(static_cast<std::size_t>(body.d * (last_node - first_node)), 0.0);
#pragma omp parallel for schedule(static)
  for (std::int64_t n = first_node; n < last_node; ++n) {
    const Point point = body.point(n);
    const auto [low, high] = cells_around(body, point);
    int elements = 0;
    for (std::int64_t ck = low[2]; ck <= high[2]; ++ck)
      for (std::int64_t cj = low[1]; cj <= high[1]; ++cj)
        for (std::int64_t ci = low[0]; ci <= high[0]; ++ci)
          elements += at_corner[(point[0] - ci) + 2 * (point[1] - cj) + 4 * (point[2] - ck)];
    b[static_cast<std::size_t>(body.d * (n - first_node) + 1)] = -share * elements;
  }
  return b;
}

}  // namespace amgsolve
