#include "amg/near_nullspace.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "common/error.hpp"
#include "common/reduction_block.hpp"
#include "common/unit_scale.hpp"

namespace amgsolve {

std::string near_nullspace_problem(Index rows, int block_size, const NearNullspaceVectors& given) {
  if (block_size < 1) return "amg.block_size must be >= 1, got " + std::to_string(block_size);
  if (rows % block_size != 0)
    return "amg.block_size is " + std::to_string(block_size) + ", but the matrix has " + std::to_string(rows) +
           " rows, no multiple of it (a node's unknowns are consecutive rows)";
  if (given.count <= 0) return "";
  if (given.count > kMaxNearNullspaceVectors)
    return "the near-nullspace has " + std::to_string(given.count) + " vectors, more than " +
           std::to_string(kMaxNearNullspaceVectors);
  const std::size_t expected = static_cast<std::size_t>(rows) * static_cast<std::size_t>(given.count);
  if (!given.values || given.values->size() != expected)
    return "the near-nullspace has " + std::to_string(given.values ? given.values->size() : 0) +
           " values, where the matrix's " + std::to_string(rows) + " rows and its " + std::to_string(given.count) +
           " vectors need " + std::to_string(expected);
  for (std::size_t k = 0; k < expected; ++k)
    if (!std::isfinite((*given.values)[k]))
      return "the near-nullspace's vector " + std::to_string(k % given.count + 1) + " has a value that is not finite "
             "in row " + std::to_string(k / given.count + 1);
  return "";
}

Array<Index> regular_reduction_blocks(Index nodes) {
  Array<Index> blocks = {0};
  for (std::int64_t first = kReductionBlock; first < nodes; first += kReductionBlock) blocks.push_back(static_cast<Index>(first));
  if (nodes > 0) blocks.push_back(nodes);
  return blocks;
}

std::vector<double> largest_entries(const Vector<double>& values, int count) {
  std::vector<double> largest(static_cast<std::size_t>(std::max(count, 0)), 0.0);
  if (largest.empty()) return largest;
  for (std::size_t e = 0; e < values.size(); ++e)
    largest[e % largest.size()] = std::max(largest[e % largest.size()], std::abs(values[e]));
  return largest;
}

std::string zero_vector_problem(const std::vector<double>& largest) {
  const auto zero = std::find(largest.begin(), largest.end(), 0.0);
  if (zero == largest.end()) return "";
  return "the near-nullspace's vector " + std::to_string(zero - largest.begin() + 1) + " is zero on every row";
}

NearNullspace finest_near_nullspace(Index rows, int block_size, const NearNullspaceVectors& given,
                                    const std::vector<double>* largest) {
  if (const std::string problem = near_nullspace_problem(rows, block_size, given); !problem.empty())
    throw InputError(problem);
  NearNullspace B;
  B.node_ptr.resize(static_cast<std::size_t>(rows / block_size) + 1);
  for (std::size_t n = 0; n < B.node_ptr.size(); ++n) B.node_ptr[n] = static_cast<Index>(n) * block_size;
  B.reduction_blocks = regular_reduction_blocks(B.nodes());
  if (given.count <= 0) {  // the unit vector of each component
    B.vectors = block_size;
    B.values.assign(static_cast<std::size_t>(rows) * block_size, 0.0);
    for (Index i = 0; i < rows; ++i) B.values[static_cast<std::size_t>(i) * block_size + i % block_size] = 1.0;
    return B;
  }
  B.vectors = given.count;
  B.values = *given.values;
  std::vector<double> scale = largest ? *largest : largest_entries(B.values, B.vectors);
  for (double& s : scale) s = unit_scale(s);
  for (std::size_t e = 0; e < B.values.size(); ++e) B.values[e] *= scale[e % scale.size()];
  return B;
}

std::string system_support_problem(BackendKind kind) {
  if (kind == BackendKind::cpu) return "";
  return "amg.block_size and a near-nullspace (a system's setup) need the cpu backend (of one process or of each "
         "MPI rank); not yet the " + std::string(to_string(kind)) + " backend";
}

void require_system_nullspace_choice(NullspaceChoice nullspace) {
  if (nullspace == NullspaceChoice::constant)
    throw InputError("amg.nullspace constant is a scalar problem's: a system's nullspace (amg.block_size or a "
                     "near-nullspace) is found among its near-nullspace vectors: use auto or near_nullspace");
}

int require_rigid_body_input(const Vector<double>& coordinates, int dimension, int& block_size) {
  if (dimension != 2 && dimension != 3)
    throw InputError("rigid-body modes need coordinates in 2 or 3 dimensions, not " + std::to_string(dimension));
  const int rotations = dimension == 2 ? 1 : 3;
  if (block_size == 0) block_size = dimension;
  if (block_size != dimension && block_size != dimension + rotations)
    throw InputError("rigid-body modes in " + std::to_string(dimension) + " dimensions are for nodes of " +
                     std::to_string(dimension) + " unknowns (displacements) or " + std::to_string(dimension + rotations) +
                     " (and rotations), not " + std::to_string(block_size));
  if (coordinates.size() % static_cast<std::size_t>(dimension) != 0)
    throw InputError("rigid-body modes: " + std::to_string(coordinates.size()) + " coordinates are no whole number of " +
                     std::to_string(dimension) + "-dimensional points");
  for (double c : coordinates)
    if (!std::isfinite(c)) throw InputError("rigid-body modes: a coordinate is not finite");
  return rotations;
}

std::array<ExactSum, 3> coordinate_sums(const Vector<double>& coordinates, int dimension) {
  if (dimension != 2 && dimension != 3)
    throw InputError("coordinates in 2 or 3 dimensions are needed, not " + std::to_string(dimension));
  std::array<ExactSum, 3> sums;
  const auto d = static_cast<std::size_t>(dimension);
  for (std::size_t k = 0; k < coordinates.size(); ++k) sums[k % d].add(coordinates[k]);
  return sums;
}

std::array<double, 3> centroid(const std::array<double, 3>& sums, std::int64_t nodes) {
  const auto n = static_cast<double>(nodes);
  return {sums[0] / n, sums[1] / n, sums[2] / n};
}

namespace {

// The modes of checked input (require_rigid_body_input) about `centre`.
NearNullspaceVectors modes_about(const Vector<double>& coordinates, int dimension, int block_size, int rotations,
                                 const std::array<double, 3>& centre) {
  const std::size_t nodes = coordinates.size() / static_cast<std::size_t>(dimension);
  const int modes = dimension + rotations;
  const std::size_t block = static_cast<std::size_t>(block_size);
  auto values = std::make_shared<Vector<double>>(nodes * block * modes, 0.0);
  for (std::size_t n = 0; n < nodes; ++n) {
    const double x = coordinates[n * dimension] - centre[0], y = coordinates[n * dimension + 1] - centre[1];
    double* ux = values->data() + n * block * modes;  // the node's rows: ux, uy[, uz][, rotations]
    double* uy = ux + modes;
    ux[0] = 1;
    uy[1] = 1;
    if (dimension == 2) {  // the rotation (-y, x), which turns a rotational unknown theta_z by 1
      ux[2] = -y;
      uy[2] = x;
      if (block_size == 3) uy[modes + 2] = 1;
      continue;
    }
    const double z = coordinates[n * dimension + 2] - centre[2];
    double* uz = uy + modes;
    uz[2] = 1;
    // about x: (0, -z, y); about y: (z, 0, -x); about z: (-y, x, 0)
    uy[3] = -z, uz[3] = y;
    ux[4] = z, uz[4] = -x;
    ux[5] = -y, uy[5] = x;
    if (block_size == 6)  // theta_x, theta_y, theta_z turned by the rotation about their own axis
      for (int axis = 0; axis < 3; ++axis) uz[(axis + 1) * modes + 3 + axis] = 1;
  }
  return {modes, std::move(values)};
}

}  // namespace

NearNullspaceVectors rigid_body_modes(const Vector<double>& coordinates, int dimension, int block_size) {
  const int rotations = require_rigid_body_input(coordinates, dimension, block_size);
  if (coordinates.empty()) throw InputError("rigid-body modes: no points given");
  // About the centroid, so that the rotations are not nearly translations far from the origin.
  const std::array<ExactSum, 3> sums = coordinate_sums(coordinates, dimension);
  const auto nodes = static_cast<std::int64_t>(coordinates.size() / static_cast<std::size_t>(dimension));
  return modes_about(coordinates, dimension, block_size, rotations,
                     centroid({sums[0].value(), sums[1].value(), sums[2].value()}, nodes));
}

NearNullspaceVectors rigid_body_modes(const Vector<double>& coordinates, int dimension, int block_size,
                                      const std::array<double, 3>& centre) {
  const int rotations = require_rigid_body_input(coordinates, dimension, block_size);
  return modes_about(coordinates, dimension, block_size, rotations, centre);
}

namespace {

Array<Index> node_of_rows(const Array<Index>& node_ptr) {
  Array<Index> node(static_cast<std::size_t>(node_ptr.back()));
  const Index nodes = static_cast<Index>(node_ptr.size()) - 1;
#pragma omp parallel for schedule(static)
  for (Index n = 0; n < nodes; ++n)
    for (Index i = node_ptr[n]; i < node_ptr[n + 1]; ++i) node[i] = n;
  return node;
}

// The amalgamated matrix of a level's (a rank's) own nodes: entry (I, J) the Frobenius norm of A's block of
// nodes I and J, over A's pattern, each row's entries in the nodes' global order (its squares summed in A's).
template <class Value>
CsrMatrix<double> block_norms(const CsrMatrix<Value>& A, const NodeColumns& nodes) {
  const Array<Index>& node_ptr = nodes.node_ptr;
  const Array<Index>& node_of = nodes.node_of_column;
  const Index own = static_cast<Index>(node_ptr.size()) - 1, all = nodes.nodes_with_ghosts;
  const auto before = [&](Index I, Index J) {
    return nodes.global_node.empty() ? I < J : nodes.global_node[static_cast<std::size_t>(I)] < nodes.global_node[static_cast<std::size_t>(J)];
  };
  CsrMatrix<double> M(own, all);
#pragma omp parallel
  {
    std::vector<Index> marker(static_cast<std::size_t>(all), -1);
#pragma omp for schedule(static)
    for (Index I = 0; I < own; ++I) {
      Offset length = 0;
      for (Index i = node_ptr[I]; i < node_ptr[I + 1]; ++i)
        for (Offset k = A.row_begin(i); k < A.row_end(i); ++k) {
          const Index J = node_of[A.col[k]];
          length += marker[J] != I;
          marker[J] = I;
        }
      M.row_ptr[static_cast<std::size_t>(I) + 1] = length;
    }
  }
  allocate_from_row_lengths(M);
#pragma omp parallel
  {
    std::vector<Index> marker(static_cast<std::size_t>(all), -1);
    std::vector<double> squares(static_cast<std::size_t>(all), 0.0);
#pragma omp for schedule(static)
    for (Index I = 0; I < own; ++I) {
      Index* columns = M.col.data() + M.row_begin(I);
      Index length = 0;
      for (Index i = node_ptr[I]; i < node_ptr[I + 1]; ++i)
        for (Offset k = A.row_begin(i); k < A.row_end(i); ++k) {
          const Index J = node_of[A.col[k]];
          if (marker[J] != I) columns[length++] = J;
          marker[J] = I;
          squares[J] += static_cast<double>(A.val[k]) * static_cast<double>(A.val[k]);
        }
      std::sort(columns, columns + length, before);
      for (Index n = 0; n < length; ++n) {
        M.val[M.row_begin(I) + n] = std::sqrt(squares[columns[n]]);
        squares[columns[n]] = 0.0;
      }
    }
  }
  return M;
}

}  // namespace

template <class Value>
Vector<double> diagonal_block_norms(const CsrMatrix<Value>& A, const Array<Index>& node_ptr,
                                    const Array<Index>& node_of_column) {
  const Index nodes = static_cast<Index>(node_ptr.size()) - 1;
  Vector<double> norms(static_cast<std::size_t>(nodes));
#pragma omp parallel for schedule(static)
  for (Index I = 0; I < nodes; ++I) {
    double squares = 0.0;  // in A's order, as block_norms sums them
    for (Index i = node_ptr[I]; i < node_ptr[I + 1]; ++i)
      for (Offset k = A.row_begin(i); k < A.row_end(i); ++k)
        if (node_of_column[A.col[k]] == I) squares += static_cast<double>(A.val[k]) * static_cast<double>(A.val[k]);
    norms[I] = std::sqrt(squares);
  }
  return norms;
}

template <class Value>
NodeStrength node_strength(const CsrMatrix<Value>& A, const Array<Index>& node_ptr, double theta) {
  if (node_ptr.empty() || node_ptr.back() != A.rows)
    throw Error("internal: node_strength: the nodes cover " + std::to_string(node_ptr.empty() ? 0 : node_ptr.back()) +
                " rows of " + std::to_string(A.rows));
  NodeColumns nodes;
  nodes.node_ptr = node_ptr;
  nodes.node_of_column = node_of_rows(node_ptr);
  nodes.nodes_with_ghosts = static_cast<Index>(node_ptr.size()) - 1;
  nodes.node_norms = diagonal_block_norms(A, node_ptr, nodes.node_of_column);
  return node_strength(A, nodes, theta);
}

template <class Value>
NodeStrength node_strength(const CsrMatrix<Value>& A, const NodeColumns& nodes, double theta) {
  const Array<Index>& node_ptr = nodes.node_ptr;
  const Array<Index>& node_of = nodes.node_of_column;
  const CsrMatrix<double> M = block_norms(A, nodes);
  NodeStrength s;
  Strength between_nodes = strength_of_connection(M, theta, nodes.node_norms);
  s.nodes = std::move(between_nodes.graph);
  // An entry of A is strong where its nodes' block is (a node's own block included).
  Strength& rows = s.rows;
  rows.keep.resize(static_cast<std::size_t>(A.nnz()));
  StrengthGraph& g = rows.graph;
  g.nodes = A.rows;
  g.row_ptr.assign(static_cast<std::size_t>(A.rows) + 1, 0);
  // The row graph names a row's strong off-diagonal entries, its own node's too, but none of an isolated
  // node's rows (no strong neighbour node).
  const auto in_row_graph = [&](Index i, Offset k) {
    const Index I = node_of[i];
    return rows.keep[k] && A.col[k] != i && !(s.nodes.degree(I) == 0 && node_of[A.col[k]] == I);
  };
  Offset weak = 0;
#pragma omp parallel reduction(+ : weak)
  {
    std::vector<Index> strong_of(static_cast<std::size_t>(nodes.nodes_with_ghosts), -1);
#pragma omp for schedule(static)
    for (Index I = 0; I < M.rows; ++I) {
      for (Offset k = M.row_begin(I); k < M.row_end(I); ++k)
        if (between_nodes.keep[k]) strong_of[M.col[k]] = I;
      for (Index i = node_ptr[I]; i < node_ptr[I + 1]; ++i) {
        Offset neighbours = 0;
        for (Offset k = A.row_begin(i); k < A.row_end(i); ++k) {
          const bool strong = strong_of[node_of[A.col[k]]] == I;
          rows.keep[k] = strong;
          neighbours += in_row_graph(i, k);
          weak += !strong;
        }
        g.row_ptr[static_cast<std::size_t>(i) + 1] = neighbours;
      }
    }
  }
  for (Index i = 0; i < A.rows; ++i) g.row_ptr[i + 1] += g.row_ptr[i];
  g.adj.resize(static_cast<std::size_t>(g.row_ptr.back()));
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < A.rows; ++i) {
    Offset out = g.row_ptr[i];
    for (Offset k = A.row_begin(i); k < A.row_end(i); ++k)
      if (in_row_graph(i, k)) g.adj[out++] = A.col[k];
  }
  rows.weak_entries = weak;
  return s;
}

int factor_aggregate(const double* values, int k, const Index* rows, Index m, double* q, double* r) {
  int kept = 0;
  for (int c = 0; c < k; ++c) {
    double* v = q + static_cast<std::size_t>(kept) * m;  // the next column's place
    double norm0 = 0;
    for (Index i = 0; i < m; ++i) {
      v[i] = values[static_cast<std::size_t>(rows[i]) * k + c];
      norm0 += v[i] * v[i];
    }
    for (int pass = 0; pass < 2; ++pass)
      for (int p = 0; p < kept; ++p) {
        const double* u = q + static_cast<std::size_t>(p) * m;
        double d = 0;
        for (Index i = 0; i < m; ++i) d += u[i] * v[i];
        for (Index i = 0; i < m; ++i) v[i] -= d * u[i];
        r[p * k + c] += d;
      }
    double norm = 0;
    for (Index i = 0; i < m; ++i) norm += v[i] * v[i];
    norm = std::sqrt(norm);
    if (norm0 == 0 || norm <= kDependentColumn * std::sqrt(norm0)) continue;
    for (Index i = 0; i < m; ++i) v[i] /= norm;
    r[kept * k + c] = norm;
    ++kept;
  }
  return kept;
}

NearNullspace coarse_near_nullspace(int k, const std::vector<Index>& first_column, const std::vector<double>& r) {
  NearNullspace coarse;
  coarse.vectors = k;
  coarse.values.resize(static_cast<std::size_t>(first_column.back()) * k);
  const auto aggregates = static_cast<Index>(first_column.size()) - 1;
  for (Index a = 0; a < aggregates; ++a) {
    if (a > 0 && a % kAggregateBlock == 0) coarse.reduction_blocks.push_back(coarse.nodes());
    const Index columns = first_column[a + 1] - first_column[a];
    if (columns == 0) continue;
    coarse.node_ptr.push_back(first_column[a + 1]);
    std::copy_n(r.data() + static_cast<std::size_t>(a) * k * k, static_cast<std::size_t>(columns) * k,
                coarse.values.data() + static_cast<std::size_t>(first_column[a]) * k);
  }
  if (aggregates > 0) coarse.reduction_blocks.push_back(coarse.nodes());
  return coarse;
}

template <class Value>
CsrMatrix<Value> tentative_prolongation(const Aggregates& node_aggregates, const NearNullspace& B,
                                        NearNullspace& coarse, Array<Index>& row_aggregates) {
  const Index rows = B.rows(), aggregates = node_aggregates.count;
  const int k = B.vectors;
  if (static_cast<Index>(node_aggregates.id.size()) != B.nodes())
    throw Error("internal: tentative_prolongation: aggregates of " + std::to_string(node_aggregates.id.size()) +
                " nodes for " + std::to_string(B.nodes()));
  // Every row's aggregate, and each aggregate's rows in order (a counting sort).
  row_aggregates.resize(static_cast<std::size_t>(rows));
  for (Index n = 0; n < B.nodes(); ++n)
    for (Index i = B.node_ptr[n]; i < B.node_ptr[n + 1]; ++i) row_aggregates[i] = node_aggregates.id[n];
  std::vector<Index> first(static_cast<std::size_t>(aggregates) + 1, 0), members(static_cast<std::size_t>(rows));
  std::vector<Index> place(static_cast<std::size_t>(rows), -1);  // a row's position within its aggregate
  for (Index i = 0; i < rows; ++i)
    if (row_aggregates[i] != kNotAggregated) ++first[row_aggregates[i] + 1];
  for (Index a = 0; a < aggregates; ++a) first[a + 1] += first[a];
  {
    std::vector<Index> next(first.begin(), first.end() - 1);
    for (Index i = 0; i < rows; ++i)
      if (const Index a = row_aggregates[i]; a != kNotAggregated) {
        place[i] = next[a] - first[a];
        members[next[a]++] = i;
      }
  }
  // Q and R of every aggregate.
  std::vector<double> q(static_cast<std::size_t>(first.back()) * k), r(static_cast<std::size_t>(aggregates) * k * k, 0.0);
  std::vector<Index> kept(static_cast<std::size_t>(aggregates) + 1, 0);
#pragma omp parallel for schedule(dynamic, 256)
  for (Index a = 0; a < aggregates; ++a)
    kept[a + 1] = factor_aggregate(B.values.data(), k, members.data() + first[a], first[a + 1] - first[a],
                                   q.data() + static_cast<std::size_t>(first[a]) * k,
                                   r.data() + static_cast<std::size_t>(a) * k * k);
  for (Index a = 0; a < aggregates; ++a) kept[a + 1] += kept[a];  // now each aggregate's first coarse row
  // T: row i of aggregate a holds row place[i] of Q_a, in coarse columns kept[a] ...
  CsrMatrix<Value> T(rows, kept.back());
  for (Index i = 0; i < rows; ++i) {
    const Index a = row_aggregates[i];
    T.row_ptr[static_cast<std::size_t>(i) + 1] = a == kNotAggregated ? 0 : kept[a + 1] - kept[a];
  }
  allocate_from_row_lengths(T);
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < rows; ++i) {
    const Index a = row_aggregates[i];
    if (a == kNotAggregated) continue;
    const Index m = first[a + 1] - first[a];
    const double* qa = q.data() + static_cast<std::size_t>(first[a]) * k;
    for (Index p = 0; p < kept[a + 1] - kept[a]; ++p) {
      T.col[T.row_begin(i) + p] = kept[a] + p;
      T.val[T.row_begin(i) + p] = static_cast<Value>(qa[static_cast<std::size_t>(p) * m + place[i]]);
    }
  }
  coarse = coarse_near_nullspace(k, kept, r);
  return T;
}

template NodeStrength node_strength(const CsrMatrix<double>&, const Array<Index>&, double);
template NodeStrength node_strength(const CsrMatrix<float>&, const Array<Index>&, double);
template NodeStrength node_strength(const CsrMatrix<double>&, const NodeColumns&, double);
template NodeStrength node_strength(const CsrMatrix<float>&, const NodeColumns&, double);
template Vector<double> diagonal_block_norms(const CsrMatrix<double>&, const Array<Index>&, const Array<Index>&);
template Vector<double> diagonal_block_norms(const CsrMatrix<float>&, const Array<Index>&, const Array<Index>&);
template CsrMatrix<double> tentative_prolongation(const Aggregates&, const NearNullspace&, NearNullspace&,
                                                  Array<Index>&);
template CsrMatrix<float> tentative_prolongation(const Aggregates&, const NearNullspace&, NearNullspace&,
                                                 Array<Index>&);

}  // namespace amgsolve
