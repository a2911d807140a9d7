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

// Sectors a one-thread-per-row kernel loads for an array of element_bytes-sized entries, with the rows in
// the given storage order: every aligned group of (sector / element) consecutive rows costs one sector per
// step j that any of its rows is still active in, i.e. its longest row many sectors.
std::uint64_t sectors_loaded(const std::vector<Index>& lengths_in_storage_order, std::size_t element_bytes) {
  const std::size_t rows_per_sector = std::max<std::size_t>(1, kSectorBytes / element_bytes);
  std::uint64_t sectors = 0;
  for (std::size_t first = 0; first < lengths_in_storage_order.size(); first += rows_per_sector) {
    const std::size_t last = std::min(first + rows_per_sector, lengths_in_storage_order.size());
    sectors += static_cast<std::uint64_t>(
        *std::max_element(lengths_in_storage_order.begin() + first, lengths_in_storage_order.begin() + last));
  }
  return sectors;
}

// Matrix-side traffic of a one-thread-per-row kernel: values and column indices by sectors, plus the
// per-row lengths (read in full, coalesced).
std::uint64_t row_kernel_bytes(const std::vector<Index>& lengths, Index padded_rows, std::size_t value_bytes) {
  return kSectorBytes * (sectors_loaded(lengths, value_bytes) + sectors_loaded(lengths, index_bytes())) +
         static_cast<std::uint64_t>(padded_rows) * index_bytes();
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

std::string format_name(SpmvFormat format) {
  switch (format) {
    case SpmvFormat::automatic: return "auto";
    case SpmvFormat::csr: return "csr";
    case SpmvFormat::ellpack_r: return "ellpack-r";
    case SpmvFormat::pjds: return "pjds";
  }
  return "?";
}

template <class Value>
std::vector<FormatCost> spmv_format_costs(const CsrMatrix<Value>& A, std::size_t value_bytes) {
  const std::uint64_t entry_bytes = value_bytes + index_bytes();
  const std::uint64_t nnz = static_cast<std::uint64_t>(A.nnz());
  const std::uint64_t rows = static_cast<std::uint64_t>(A.rows);
  // x once (ideal reuse, alpha = 1 / N_nzr) and y once, the same for every format.
  const std::uint64_t vector_traffic = (static_cast<std::uint64_t>(A.cols) + rows) * value_bytes;

  std::vector<Index> lengths(rows);
  for (Index i = 0; i < A.rows; ++i) lengths[i] = A.row_length(i);
  const Index padded = padded_row_count(A.rows, kWarp);
  const Index width = lengths.empty() ? 0 : *std::max_element(lengths.begin(), lengths.end());

  // CSR: 64-bit row offsets, read once each.
  const std::uint64_t csr_bytes = (rows + 1) * sizeof(Offset) + nnz * entry_bytes;
  // ELLPACK-R: the padded_rows x width rectangle and the row lengths; rows in their original order.
  const std::uint64_t ellpack_bytes =
      static_cast<std::uint64_t>(padded) * (static_cast<std::uint64_t>(width) * entry_bytes + index_bytes());
  // pJDS: rows sorted by length, each block of kWarp rows padded to its first (longest) row, plus the
  // permutation, the row lengths and the jagged-diagonal offsets.
  std::vector<Index> sorted = lengths;
  std::sort(sorted.begin(), sorted.end(), std::greater<>());
  std::uint64_t pjds_slots = 0;
  for (std::size_t block = 0; block < sorted.size(); block += kWarp)
    pjds_slots += static_cast<std::uint64_t>(sorted[block]) * kWarp;
  const std::uint64_t pjds_bytes = pjds_slots * entry_bytes + rows * index_bytes() +
                                   static_cast<std::uint64_t>(padded) * index_bytes() +
                                   (static_cast<std::uint64_t>(width) + 1) * sizeof(Offset);

  return {
      make_cost(SpmvFormat::csr, csr_bytes, csr_bytes, csr_bytes, vector_traffic, A.nnz()),
      make_cost(SpmvFormat::ellpack_r, ellpack_bytes, row_kernel_bytes(lengths, padded, value_bytes), csr_bytes,
                vector_traffic, A.nnz()),
      make_cost(SpmvFormat::pjds, pjds_bytes, row_kernel_bytes(sorted, padded, value_bytes), csr_bytes,
                vector_traffic, A.nnz()),
  };
}

FormatChoice choose_spmv_format(SpmvFormat requested, const std::vector<std::vector<FormatCost>>& levels,
                                const std::vector<int>& spmvs_per_cycle) {
  if (requested != SpmvFormat::automatic)
    return {requested, "requested (solver.spmv_format: " + format_name(requested) + ")"};
  if (levels.size() != spmvs_per_cycle.size()) throw Error("choose_spmv_format: one SpMV count per level needed");
  const SpmvFormat formats[] = {SpmvFormat::csr, SpmvFormat::ellpack_r, SpmvFormat::pjds};
  std::uint64_t moved[3] = {0, 0, 0};
  for (std::size_t l = 0; l < levels.size(); ++l) {
    const std::uint64_t spmvs = static_cast<std::uint64_t>(spmvs_per_cycle[l]) + (l == 0 ? 1 : 0);  // + PCG's
    for (std::size_t f = 0; f < 3; ++f) moved[f] += spmvs * levels[l].at(f).bytes_moved;
  }
  const std::size_t best = static_cast<std::size_t>(std::min_element(moved, moved + 3) - moved);
  std::string reason = "fewest bytes moved (model) in one PCG iteration: ";
  for (std::size_t f = 0; f < 3; ++f)
    reason += format_name(formats[f]) + " " + gigabytes(moved[f]) + (f + 1 < 3 ? ", " : "");
  return {formats[best], reason};
}

template std::vector<FormatCost> spmv_format_costs(const CsrMatrix<double>&, std::size_t);
template std::vector<FormatCost> spmv_format_costs(const CsrMatrix<float>&, std::size_t);

}  // namespace amgsolve
