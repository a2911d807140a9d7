#pragma once
// The SpMV storage format of the solve (solver.spmv_format) and what each format costs: the bytes it
// holds (footprint, against the CSR the setup produced) and the bytes one SpMV moves (code balance).
//
// The traffic model is the paper's eq. (1) (M. Kreutzer et al., IPDPSW 2012,
// ../shared/papers/pjds-kreutzer-2011.txt, section IV.B), refined to the unit a GPU actually moves, the
// 32-byte sector: one thread per row, so a warp's j-th step loads the sectors that hold the j-th entries of
// its active rows. In pJDS the rows are sorted, the active rows form a prefix and almost every loaded
// sector is full; in ELLPACK-R the active rows are scattered over the warp and partly empty sectors are
// paid in full; CSR (cuSPARSE's kernels walk the nonzeros contiguously) moves the entries plus its 64-bit
// row offsets. The right-hand side is counted once (alpha = 1 / N_nzr in eq. (1): ideal reuse from
// cache) and the result once, the same for every format, so only the matrix side decides.
//
// auto picks the format that moves the fewest bytes per PCG iteration: each level's SpMV bytes weighted by
// how many SpMVs the V-cycle makes there, plus one SpMV with the fine matrix for PCG itself.
#include <cstdint>
#include <string>
#include <vector>

#include "common/enum_names.hpp"
#include "sparse/csr.hpp"

namespace amgsolve {

enum class SpmvFormat { automatic, csr, ellpack_r, pjds };
inline constexpr EnumName<SpmvFormat> kSpmvFormatNames[] = {
    {"auto", SpmvFormat::automatic}, {"csr", SpmvFormat::csr}, {"ellpack-r", SpmvFormat::ellpack_r}, {"pjds", SpmvFormat::pjds}};
constexpr const auto& names_of(SpmvFormat) { return kSpmvFormatNames; }

// "auto", "csr", "ellpack-r", "pjds": the config values.
inline std::string format_name(SpmvFormat format) { return name_of(format); }

// What one matrix costs in one concrete format (not automatic).
struct FormatCost {
  SpmvFormat format = SpmvFormat::csr;
  std::uint64_t bytes = 0;          // storage of the matrix in this format
  double overhead = 0.0;            // bytes / bytes of the CSR the setup holds - 1 (0.05 = 5% more)
  std::uint64_t bytes_moved = 0;    // predicted memory traffic of one SpMV y = A x (matrix, x once, y)
  double code_balance = 0.0;        // bytes_moved / (2 nnz) bytes per flop
};

// All the model needs of a matrix: its shape and a few sums over its row lengths. A backend computes it
// where the matrix is (the cuda backend on the device, without copying the lengths).
struct RowLengthProfile {
  Index rows = 0, cols = 0;
  Offset nnz = 0;
  Index width = 0;  // the longest row
  // Sum over aligned groups of g consecutive rows of the group's longest row, for g = 4, 8 and 32
  // (index 0, 1, 2): the sectors (32 bytes) that one thread per row loads for 8- and 4-byte entries, and
  // pJDS's blocks of 32 rows. In the rows' own order (ELLPACK-R) and sorted longest first (pJDS).
  std::uint64_t group_max_sum[3] = {0, 0, 0};
  std::uint64_t sorted_group_max_sum[3] = {0, 0, 0};
};
inline constexpr Index kProfileGroups[3] = {4, 8, 32};

RowLengthProfile row_length_profile(const std::vector<Index>& lengths, Index cols);

// The three concrete formats, in the order csr, ellpack-r, pjds. value_bytes is sizeof the value type
// the solve will use (8 double, 4 float), which may differ from the matrix's own.
std::vector<FormatCost> spmv_format_costs(const RowLengthProfile& profile, std::size_t value_bytes);
template <class Value>
std::vector<FormatCost> spmv_format_costs(const CsrMatrix<Value>& A, std::size_t value_bytes = sizeof(Value));

// The format chosen for a solve and the reason, in one line for the log and the report.
struct FormatChoice {
  SpmvFormat format = SpmvFormat::csr;
  std::string reason;
};

// levels[l] = spmv_format_costs of level l's matrix; spmvs_per_cycle[l] = SpMVs the V-cycle makes with it
// (the PCG SpMV with the fine matrix is added here). A concrete `requested` format is returned as is;
// csr_allowed = false leaves csr out of the automatic choice.
FormatChoice choose_spmv_format(SpmvFormat requested, const std::vector<std::vector<FormatCost>>& levels,
                                const std::vector<int>& spmvs_per_cycle, bool csr_allowed = true);

}  // namespace amgsolve
