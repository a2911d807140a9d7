#include "amg/nullspace.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <vector>

#include "amg/system_nullspace.hpp"
#include "common/error.hpp"
#include "common/parallel.hpp"
#include "common/unit_scale.hpp"

namespace amgsolve {

template <class Value>
double relative_row_sum(const CsrMatrix<Value>& A, Index i) {
  // Summed on the scale of the row's largest entry: a row of entries beyond 1e307 would overflow to inf
  // (inf / inf: every row sum would look relative 0, the matrix singular).
  double largest_entry = 0.0;
  for (Offset k = A.row_begin(i); k < A.row_end(i); ++k)
    largest_entry = std::max(largest_entry, std::abs(static_cast<double>(A.val[k])));
  const double scale = unit_scale(largest_entry);
  double sum = 0.0, magnitude = 0.0;
  for (Offset k = A.row_begin(i); k < A.row_end(i); ++k) {
    sum += scale * static_cast<double>(A.val[k]);
    magnitude += scale * std::abs(static_cast<double>(A.val[k]));
  }
  return magnitude > 0 ? std::abs(sum) / magnitude : 0.0;
}

template double relative_row_sum(const CsrMatrix<double>&, Index);
template double relative_row_sum(const CsrMatrix<float>&, Index);

// What a scan of the rows in order keeps: the first row, then each row whose relative sum is larger (so
// the first of the largest, and a NaN only in row 0, where nothing is larger). Each thread scans its block
// of rows, a NaN never larger, and the blocks are taken in order: the same row on any thread count.
template <class Value>
RowSum largest_relative_row_sum(const CsrMatrix<Value>& A) {
  if (A.rows == 0) return {};
  const RowSum first{0, relative_row_sum(A, 0)};
  if (std::isnan(first.relative)) return first;
  const int blocks = worth_a_team(static_cast<std::uint64_t>(A.nnz()), kSerialMatrixEntries) ? max_threads() : 1;
  std::vector<RowSum> largest_of_block(static_cast<std::size_t>(blocks), first);
#pragma omp parallel for schedule(static, 1) num_threads(blocks) if (blocks > 1)
  for (int b = 0; b < blocks; ++b) {
    const BlockRange rows = static_block(A.rows - 1, b, blocks);
    RowSum& largest = largest_of_block[static_cast<std::size_t>(b)];
    for (std::int64_t i = rows.begin + 1; i < rows.end + 1; ++i) {
      const double relative = relative_row_sum(A, static_cast<Index>(i));
      if (relative > largest.relative) largest = {static_cast<Index>(i), relative};
    }
  }
  RowSum largest = first;
  for (const RowSum& candidate : largest_of_block)
    if (candidate.relative > largest.relative) largest = candidate;
  return largest;
}

template <class Value>
bool some_row_sum_beyond(const CsrMatrix<Value>& A, double tolerance) {
  return any_index_where(A.rows, [&](std::int64_t i) { return !(relative_row_sum(A, static_cast<Index>(i)) <= tolerance); });
}

template bool some_row_sum_beyond(const CsrMatrix<double>&, double);
template bool some_row_sum_beyond(const CsrMatrix<float>&, double);
template RowSum largest_relative_row_sum(const CsrMatrix<double>&);
template RowSum largest_relative_row_sum(const CsrMatrix<float>&);

Index parts_of_nodes(std::vector<Index>& parent, Index rows, const Array<Index>* node_ptr) {
  parent.resize(static_cast<std::size_t>(rows));
  if (!node_ptr) {
    std::iota(parent.begin(), parent.end(), Index{0});
    return rows;
  }
  const auto nodes = static_cast<Index>(node_ptr->size()) - 1;
  if (nodes < 0 || node_ptr->back() != rows)
    throw Error("internal: nodes of " + std::to_string(nodes < 0 ? 0 : node_ptr->back()) + " rows for a matrix of " +
                std::to_string(rows));
  for (Index n = 0; n < nodes; ++n)
    for (Index i = (*node_ptr)[n]; i < (*node_ptr)[n + 1]; ++i) parent[i] = (*node_ptr)[n];
  return nodes;
}

namespace {

// Union-find over the nonzero entries (either triangle suffices for a symmetric pattern; both are read),
// each part rooted at its smallest row. A stored zero couples nothing: two blocks joined only by explicit
// zeros are two singular pieces. Returns the number of parts; `parent` leads each row towards its part's root
// (never to a larger row).
Index join_coupled_rows(const CsrMatrix<double>& A, const Array<Index>* node_ptr, std::vector<Index>& parent) {
  Index components = parts_of_nodes(parent, A.rows, node_ptr);
  const auto find = [&](Index i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  };
  for (Index i = 0; i < A.rows; ++i)
    for (Offset k = A.row_begin(i); k < A.row_end(i); ++k) {
      if (A.val[k] == 0.0) continue;
      const Index a = find(i), b = find(A.col[k]);
      if (a == b) continue;
      parent[std::max(a, b)] = std::min(a, b);
      --components;
    }
  return components;
}

}  // namespace

Index connected_components(const CsrMatrix<double>& A, const Array<Index>* node_ptr) {
  std::vector<Index> parent;
  return join_coupled_rows(A, node_ptr, parent);
}

void PartModes::add(std::int64_t more_rows, const char* more_moves, const char* more_holds) {
  rows += more_rows;
  for (std::size_t v = 0; v < moves.size(); ++v) {
    moves[v] |= more_moves[v];
    holds[v] |= more_holds[v];
  }
}

int PartModes::free_vector() const {
  for (std::size_t v = 0; v < moves.size(); ++v)
    if (moves[v] && !holds[v]) return static_cast<int>(v);
  return -1;
}

void row_modes(const CsrMatrix<double>& A, Index i, const NearNullspace* B_columns, char* moves, char* holds) {
  if (!B_columns) {  // the constant: moves every row, held where the row does not sum to zero
    moves[0] = 1;
    holds[0] = !(relative_row_sum(A, i) <= zero_row_sum_tolerance<double>());
    return;
  }
  const auto k = static_cast<std::size_t>(B_columns->vectors);
  std::array<double, kMaxNearNullspaceVectors> product{}, magnitude{};
  product_row(A, i, *B_columns, product.data());
  for (Offset e = A.row_begin(i); e < A.row_end(i); ++e)
    for (std::size_t v = 0; v < k; ++v)
      magnitude[v] += std::abs(A.val[e] * B_columns->values[static_cast<std::size_t>(A.col[e]) * k + v]);
  for (std::size_t v = 0; v < k; ++v) {
    moves[v] = B_columns->values[static_cast<std::size_t>(i) * k + v] != 0.0;
    holds[v] = !(std::abs(product[v]) <= kNullspaceRowTolerance * magnitude[v]);
  }
}

std::string floating_part(const CsrMatrix<double>& A, const NearNullspace* B) {
  std::vector<Index> root;
  if (join_coupled_rows(A, B ? &B->node_ptr : nullptr, root) < 2) return "";
  for (Index i = 0; i < A.rows; ++i) root[i] = root[root[i]];  // a row's parent is smaller: one pass ends at roots
  // Per part (by its root, its smallest row, in order): its rows, the vectors that move it, those it holds.
  const int k = B ? B->vectors : 1;
  std::map<Index, PartModes> parts;
  std::vector<char> moves(static_cast<std::size_t>(k)), holds(moves.size());
  for (Index i = 0; i < A.rows; ++i) {
    row_modes(A, i, B, moves.data(), holds.data());
    parts.try_emplace(root[i], k).first->second.add(1, moves.data(), holds.data());
  }
  return first_floating_part(parts, B != nullptr);
}

std::string first_floating_part(const std::map<Index, PartModes>& parts, bool system) {
  for (const auto& [first_row, part] : parts)
    if (const int vector = part.free_vector(); vector >= 0)
      return floating_part_clause(first_row, part.rows, system ? vector : -1);
  return "";
}

std::string floating_part_clause(std::int64_t first_row, std::int64_t rows, int vector) {
  const std::int64_t others = rows - 1;
  const std::string how = vector < 0 ? "its rows all sum to zero"
                                     : "A maps near-nullspace vector " + std::to_string(vector + 1) +
                                           " to zero on its rows (a motion nothing holds)";
  return "row " + std::to_string(first_row + 1) +
         (others > 0 ? " and the " + std::to_string(others) + " rows coupled to it form" : " forms") +
         " a part that no other row couples to, and " + how + ": singular on its own (a floating part; hold it, "
         "e.g. by a Dirichlet condition, or solve it separately)";
}

namespace {

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", v);
  return text;
}

}  // namespace

NullspaceChoice resolve_nullspace(const CsrMatrix<double>& A, NullspaceChoice choice) {
  require_scalar_nullspace_choice(choice);
  if (choice == NullspaceChoice::none || A.rows == 0) return NullspaceChoice::none;
  const auto components = [&] { return connected_components(A); };
  if (choice == NullspaceChoice::automatic)  // (constant names the row that sums least to zero: a whole pass)
    return some_row_sum_beyond(A, zero_row_sum_tolerance<double>()) ? NullspaceChoice::none
                                                                    : constant_if_connected(components);
  return resolve_nullspace(largest_relative_row_sum(A), components, choice);
}

void require_scalar_nullspace_choice(NullspaceChoice choice) {
  if (choice == NullspaceChoice::near_nullspace)
    throw InputError("amg.nullspace near_nullspace is a system's: it needs amg.block_size above 1 or near-nullspace "
                     "vectors (a scalar problem's nullspace is the constant: auto or constant)");
}

NullspaceChoice resolve_nullspace(const RowSum& row_sum, const std::function<Index()>& count_components,
                                  NullspaceChoice choice) {
  require_scalar_nullspace_choice(choice);
  if (choice == NullspaceChoice::none) return NullspaceChoice::none;
  const bool zero_sums = row_sum.relative <= zero_row_sum_tolerance<double>();
  if (choice == NullspaceChoice::constant && row_sum.relative > 1e-8)
    throw InputError("amg.nullspace is constant, but row " + std::to_string(row_sum.row + 1) +
                     " of the matrix sums to " + number(row_sum.relative) +
                     " of its entries' magnitude: A 1 = 0 does not hold (use auto or none)");
  if (choice == NullspaceChoice::automatic && !zero_sums) return NullspaceChoice::none;
  return constant_if_connected(count_components);
}

NullspaceChoice constant_if_connected(const std::function<Index()>& count_components) {
  const Index parts = count_components();
  if (parts > 1)
    throw InputError("the matrix's rows sum to zero (a singular matrix with the constant in its nullspace) but its "
                     "graph falls into " + std::to_string(parts) +
                     " disconnected parts, each singular on its own: solve the parts separately");
  return NullspaceChoice::constant;
}

double constant_part(double sum, double norm, std::size_t n) {
  if (n == 0 || norm == 0.0) return 0.0;
  return std::abs(sum) / (std::sqrt(static_cast<double>(n)) * norm);
}

double range_tolerance(double tolerance, double constant_part) {
  if (constant_part == 0) return tolerance;
  const double c2 = constant_part * constant_part;
  return std::sqrt(std::max(tolerance * tolerance - c2, 0.0) / (1 - c2));
}

void require_consistent_rhs(double sum, double norm, std::size_t n, double tolerance, const std::string& what) {
  const double part = constant_part(sum, norm, n);
  if (part <= tolerance) return;
  throw InputError(what + " is inconsistent with the singular matrix: A's rows sum to zero, so A x sums to zero for "
                   "every x, but b sums to " + number(sum) + " (its constant part is " + number(part) +
                   " of ||b||, above the solve's tolerance " + number(tolerance) +
                   "): make b sum to zero (subtract its mean), the only case in which A x = b has a solution");
}

}  // namespace amgsolve
