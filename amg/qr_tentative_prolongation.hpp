#pragma once
// Step 3 of smoothed aggregation for systems: the tentative prolongator T by a QR factorisation of the
// near-nullspace B on each aggregate (Vanek, Brezina & Mandel, "Convergence of algebraic multigrid based on
// smoothed aggregation", Numer. Math. 88, 2001, section 3): B_a = Q_a R_a with orthonormal columns, T's
// columns of aggregate a are Q_a's and the coarse level's B is the R_a stacked, so T B_c = B on the
// aggregated rows (to rounding, and to kDependentColumn where a column is left out) and T^T T = I. A column that B's others already span on the aggregate (two nodes do not fix
// a rotation about the line through them) is left out of Q_a, so T has full column rank.
// Deterministic: the QR of an aggregate runs over its rows in order, on one thread.
#include <vector>

#include "amg/mis2_aggregation.hpp"
#include "amg/near_nullspace.hpp"
#include "sparse/csr.hpp"

namespace amgsolve {

// A column of B that is at most this fraction of its norm on an aggregate once the columns before it are
// taken out (modified Gram-Schmidt, twice) is left out there: it lies in their span up to rounding.
inline constexpr double kDependentColumn = 1e-8;

// B restricted to one aggregate of m rows (B's rows `rows`, k values each, row by row) factorised as Q R by
// modified Gram-Schmidt with one reorthogonalisation, leaving out dependent columns (kDependentColumn): Q's
// kept columns one after the other in q (m values each), R in r (k x k, row by row, zero on entry; rows past
// the kept count stay zero). Returns the number of columns kept. The arithmetic runs over the rows in order.
int factor_aggregate(const double* values, int k, const Index* rows, Index m, double* q, double* r);

// The coarse level of aggregates whose QR kept first_column[a + 1] - first_column[a] columns (first_column:
// the running count, aggregates + 1 entries), R_a in r (k x k each): a node per aggregate that kept a
// column, B_c the R_a stacked, the reduction blocks kAggregateBlock aggregates each.
NearNullspace coarse_near_nullspace(int k, const std::vector<Index>& first_column, const std::vector<double>& r);

// Step 3: T from the aggregates of the nodes and the level's B; `coarse` receives the next level's nodes (one
// per aggregate that keeps a column) and B, row_aggregates every row's aggregate (kNotAggregated: none).
template <class Value>
CsrMatrix<Value> tentative_prolongation(const Aggregates& node_aggregates, const NearNullspace& B,
                                        NearNullspace& coarse, Array<Index>& row_aggregates);

}  // namespace amgsolve
