#pragma once
// Tentative prolongator of smoothed aggregation (Vanek, Mandel & Brezina, Computing 56, 1996, section 3)
// for the constant near-nullspace of the finest level. Section 3 builds T from the near-nullspace vector B
// of each level, restricted to each aggregate and normalised: T_ij = B_i / ||B_(aggregate j)||, and the
// coarse level's B is those norms, B^c_j = ||B_(aggregate j)||, so that T B^c = B: the nullspace is carried
// to every level exactly (which makes the coarsest matrix of a singular problem singular with a known
// nullspace, sparse/sparse_ldlt.hpp). Starting from B = 1, B_i^2 is the number of finest-level points node
// i stands for, so the levels carry the weights w = B^2, integers held exactly in doubles: T_ij =
// sqrt(w_i) / sqrt(w^c_j) with w^c_j = sum of w_i over aggregate j, sums that no order of addition can
// change (the GPU gets the same bits). On the finest level (w = 1) T_ij = 1 / sqrt(|aggregate j|). T's
// columns are orthonormal (T^T T = I).
#include <cmath>

#include "amg/mis2_aggregation.hpp"
#include "sparse/csr.hpp"

namespace amgsolve {

// T_ij from node i's weight w_i and its aggregate's w^c_j: sqrt(w_i) / sqrt(w^c_j) in double, rounded once to
// Value (the distributed setup computes the same, amg/mpi/).
template <class Value>
Value tentative_entry(double weight, double coarse_weight) {
  return static_cast<Value>(std::sqrt(weight) / std::sqrt(coarse_weight));
}

// weights: w of every node, empty for the finest level (all 1); coarse_weights receives w^c.
template <class Value>
CsrMatrix<Value> tentative_prolongation(const Aggregates& aggregates, const Vector<double>& weights,
                                        Vector<double>& coarse_weights);

// The finest level's: w = 1.
template <class Value>
CsrMatrix<Value> tentative_prolongation(const Aggregates& aggregates) {
  Vector<double> coarse_weights;
  return tentative_prolongation<Value>(aggregates, {}, coarse_weights);
}

// Through the setup's backend (amg/smoothed_aggregation.hpp).
template <class Value>
CsrMatrix<Value> tentative_prolongation(const CpuBackend&, const Aggregates& aggregates, const Vector<double>& weights,
                                        Vector<double>& coarse_weights) {
  return tentative_prolongation<Value>(aggregates, weights, coarse_weights);
}

}  // namespace amgsolve
