#pragma once
// The formats the solve multiplies in, and what the setup's report says of them. On the cpu backend (and each
// MPI rank's CPU) the V-cycle holds the operators whose padding is small in a sliced ELLPACK copy (blocks of
// rows summed side by side, sparse/sliced_ellpack.hpp) and the others in CSR, decided as it builds them; on a
// GPU the formats' cost model (sparse/spmv_format.hpp) chooses one format from every level's costs, weighted
// by the SpMVs a V-cycle makes there. Internal to amgsolve/solver.cpp.
#include <cstdint>
#include <string>
#include <vector>

#include "amg/hierarchy.hpp"
#include "amg/vcycle.hpp"
#include "amgsolve/solver.hpp"
#include "backend/backend.hpp"
#include "sparse/sliced_ellpack.hpp"
#include "sparse/spmv_format.hpp"
#ifdef AMGSOLVE_WITH_MPI
#include "backend/mpi/mpi_backend.hpp"
#endif

namespace amgsolve {

// SpMVs a V-cycle makes on each level (smoothing and the residual; on the coarsest its smoothing steps where
// it is smoothed, none where it is solved directly),
// the weights of the formats' cost model.
template <class Backend, class CycleValue>
std::vector<int> spmvs_per_cycle(const Hierarchy<Backend, CycleValue>& amg) {
  const AmgParams& p = amg.params();
  std::vector<int> spmvs;
  for (std::size_t l = 0; l < amg.levels(); ++l) {
    const bool coarsest = l + 1 == amg.levels();
    if (coarsest)
      spmvs.push_back(amg.coarsest_smoothed() ? spmvs_per_step(amg.smoother(l)) * kCoarsestSmoothingSteps : 0);
    else
      spmvs.push_back(spmvs_per_step(amg.smoother(l)) * (p.pre_smooth + p.post_smooth) + 1);
  }
  return spmvs;
}

// Every format's cost on every level, and the format the solve uses: the configured or modelled one on a
// device (each rank's rows' costs, over MPI ranks); on the CPU, CSR where it is asked for, else the sliced
// ELLPACK copy on the levels where it pays.
template <class SolveBackend, class Backend, class CycleValue>
SpmvFormat choose_format(const Backend& backend, const Hierarchy<Backend, CycleValue>& amg, SpmvFormat requested,
                         SetupSummary& summary) {
  summary.spmv_formats.clear();
  for (std::size_t l = 0; l < amg.levels(); ++l) summary.spmv_formats.push_back(backend.format_costs(amg.matrix(l)));
  // Over ranks each rank has its rows' costs: every rank chooses from all ranks' (one format everywhere). A
  // solve on the ranks' GPUs leaves cuSPARSE's CSR out of `auto`: it promises the same bits from run to run,
  // not each row's sum independent of the rank's other rows, which the same history on any rank count needs.
  constexpr bool kOnRanksDevices = kDistributed<Backend> && SolveBackend::kind != BackendKind::cpu;
  if constexpr (kOnRanksDevices)
    for (std::vector<FormatCost>& level : summary.spmv_formats)
      for (FormatCost& cost : level) {
        cost.bytes = static_cast<std::uint64_t>(backend.comm().sum(static_cast<std::int64_t>(cost.bytes)));
        cost.bytes_moved = static_cast<std::uint64_t>(backend.comm().sum(static_cast<std::int64_t>(cost.bytes_moved)));
        const double csr_bytes = static_cast<double>(level.front().bytes);  // summed first: csr leads
        cost.overhead = csr_bytes > 0 ? static_cast<double>(cost.bytes) / csr_bytes - 1 : 0.0;
      }
  const FormatChoice choice =
      choose_spmv_format(requested, summary.spmv_formats, spmvs_per_cycle(amg), /*csr_allowed=*/!kOnRanksDevices);
  if constexpr (SolveBackend::kind == BackendKind::cpu) {
    // On CPUs (one process or each rank's) which operators take the sliced ELLPACK layout is decided as the
    // cycle builds them, and said then (SlicedOperators::describe, describe_sliced_on_ranks); here what the
    // GPU formats' model would pick.
    summary.spmv_format_reason = "the GPU formats' model would pick " + format_name(choice.format) + ": " + choice.reason;
    return requested == SpmvFormat::csr ? SpmvFormat::csr : SpmvFormat::automatic;
  }
  summary.spmv_format = format_name(choice.format);
  summary.spmv_format_reason = choice.reason;
  return choice.format;
}

// Why a CPU solve multiplies every `operators` in CSR: asked to, or none fits the sliced ELLPACK.
inline std::string csr_reason(SpmvFormat requested, const std::string& operators) {
  if (requested == SpmvFormat::csr) return "requested";
  return "no " + operators + "'s padding is small enough for the sliced ELLPACK, or the CPU lacks AVX2";
}

// The levels whose operators the cpu backend's cycle holds in sliced ELLPACK, as it builds them; then what
// setup().spmv_format says of them.
class SlicedOperators {
 public:
  void add(std::size_t level, LevelOperator which) {
    std::string& list = which == LevelOperator::matrix        ? matrices_
                        : which == LevelOperator::prolongator ? prolongators_
                                                              : restrictions_;
    list += (list.empty() ? "" : ", ") + std::to_string(level);
  }
  // summary.spmv_format_reason holds the GPU formats' model's choice (choose_format); it is kept in brackets.
  void describe(SpmvFormat requested, SetupSummary& summary) const {
    const std::string model = " (" + summary.spmv_format_reason + ")";
    if (matrices_.empty() && prolongators_.empty() && restrictions_.empty()) {
      summary.spmv_format = "csr";
      summary.spmv_format_reason = csr_reason(requested, "operator") + model;
      return;
    }
    const auto levels = [](const std::string& list) { return list.empty() ? std::string("none") : list; };
    summary.spmv_format = "sliced-ellpack";
    summary.spmv_format_reason =
        "the cpu backend multiplies in sliced ELLPACK (blocks of " + std::to_string(SlicedEllpack<double>::kChunk) +
        " rows summed side by side) the level matrices whose padding is at most " +
        padding_percent(kSlicedPaddingBesideCsr) + " (levels " + levels(matrices_) +
        ") and the P and R whose padding is at most " + padding_percent(kSlicedPaddingReplacingCsr) +
        " (P of levels " + levels(prolongators_) + ", R of levels " + levels(restrictions_) +
        ": copies that replace the hierarchy's), the others in CSR" + model;
  }

 private:
  std::string matrices_, prolongators_, restrictions_;
};

#ifdef AMGSOLVE_WITH_MPI
// What setup().spmv_format says of the mpi backend's cycle: the levels whose matrix some rank multiplies in
// part in sliced ELLPACK (its interior chunks, MpiBackend::matrix), counted over the ranks. Collective.
template <class Hierarchy>
void describe_sliced_on_ranks(const MpiBackend& backend, const Hierarchy& hierarchy, SpmvFormat requested,
                              SetupSummary& summary) {
  const std::string model = " (" + summary.spmv_format_reason + ")";
  std::string levels;
  for (std::size_t l = 0; l < hierarchy.levels(); ++l) {
    const auto& M = hierarchy.shared_matrix(l);
    if (backend.comm().sum(std::int64_t{M && M->sliced() ? 1 : 0}) > 0)
      levels += (levels.empty() ? "" : ", ") + std::to_string(l);
  }
  if (levels.empty()) {
    summary.spmv_format = "csr";
    summary.spmv_format_reason = csr_reason(requested, "level matrix") + model;
    return;
  }
  summary.spmv_format = "sliced-ellpack";
  summary.spmv_format_reason =
      "each rank multiplies the interior chunks (blocks of " + std::to_string(SlicedEllpack<double>::kChunk) +
      " rows that read no ghost) of the level matrices whose padding is at most " +
      padding_percent(kSlicedPaddingBesideCsr) + " (levels " + levels +
      ") in a sliced ELLPACK copy, the other rows, P and R in CSR" + model;
}
#endif

}  // namespace amgsolve
