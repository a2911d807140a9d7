#pragma once
// Smoothed aggregation (P. Vanek, J. Mandel, M. Brezina, "Algebraic multigrid by smoothed aggregation for
// second and fourth order elliptic problems", Computing 56, 1996), with the aggregation of Bell, Dalton &
// Olson (SIAM J. Sci. Comput. 34, 2012: MIS-2). Each level A is coarsened in five steps:
//
//   1. strong couplings    j is a strong neighbour of i when |a_ij| >= theta sqrt(a_ii a_jj)   strength.hpp
//   2. aggregation          disjoint aggregates of strong neighbours, rooted at a maximal
//                           independent set of distance 2 (seeded hash priorities)             mis2_aggregation.hpp
//   3. tentative prolongator T: column k is the normalised indicator of aggregate k             tentative_prolongation.hpp
//   4. smoothed prolongator P = (I - omega D_f^-1 A_f) T, omega = (4/3) / rho(D_f^-1 A_f), with A_f the
//                           filtered matrix (weak couplings lumped into the diagonal)           smoothed_prolongation.hpp
//   5. coarse operator      A_c = P^T (A P), R = P^T kept for the cycle                        galerkin.hpp
//
// and the level's smoother is fitted to rho(D^-1 A) (smoother.hpp). Coarsening stops at amg.coarse_size
// rows, at amg.max_levels, or when aggregation removes less than 10% of the rows; the coarsest level is
// factorised (sparse LDL^T). The result is an AmgHierarchy, which only stores the levels.
#include <memory>
#include <optional>

#include "amg/hierarchy.hpp"
#include "spgemm/spgemm.hpp"

namespace amgsolve {

// What coarsening one level produces: the transfer operators, the coarse operator and the level's smoother.
template <class Value>
struct CoarseningStep {
  std::shared_ptr<const CsrMatrix<Value>> P, R, coarse;
  SmootherSpec smoother;
  Array<Index> aggregates;  // the aggregate of every row of the level (-1: none)
};

template <class Value>
class SmoothedAggregation {
 public:
  using LevelCallback = typename AmgHierarchy<Value>::LevelCallback;
  using ProductCallback = typename AmgHierarchy<Value>::ProductCallback;

  // params.spgemm must be set (a SpGEMM backend that runs on `backend`). With the cuda backend steps 1-3
  // run on the GPU (amg/gpu_setup.hpp: bit-identical results).
  SmoothedAggregation(const AmgParams& params, BackendKind backend, const SpgemmBackend& spgemm,
                      ProductCallback on_product = {});

  // Steps 1-5 for level `info.level` with matrix A; empty when aggregation no longer pays. Fills the
  // level's statistics (aggregates, rho, phase times, the three products) into info.
  std::optional<CoarseningStep<Value>> coarsen(const CsrMatrix<Value>& A, LevelInfo& info) const;

  // Coarsens from A until a stopping rule holds, then factorises the coarsest level, into `hierarchy`.
  void build(std::shared_ptr<const CsrMatrix<Value>> A, AmgHierarchy<Value>& hierarchy,
             const LevelCallback& on_level) const;

 private:
  const AmgParams& params_;
  BackendKind backend_;
  const SpgemmBackend& spgemm_;
  ProductCallback on_product_;
};

}  // namespace amgsolve
