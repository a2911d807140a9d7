#include "solver/device_solve_plan.hpp"

#include <Eigen/Cholesky>
#include <Eigen/Dense>

#include <algorithm>
#include <numeric>
#include <string>
#include <type_traits>
#include <utility>

#include "amg/hierarchy.hpp"
#include "common/error.hpp"
#include "sparse/csr_ops.hpp"

namespace amgsolve {
namespace {

template <class Value>
using MatrixRef = std::shared_ptr<const CsrMatrix<Value>>;

bool is_identity(const Array<Index>& order) {
  for (std::size_t i = 0; i < order.size(); ++i)
    if (order[i] != static_cast<Index>(i)) return false;
  return true;
}

// The working-basis order of a level: the pJDS order for pjds, the identity (empty) otherwise or when the
// rows are already sorted.
template <class Value>
Array<Index> working_order(const CsrMatrix<Value>& M, SpmvFormat format) {
  if (format != SpmvFormat::pjds) return {};
  Array<Index> order = pjds_row_order(M);
  if (is_identity(order)) order.clear();
  return order;
}

// M itself (not owned: the caller's matrix outlives the plan's use) or its permuted copy.
template <class Value>
MatrixRef<Value> in_working_basis(const CsrMatrix<Value>& M, const Array<Index>& rows, const Array<Index>& cols) {
  if (rows.empty() && cols.empty()) return MatrixRef<Value>(&M, [](const CsrMatrix<Value>*) {});
  return std::make_shared<const CsrMatrix<Value>>(permuted(M, rows, cols));
}

template <class Value>
bool same_matrix(const CsrMatrix<Value>& a, const CsrMatrix<Value>& b) {
  return &a == &b || (a.rows == b.rows && a.cols == b.cols && a.row_ptr == b.row_ptr && a.col == b.col && a.val == b.val);
}

// omega / a_ii (Jacobi) or 1 / a_ii (Chebyshev) in the working basis, rounded as the CPU smoothers round.
template <class Value>
Vector<Value> smoother_diagonal(const CsrMatrix<Value>& A, const SmootherSpec& spec, const Array<Index>& order) {
  const Vector<Value> d = diagonal(A);
  const double numerator = spec.type == SmootherType::jacobi ? spec.omega : 1.0;
  Vector<Value> out(d.size());
  for (std::size_t i = 0; i < d.size(); ++i) {
    const std::size_t original = order.empty() ? i : static_cast<std::size_t>(order[i]);
    out[i] = static_cast<Value>(numerator / static_cast<double>(d[original]));
  }
  return out;
}

// The dense inverse of an SPD matrix, column-major, by Cholesky in double.
template <class Value>
std::vector<double> dense_inverse(const CsrMatrix<Value>& C) {
  const Eigen::Index n = C.rows;
  Eigen::MatrixXd dense = Eigen::MatrixXd::Zero(n, n);
  for (Index i = 0; i < C.rows; ++i)
    for (Offset k = C.row_begin(i); k < C.row_end(i); ++k) dense(i, C.col[k]) = static_cast<double>(C.val[k]);
  const Eigen::LLT<Eigen::MatrixXd> cholesky(dense);
  if (cholesky.info() != Eigen::Success)
    throw NumericalError("the coarsest-level matrix (" + std::to_string(C.rows) +
                         " rows) is not positive definite: the input matrix is not SPD");
  const Eigen::MatrixXd inverse = cholesky.solve(Eigen::MatrixXd::Identity(n, n));
  return std::vector<double>(inverse.data(), inverse.data() + inverse.size());
}

}  // namespace

template <class Value>
Array<Index> pjds_row_order(const CsrMatrix<Value>& M) {
  Array<Index> order(static_cast<std::size_t>(M.rows));
  std::iota(order.begin(), order.end(), Index{0});
  std::stable_sort(order.begin(), order.end(), [&M](Index a, Index b) { return M.row_length(a) > M.row_length(b); });
  return order;
}

template <class Value>
CsrMatrix<Value> permuted(const CsrMatrix<Value>& M, const Array<Index>& rows, const Array<Index>& cols) {
  if (!rows.empty() && rows.size() != static_cast<std::size_t>(M.rows))
    throw Error("permuted: a row order of " + std::to_string(rows.size()) + " for " + std::to_string(M.rows) + " rows");
  if (!cols.empty() && cols.size() != static_cast<std::size_t>(M.cols))
    throw Error("permuted: a column order of " + std::to_string(cols.size()) + " for " + std::to_string(M.cols) +
                " columns");
  Array<Index> new_column;  // original column -> working column
  if (!cols.empty()) {
    new_column.resize(cols.size());
    for (std::size_t j = 0; j < cols.size(); ++j) new_column[static_cast<std::size_t>(cols[j])] = static_cast<Index>(j);
  }
  auto original_row = [&rows](Index i) { return rows.empty() ? i : rows[static_cast<std::size_t>(i)]; };

  CsrMatrix<Value> B(M.rows, M.cols);
  for (Index i = 0; i < M.rows; ++i) B.row_ptr[i + 1] = M.row_length(original_row(i));
  allocate_from_row_lengths(B);
#pragma omp parallel
  {
    std::vector<std::pair<Index, Value>> row;
#pragma omp for schedule(static)
    for (Index i = 0; i < M.rows; ++i) {
      const Index from = original_row(i);
      row.clear();
      for (Offset k = M.row_begin(from); k < M.row_end(from); ++k)
        row.emplace_back(new_column.empty() ? M.col[k] : new_column[static_cast<std::size_t>(M.col[k])], M.val[k]);
      std::sort(row.begin(), row.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      Offset at = B.row_begin(i);
      for (const auto& [c, v] : row) {
        B.col[at] = c;
        B.val[at] = v;
        ++at;
      }
    }
  }
  return B;
}

template <class CycleValue>
DeviceSolvePlan<CycleValue> make_device_solve_plan(const CsrMatrix<double>& A, const AmgHierarchy<CycleValue>& hierarchy,
                                                   SpmvFormat format) {
  if (format == SpmvFormat::automatic)
    throw Error("the GPU solve needs a concrete SpMV format (csr, ellpack-r or pjds), not auto");
  const std::size_t levels = hierarchy.levels();
  if (!A.is_square() || levels == 0 || hierarchy.matrix(0).rows != A.rows || hierarchy.matrix(0).cols != A.cols)
    throw Error("the GPU solve was given a " + std::to_string(A.rows) + "x" + std::to_string(A.cols) +
                " matrix and an AMG hierarchy whose level 0 has " +
                std::to_string(levels ? hierarchy.matrix(0).rows : 0) + " rows");

  DeviceSolvePlan<CycleValue> plan;
  plan.format = format;
  plan.pre_smooth = hierarchy.params().pre_smooth;
  plan.post_smooth = hierarchy.params().post_smooth;

  // pi_l for the levels whose matrix is multiplied; level 0's comes from A (the same pattern as the
  // hierarchy's level 0 whenever the hierarchy was built from A); the coarsest keeps its order.
  std::vector<Array<Index>> order(levels);
  order[0] = working_order(A, format);
  for (std::size_t l = 1; l + 1 < levels; ++l) order[l] = working_order(hierarchy.matrix(l), format);

  plan.permutation = order[0];
  plan.A = in_working_basis(A, order[0], order[0]);
  if constexpr (std::is_same_v<CycleValue, double>) plan.cycle_uses_fine_matrix = same_matrix(A, hierarchy.matrix(0));

  for (std::size_t l = 0; l + 1 < levels; ++l) {
    typename DeviceSolvePlan<CycleValue>::Level level;
    if constexpr (std::is_same_v<CycleValue, double>) {
      if (l == 0 && plan.cycle_uses_fine_matrix) level.A = plan.A;
    }
    if (!level.A) level.A = in_working_basis(hierarchy.matrix(l), order[l], order[l]);
    level.P = in_working_basis(hierarchy.prolongator(l), order[l], order[l + 1]);
    level.R = in_working_basis(hierarchy.restriction(l), order[l + 1], order[l]);
    level.smoother = hierarchy.smoother(l).spec();
    level.smoother_diagonal = smoother_diagonal(hierarchy.matrix(l), level.smoother, order[l]);
    plan.levels.push_back(std::move(level));
  }

  const CsrMatrix<CycleValue>& coarsest = hierarchy.matrix(levels - 1);
  const MatrixRef<CycleValue> coarse = in_working_basis(coarsest, order[levels - 1], order[levels - 1]);
  plan.coarse_rows = coarse->rows;
  if (coarse->rows <= kMaxDenseCoarseRows)
    plan.coarse_inverse = dense_inverse(*coarse);
  else
    plan.coarse_solver = std::make_shared<const CoarseSolver<CycleValue>>(*coarse);
  return plan;
}

template Array<Index> pjds_row_order(const CsrMatrix<double>&);
template Array<Index> pjds_row_order(const CsrMatrix<float>&);
template CsrMatrix<double> permuted(const CsrMatrix<double>&, const Array<Index>&, const Array<Index>&);
template CsrMatrix<float> permuted(const CsrMatrix<float>&, const Array<Index>&, const Array<Index>&);
template DeviceSolvePlan<double> make_device_solve_plan(const CsrMatrix<double>&, const AmgHierarchy<double>&,
                                                        SpmvFormat);
template DeviceSolvePlan<float> make_device_solve_plan(const CsrMatrix<double>&, const AmgHierarchy<float>&,
                                                       SpmvFormat);

}  // namespace amgsolve
