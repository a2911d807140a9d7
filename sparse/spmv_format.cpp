#include "sparse/spmv_format.hpp"

#include <algorithm>
#include <cstdio>

#include "common/error.hpp"
#include "sparse/ellpack_r.hpp"

namespace amgsolve {
namespace {

constexpr std::uint64_t kSectorBytes = 32;  // the unit of a GPU's global-memory transactions
constexpr Index kWarp = 32;                 // one thread per row, 32 rows per warp / pJDS block

std::uint64_t index_bytes() { return sizeof(Index); }

// Index into the profile's group sums for aligned groups of g rows.
int group_index(std::size_t g) {
  for (int i = 0; i < 3; ++i)
    if (static_cast<std::size_t>(kProfileGroups[i]) == g) return i;
  throw Error("spmv_format: no row-length profile for groups of " + std::to_string(g) + " rows");
}

// Sectors a one-thread-per-row kernel loads for an array of element_bytes-sized entries: every aligned group
// of (sector / element) consecutive rows costs one sector per step j that any of its rows is still active
// in, i.e. its longest row many sectors.
std::uint64_t sectors_loaded(const std::uint64_t (&group_max_sum)[3], std::size_t element_bytes) {
  return group_max_sum[group_index(std::max<std::size_t>(1, kSectorBytes / element_bytes))];
}

// Matrix-side traffic of a one-thread-per-row kernel: values and column indices by sectors, plus the
// per-row lengths (read in full, coalesced).
std::uint64_t row_kernel_bytes(const std::uint64_t (&group_max_sum)[3], Index padded_rows, std::size_t value_bytes) {
  return kSectorBytes * (sectors_loaded(group_max_sum, value_bytes) + sectors_loaded(group_max_sum, index_bytes())) +
         static_cast<std::uint64_t>(padded_rows) * index_bytes();
}

// Sum over aligned groups of g of the group's longest row.
std::uint64_t sum_of_group_maxima(const std::vector<Index>& lengths, std::size_t g) {
  std::uint64_t sum = 0;
  for (std::size_t first = 0; first < lengths.size(); first += g) {
    const std::size_t last = std::min(first + g, lengths.size());
    sum += static_cast<std::uint64_t>(*std::max_element(lengths.begin() + first, lengths.begin() + last));
  }
  return sum;
}

// The same for the rows sorted by decreasing length (pJDS), from the number of rows of each length: the group
// starting at position p of that order has the length of row p, and the rows of length l fill the positions
// after all longer ones, so a walk down the lengths finds each group's first row without a sort.
std::uint64_t sorted_sum_of_group_maxima(const std::vector<std::uint64_t>& rows_of_length, std::uint64_t g) {
  std::uint64_t sum = 0, position = 0;
  const auto groups_started_before = [g](std::uint64_t p) { return (p + g - 1) / g; };
  for (std::size_t length = rows_of_length.size(); length-- > 0;) {
    const std::uint64_t next = position + rows_of_length[length];
    sum += static_cast<std::uint64_t>(length) * (groups_started_before(next) - groups_started_before(position));
    position = next;
  }
  return sum;
}

FormatCost make_cost(SpmvFormat format, std::uint64_t bytes, std::uint64_t matrix_traffic, std::uint64_t csr_bytes,
                     std::uint64_t vector_traffic, Offset nnz) {
  FormatCost cost;
  cost.format = format;
  cost.bytes = bytes;
  cost.overhead = csr_bytes > 0 ? static_cast<double>(bytes) / static_cast<double>(csr_bytes) - 1.0 : 0.0;
  cost.bytes_moved = matrix_traffic + vector_traffic;
  cost.code_balance = nnz > 0 ? static_cast<double>(cost.bytes_moved) / (2.0 * static_cast<double>(nnz)) : 0.0;
  return cost;
}

std::string gigabytes(std::uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g GB", static_cast<double>(bytes) / 1e9);
  return text;
}

}  // namespace

RowLengthProfile row_length_profile(const std::vector<Index>& lengths, Index cols) {
  RowLengthProfile p;
  p.rows = static_cast<Index>(lengths.size());
  p.cols = cols;
  for (Index l : lengths) p.nnz += l;
  p.width = lengths.empty() ? 0 : *std::max_element(lengths.begin(), lengths.end());
  std::vector<std::uint64_t> rows_of_length(static_cast<std::size_t>(p.width) + 1, 0);
  for (Index l : lengths) ++rows_of_length[static_cast<std::size_t>(l)];
  for (int g = 0; g < 3; ++g) {
    p.group_max_sum[g] = sum_of_group_maxima(lengths, static_cast<std::size_t>(kProfileGroups[g]));
    p.sorted_group_max_sum[g] = sorted_sum_of_group_maxima(rows_of_length, static_cast<std::uint64_t>(kProfileGroups[g]));
  }
  return p;
}

std::vector<FormatCost> spmv_format_costs(const RowLengthProfile& p, std::size_t value_bytes) {
  const std::uint64_t entry_bytes = value_bytes + index_bytes();
  const std::uint64_t nnz = static_cast<std::uint64_t>(p.nnz);
  const std::uint64_t rows = static_cast<std::uint64_t>(p.rows);
  // x once (ideal reuse, alpha = 1 / N_nzr) and y once, the same for every format.
  const std::uint64_t vector_traffic = (static_cast<std::uint64_t>(p.cols) + rows) * value_bytes;
  const Index padded = padded_row_count(p.rows, kWarp);

  // CSR: 64-bit row offsets, read once each.
  const std::uint64_t csr_bytes = (rows + 1) * sizeof(Offset) + nnz * entry_bytes;
  // ELLPACK-R: the padded_rows x width rectangle and the row lengths; rows in their original order.
  const std::uint64_t ellpack_bytes =
      static_cast<std::uint64_t>(padded) * (static_cast<std::uint64_t>(p.width) * entry_bytes + index_bytes());
  // pJDS: rows sorted by length, each block of kWarp rows padded to its first (longest) row, plus the
  // permutation, the row lengths and the jagged-diagonal offsets.
  const std::uint64_t pjds_slots = p.sorted_group_max_sum[group_index(kWarp)] * kWarp;
  const std::uint64_t pjds_bytes = pjds_slots * entry_bytes + rows * index_bytes() +
                                   static_cast<std::uint64_t>(padded) * index_bytes() +
                                   (static_cast<std::uint64_t>(p.width) + 1) * sizeof(Offset);

  return {
      make_cost(SpmvFormat::csr, csr_bytes, csr_bytes, csr_bytes, vector_traffic, p.nnz),
      make_cost(SpmvFormat::ellpack_r, ellpack_bytes, row_kernel_bytes(p.group_max_sum, padded, value_bytes),
                csr_bytes, vector_traffic, p.nnz),
      make_cost(SpmvFormat::pjds, pjds_bytes, row_kernel_bytes(p.sorted_group_max_sum, padded, value_bytes),
                csr_bytes, vector_traffic, p.nnz),
  };
}

template <class Value>
std::vector<FormatCost> spmv_format_costs(const CsrMatrix<Value>& A, std::size_t value_bytes) {
  std::vector<Index> lengths(static_cast<std::size_t>(A.rows));
  for (Index i = 0; i < A.rows; ++i) lengths[i] = A.row_length(i);
  return spmv_format_costs(row_length_profile(lengths, A.cols), value_bytes);
}

FormatChoice choose_spmv_format(SpmvFormat requested, const std::vector<std::vector<FormatCost>>& levels,
                                const std::vector<int>& spmvs_per_cycle, bool csr_allowed) {
  if (requested != SpmvFormat::automatic)
    return {requested, "requested (solver.spmv_format: " + format_name(requested) + ")"};
  if (levels.size() != spmvs_per_cycle.size()) throw Error("choose_spmv_format: one SpMV count per level needed");
  const SpmvFormat formats[] = {SpmvFormat::csr, SpmvFormat::ellpack_r, SpmvFormat::pjds};
  std::uint64_t moved[3] = {0, 0, 0};
  for (std::size_t l = 0; l < levels.size(); ++l) {
    const std::uint64_t spmvs = static_cast<std::uint64_t>(spmvs_per_cycle[l]) + (l == 0 ? 1 : 0);  // + PCG's
    for (std::size_t f = 0; f < 3; ++f) moved[f] += spmvs * levels[l].at(f).bytes_moved;
  }
  const std::size_t first = csr_allowed ? 0 : 1;  // formats[0] is csr
  const std::size_t best = static_cast<std::size_t>(std::min_element(moved + first, moved + 3) - moved);
  std::string reason = "fewest bytes moved (model) in one PCG iteration: ";
  for (std::size_t f = 0; f < 3; ++f)
    reason += format_name(formats[f]) + " " + gigabytes(moved[f]) + (f == 0 && !csr_allowed ? " (left out)" : "") +
              (f + 1 < 3 ? ", " : "");
  return {formats[best], reason};
}

template std::vector<FormatCost> spmv_format_costs(const CsrMatrix<double>&, std::size_t);
template std::vector<FormatCost> spmv_format_costs(const CsrMatrix<float>&, std::size_t);

}  // namespace amgsolve
