#include "distributed/spgemm/blocks.hpp"

#include <algorithm>
#include <queue>
#include <utility>

#include "common/error.hpp"
#include "common/parallel.hpp"
#include "distributed/communicator.hpp"

namespace amgsolve {

Range even_range(std::int64_t size, int parts, int part) {
  return {size * part / parts, size * (part + 1) / parts};
}

Range even_subrange(Range range, int parts, int part) {
  const Range r = even_range(range.size(), parts, part);
  return {range.begin + r.begin, range.begin + r.end};
}

template <class V>
CsrMatrix<V> cut_block(const CsrMatrix<V>& M, Range rows, Range columns) {
  CsrMatrix<V> B(static_cast<Index>(rows.size()), static_cast<Index>(columns.size()));
  for (std::int64_t i = rows.begin; i < rows.end; ++i) {
    for (Offset k = M.row_begin(static_cast<Index>(i)); k < M.row_end(static_cast<Index>(i)); ++k) {
      const Index j = M.col[static_cast<std::size_t>(k)];
      if (j < columns.begin || j >= columns.end) continue;
      B.col.push_back(static_cast<Index>(j - columns.begin));
      B.val.push_back(M.val[static_cast<std::size_t>(k)]);
    }
    B.row_ptr[static_cast<std::size_t>(i - rows.begin) + 1] = static_cast<Offset>(B.col.size());
  }
  return B;
}

template <class V>
CsrMatrix<V> join_columns(const std::vector<CsrMatrix<V>>& blocks) {
  if (blocks.empty()) return {};
  std::vector<Index> offsets;
  Index width = 0;
  for (const auto& b : blocks) offsets.push_back(width), width += b.cols;
  return concatenate_rows(blocks, offsets, width);
}

template <class V>
CsrMatrix<V> concatenate_rows(const std::vector<CsrMatrix<V>>& blocks, const std::vector<Index>& offsets, Index cols) {
  if (blocks.empty()) return {};
  CsrMatrix<V> J(blocks.front().rows, cols);
  // Each row's length over the blocks, then the rows filled side by side.
  Offset entries = 0;
  for (const CsrMatrix<V>& b : blocks) entries += b.nnz();
  const bool team = worth_a_team(static_cast<std::uint64_t>(entries));
#pragma omp parallel for schedule(static) if (team)
  for (Index i = 0; i < J.rows; ++i) {
    Offset length = 0;
    for (const CsrMatrix<V>& b : blocks) length += b.row_end(i) - b.row_begin(i);
    J.row_ptr[static_cast<std::size_t>(i) + 1] = length;
  }
  allocate_from_row_lengths(J);
#pragma omp parallel for schedule(static) if (team)
  for (Index i = 0; i < J.rows; ++i) {
    Offset at = J.row_begin(i);
    for (std::size_t l = 0; l < blocks.size(); ++l) {
      const CsrMatrix<V>& b = blocks[l];
      for (Offset k = b.row_begin(i); k < b.row_end(i); ++k, ++at) {
        J.col[static_cast<std::size_t>(at)] = b.col[static_cast<std::size_t>(k)] + offsets[l];
        J.val[static_cast<std::size_t>(at)] = b.val[static_cast<std::size_t>(k)];
      }
    }
  }
  return J;
}

template <class V>
CsrMatrix<V> stack_rows(const std::vector<CsrMatrix<V>>& blocks, Index cols) {
  CsrMatrix<V> S(0, cols);
  append_rows(blocks, S);
  return S;
}

template <class V>
void append_rows(const std::vector<CsrMatrix<V>>& blocks, CsrMatrix<V>& M) {
  for (const CsrMatrix<V>& b : blocks) {
    const auto base = static_cast<Offset>(M.col.size());
    for (Index i = 0; i < b.rows; ++i) M.row_ptr.push_back(base + b.row_end(i));
    M.col.insert(M.col.end(), b.col.begin(), b.col.end());
    M.val.insert(M.val.end(), b.val.begin(), b.val.end());
    M.rows += b.rows;
  }
}

template <class V>
CsrMatrix<V> merge_sum(const std::vector<CsrMatrix<V>>& blocks) {
  if (blocks.empty()) return {};
  CsrMatrix<V> S(blocks.front().rows, blocks.front().cols);
  // Per row, a heap of (column, list) heads: the smallest column next, lists in order on ties.
  using Head = std::pair<Index, std::size_t>;
  std::priority_queue<Head, std::vector<Head>, std::greater<Head>> heads;
  std::vector<Offset> next(blocks.size());
  for (Index i = 0; i < S.rows; ++i) {
    for (std::size_t l = 0; l < blocks.size(); ++l) {
      next[l] = blocks[l].row_begin(i);
      if (next[l] < blocks[l].row_end(i)) heads.push({blocks[l].col[static_cast<std::size_t>(next[l])], l});
    }
    while (!heads.empty()) {
      const auto [column, l] = heads.top();
      heads.pop();
      const V value = blocks[l].val[static_cast<std::size_t>(next[l])];
      if (S.col.size() > static_cast<std::size_t>(S.row_ptr[static_cast<std::size_t>(i)]) && S.col.back() == column)
        S.val.back() += value;
      else
        S.col.push_back(column), S.val.push_back(value);
      if (++next[l] < blocks[l].row_end(i)) heads.push({blocks[l].col[static_cast<std::size_t>(next[l])], l});
    }
    S.row_ptr[static_cast<std::size_t>(i) + 1] = static_cast<Offset>(S.col.size());
  }
  return S;
}

template <class V>
void PackedBlocks<V>::add(const CsrMatrix<V>& M) {
  header.insert(header.end(), {M.rows, M.cols, M.nnz()});
  row_ptr.insert(row_ptr.end(), M.row_ptr.begin(), M.row_ptr.end());
  col.insert(col.end(), M.col.begin(), M.col.end());
  val.insert(val.end(), M.val.begin(), M.val.end());
}

template <class V>
std::vector<CsrMatrix<V>> PackedBlocks<V>::unpack() const {
  std::vector<CsrMatrix<V>> blocks;
  std::size_t at_row = 0, at_entry = 0;
  for (std::size_t h = 0; h + 2 < header.size(); h += 3) {
    CsrMatrix<V> M(static_cast<Index>(header[h]), static_cast<Index>(header[h + 1]));
    const auto nnz = static_cast<std::size_t>(header[h + 2]);
    std::copy_n(row_ptr.begin() + static_cast<std::ptrdiff_t>(at_row), M.rows + 1, M.row_ptr.begin());
    M.col.assign(col.begin() + static_cast<std::ptrdiff_t>(at_entry), col.begin() + static_cast<std::ptrdiff_t>(at_entry + nnz));
    M.val.assign(val.begin() + static_cast<std::ptrdiff_t>(at_entry), val.begin() + static_cast<std::ptrdiff_t>(at_entry + nnz));
    at_row += static_cast<std::size_t>(M.rows) + 1;
    at_entry += nnz;
    blocks.push_back(std::move(M));
  }
  return blocks;
}

namespace {

template <class Container>
int count_of(const Container& v) {
  if (v.size() > static_cast<std::size_t>(INT32_MAX))
    abort_every_rank("distributed SpGEMM: a message of " + std::to_string(v.size()) +
                     " entries is beyond MPI's int counts");
  return static_cast<int>(v.size());
}

// at[r] = counts[0] + ... + counts[r - 1]; returns the total, which must fit MPI's int displacements.
int offsets_of(const std::vector<int>& counts, std::vector<int>& at) {
  std::int64_t total = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    at[r] = static_cast<int>(total);
    total += counts[r];
    if (total > INT32_MAX)
      abort_every_rank("distributed SpGEMM: " + std::to_string(total) + " entries received are beyond MPI's int counts");
  }
  return static_cast<int>(total);
}

// One array of each rank's pack sent to every other rank: counts first, then the data.
template <class T>
std::vector<T> all_to_all_array(const std::vector<std::vector<T>>& send, std::vector<int>& received_counts,
                                MPI_Comm comm) {
  const int ranks = static_cast<int>(send.size());
  std::vector<int> counts(static_cast<std::size_t>(ranks)), displacements(static_cast<std::size_t>(ranks));
  std::vector<T> flat;
  for (int r = 0; r < ranks; ++r) {
    displacements[static_cast<std::size_t>(r)] = count_of(flat);
    counts[static_cast<std::size_t>(r)] = count_of(send[static_cast<std::size_t>(r)]);
    flat.insert(flat.end(), send[static_cast<std::size_t>(r)].begin(), send[static_cast<std::size_t>(r)].end());
  }
  received_counts.assign(static_cast<std::size_t>(ranks), 0);
  MPI_Alltoall(counts.data(), 1, MPI_INT, received_counts.data(), 1, MPI_INT, comm);
  std::vector<int> received_at(static_cast<std::size_t>(ranks), 0);
  const int total = offsets_of(received_counts, received_at);
  std::vector<T> received(static_cast<std::size_t>(total));
  MPI_Alltoallv(flat.data(), counts.data(), displacements.data(), mpi_type<T>(), received.data(),
                received_counts.data(), received_at.data(), mpi_type<T>(), comm);
  return received;
}

// Every rank's array, in rank order.
template <class T>
std::vector<T> all_gather_array(const std::vector<T>& mine, std::vector<int>& counts, MPI_Comm comm) {
  int ranks = 1;
  MPI_Comm_size(comm, &ranks);
  counts.assign(static_cast<std::size_t>(ranks), 0);
  int count = count_of(mine);
  MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, comm);
  std::vector<int> at(static_cast<std::size_t>(ranks), 0);
  const int total = offsets_of(counts, at);
  std::vector<T> all(static_cast<std::size_t>(total));
  MPI_Allgatherv(mine.data(), count, mpi_type<T>(), all.data(), counts.data(), at.data(), mpi_type<T>(), comm);
  return all;
}

// Splits flat arrays by per-rank counts back into packs.
template <class V>
std::vector<PackedBlocks<V>> split_packs(const std::vector<std::int64_t>& header, const std::vector<int>& header_counts,
                                         const std::vector<Offset>& row_ptr, const std::vector<int>& row_counts,
                                         const std::vector<Index>& col, const std::vector<int>& entry_counts,
                                         const std::vector<V>& val) {
  std::vector<PackedBlocks<V>> packs(header_counts.size());
  std::size_t h = 0, r = 0, e = 0;
  auto slice = [](const auto& v, std::size_t at, int n) {
    const auto first = v.begin() + static_cast<std::ptrdiff_t>(at);
    return std::vector<typename std::decay_t<decltype(v)>::value_type>(first, first + n);
  };
  for (std::size_t k = 0; k < packs.size(); ++k) {
    packs[k].header = slice(header, h, header_counts[k]);
    packs[k].row_ptr = slice(row_ptr, r, row_counts[k]);
    packs[k].col = slice(col, e, entry_counts[k]);
    packs[k].val = slice(val, e, entry_counts[k]);
    h += static_cast<std::size_t>(header_counts[k]);
    r += static_cast<std::size_t>(row_counts[k]);
    e += static_cast<std::size_t>(entry_counts[k]);
  }
  return packs;
}

}  // namespace

template <class V>
std::uint64_t broadcast_block(CsrMatrix<V>& block, int root, MPI_Comm comm) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  std::int64_t shape[3] = {block.rows, block.cols, block.nnz()};
  MPI_Bcast(shape, 3, MPI_INT64_T, root, comm);
  if (rank != root) {
    block = CsrMatrix<V>(static_cast<Index>(shape[0]), static_cast<Index>(shape[1]));
    block.col.resize(static_cast<std::size_t>(shape[2]));
    block.val.resize(static_cast<std::size_t>(shape[2]));
  }
  MPI_Bcast(block.row_ptr.data(), count_of(block.row_ptr), mpi_type<Offset>(), root, comm);
  MPI_Bcast(block.col.data(), count_of(block.col), mpi_type<Index>(), root, comm);
  MPI_Bcast(block.val.data(), count_of(block.val), mpi_type<V>(), root, comm);
  // What the root's data costs to reach the others (the model's w (p-1)/p per rank, summed): counted at the root.
  return rank == root ? block.bytes() * static_cast<std::uint64_t>(ranks - 1) : 0;
}

template <class V>
std::uint64_t all_to_all_blocks(const std::vector<CsrMatrix<V>>& send, std::vector<CsrMatrix<V>>& received,
                                MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  // This rank's own block is copied once, not packed, sent to itself and unpacked.
  std::vector<PackedBlocks<V>> packs(send.size());
  std::uint64_t bytes = 0;
  for (std::size_t r = 0; r < send.size(); ++r) {
    if (static_cast<int>(r) == rank) continue;
    packs[r].add(send[r]);
    bytes += packs[r].bytes();
  }
  auto array = [&](auto member) {
    std::vector<std::decay_t<decltype(packs[0].*member)>> v;
    for (const auto& p : packs) v.push_back(p.*member);
    return v;
  };
  std::vector<int> hc, rc, ec, vc;
  const auto header = all_to_all_array(array(&PackedBlocks<V>::header), hc, comm);
  const auto row_ptr = all_to_all_array(array(&PackedBlocks<V>::row_ptr), rc, comm);
  const auto col = all_to_all_array(array(&PackedBlocks<V>::col), ec, comm);
  const auto val = all_to_all_array(array(&PackedBlocks<V>::val), vc, comm);
  received.clear();
  const std::vector<PackedBlocks<V>> arrived = split_packs<V>(header, hc, row_ptr, rc, col, ec, val);
  for (std::size_t r = 0; r < arrived.size(); ++r) {
    if (static_cast<int>(r) == rank) {
      received.push_back(send[r]);
      continue;
    }
    for (CsrMatrix<V>& b : arrived[r].unpack()) received.push_back(std::move(b));
  }
  return bytes;
}

template <class V>
std::uint64_t all_gather_blocks(const std::vector<CsrMatrix<V>>& mine, std::vector<CsrMatrix<V>>& all, MPI_Comm comm) {
  int ranks = 1;
  MPI_Comm_size(comm, &ranks);
  PackedBlocks<V> pack;
  for (const auto& b : mine) pack.add(b);
  std::vector<int> hc, rc, ec, vc;
  const auto header = all_gather_array(pack.header, hc, comm);
  const auto row_ptr = all_gather_array(pack.row_ptr, rc, comm);
  const auto col = all_gather_array(pack.col, ec, comm);
  const auto val = all_gather_array(pack.val, vc, comm);
  all.clear();
  for (const PackedBlocks<V>& p : split_packs<V>(header, hc, row_ptr, rc, col, ec, val))
    for (CsrMatrix<V>& b : p.unpack()) all.push_back(std::move(b));
  return pack.bytes() * static_cast<std::uint64_t>(ranks - 1);
}

#define AMGSOLVE_INSTANTIATE_BLOCKS(V)                                                                        \
  template CsrMatrix<V> cut_block(const CsrMatrix<V>&, Range, Range);                                         \
  template CsrMatrix<V> join_columns(const std::vector<CsrMatrix<V>>&);                                       \
  template CsrMatrix<V> merge_sum(const std::vector<CsrMatrix<V>>&);                                          \
  template CsrMatrix<V> stack_rows(const std::vector<CsrMatrix<V>>&, Index);                                         \
  template void append_rows(const std::vector<CsrMatrix<V>>&, CsrMatrix<V>&);                                        \
  template CsrMatrix<V> concatenate_rows(const std::vector<CsrMatrix<V>>&, const std::vector<Index>&, Index);                                          \
  template struct PackedBlocks<V>;                                                                            \
  template std::uint64_t broadcast_block(CsrMatrix<V>&, int, MPI_Comm);                                       \
  template std::uint64_t all_to_all_blocks(const std::vector<CsrMatrix<V>>&, std::vector<CsrMatrix<V>>&, MPI_Comm); \
  template std::uint64_t all_gather_blocks(const std::vector<CsrMatrix<V>>&, std::vector<CsrMatrix<V>>&, MPI_Comm);
AMGSOLVE_INSTANTIATE_BLOCKS(double)
AMGSOLVE_INSTANTIATE_BLOCKS(float)

}  // namespace amgsolve
