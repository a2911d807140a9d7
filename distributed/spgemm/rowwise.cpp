#include "distributed/spgemm/rowwise.hpp"

#include <algorithm>
#include <string>

#include "common/error.hpp"
#include "common/timer.hpp"
#include "distributed/partition.hpp"
#include "distributed/spgemm/blocks.hpp"
#include "spgemm/numeric_product.hpp"

namespace amgsolve {

namespace {

// The rows of B (local numbers) that each rank asked for, as one block per asking rank.
template <class V>
std::vector<CsrMatrix<V>> requested_rows(const CsrMatrix<V>& B_rows, const std::vector<std::int64_t>& asked,
                                         const std::vector<int>& counts, std::int64_t first_row) {
  std::vector<CsrMatrix<V>> blocks;
  std::size_t at = 0;
  for (int count : counts) {
    CsrMatrix<V> rows(count, B_rows.cols);
    for (int r = 0; r < count; ++r, ++at) {
      const auto i = static_cast<Index>(asked[at] - first_row);
      rows.col.insert(rows.col.end(), B_rows.col.begin() + B_rows.row_begin(i), B_rows.col.begin() + B_rows.row_end(i));
      rows.val.insert(rows.val.end(), B_rows.val.begin() + B_rows.row_begin(i), B_rows.val.begin() + B_rows.row_end(i));
      rows.row_ptr[static_cast<std::size_t>(r) + 1] = static_cast<Offset>(rows.col.size());
    }
    blocks.push_back(std::move(rows));
  }
  return blocks;
}

}  // namespace

template <class V>
CsrMatrix<V> rowwise_multiply(const Communicator& comm, const CsrMatrix<V>& A_rows, const CsrMatrix<V>& B_rows,
                              const SpgemmBackend& local, SpgemmStats& stats) {
  const BlockPartition inner(A_rows.cols, comm.size());
  const std::int64_t own_first = inner.begin(comm.rank()), own_last = inner.end(comm.rank());
  // The B rows this rank's A references elsewhere, sorted (so each owner's are contiguous), and A's
  // columns renumbered onto them: own rows first, then these.
  std::vector<std::int64_t> needed;
  for (Index j : A_rows.col)
    if (j < own_first || j >= own_last) needed.push_back(j);
  std::sort(needed.begin(), needed.end());
  needed.erase(std::unique(needed.begin(), needed.end()), needed.end());
  CsrMatrix<V> A_local = A_rows;
  A_local.cols = static_cast<Index>(own_last - own_first + static_cast<std::int64_t>(needed.size()));
  for (Index& j : A_local.col)
    j = j >= own_first && j < own_last
            ? static_cast<Index>(j - own_first)
            : static_cast<Index>(own_last - own_first) +
                  static_cast<Index>(std::lower_bound(needed.begin(), needed.end(), j) - needed.begin());
  return rowwise_multiply_local(comm, A_local, needed, A_rows.cols, B_rows, local, stats);
}

template <class V>
CsrMatrix<V> rowwise_multiply_local(const Communicator& comm, const CsrMatrix<V>& A_local,
                                    const std::vector<std::int64_t>& ghosts, std::int64_t inner, CsrMatrix<V> B_rows,
                                    const SpgemmBackend& local, SpgemmStats& stats, const CsrMatrix<V>* pattern) {
  const BlockPartition rows_of_B(inner, comm.size());
  Timer timer;
  const OwnerRequests requests = ask_owners(comm, ghosts, rows_of_B);
  std::vector<int> wanted(static_cast<std::size_t>(comm.size()));
  for (std::size_t r = 0; r < wanted.size(); ++r) wanted[r] = requests.from[r + 1] - requests.from[r];
  std::vector<CsrMatrix<V>> fetched;
  std::uint64_t bytes = sizeof(std::int64_t) * ghosts.size();
  bytes += all_to_all_blocks(requested_rows(B_rows, requests.received, wanted, rows_of_B.begin(comm.rank())), fetched,
                             comm.get());
  stats.phases.push_back({"fetch B rows", timer.seconds(), bytes});

  // B's rows in A's local column order: the own rows, then the fetched ones (in `ghosts` order).
  timer.restart();
  append_rows(fetched, B_rows);
  SpgemmStats local_stats;
  CsrMatrix<V> C;
  if (pattern) {
    try {
      C = numeric_product(A_local, B_rows, *pattern, &local_stats.multiplications);
    } catch (const Error& e) {  // the patterns agreed on every rank: one that no longer holds is a bug here
      abort_every_rank("rowwise numeric product: " + std::string(e.what()));
    }
  } else {
    C = local.multiply(A_local, B_rows, &local_stats);
  }
  stats.multiplications += local_stats.multiplications;
  stats.phases.push_back({"local multiply", timer.seconds(), 0});
  return C;
}

template CsrMatrix<double> rowwise_multiply(const Communicator&, const CsrMatrix<double>&, const CsrMatrix<double>&,
                                            const SpgemmBackend&, SpgemmStats&);
template CsrMatrix<float> rowwise_multiply(const Communicator&, const CsrMatrix<float>&, const CsrMatrix<float>&,
                                           const SpgemmBackend&, SpgemmStats&);
template CsrMatrix<double> rowwise_multiply_local(const Communicator&, const CsrMatrix<double>&,
                                                  const std::vector<std::int64_t>&, std::int64_t, CsrMatrix<double>,
                                                  const SpgemmBackend&, SpgemmStats&, const CsrMatrix<double>*);
template CsrMatrix<float> rowwise_multiply_local(const Communicator&, const CsrMatrix<float>&,
                                                 const std::vector<std::int64_t>&, std::int64_t, CsrMatrix<float>,
                                                 const SpgemmBackend&, SpgemmStats&, const CsrMatrix<float>*);

}  // namespace amgsolve
