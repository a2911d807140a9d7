#include "app/ranks.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <limits>
#include <memory>
#include <numeric>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <thread>

#include "common/error.hpp"
#include "common/memory.hpp"
#include "problems/problem.hpp"
#include "sparse/csr_ops.hpp"
#include "sparse/matrix_market.hpp"
#ifdef AMGSOLVE_WITH_MPI
#include <mpi.h>

#include "distributed/communicator.hpp"
#include "distributed/partition.hpp"
#include "distributed/spgemm/backends.hpp"
#endif

namespace amgsolve {

namespace {

// One process reads the whole file.
MatrixRows whole_matrix_market(const std::string& path) {
  MatrixRows whole;
  whole.rows = read_matrix_market(path);
  whole.global_rows = whole.rows.rows;
  whole.partition = BlockPartition(whole.global_rows, 1);
  return whole;
}

}  // namespace

#ifdef AMGSOLVE_WITH_MPI
namespace {

constexpr std::int64_t kMaxMessage = std::int64_t{1} << 30;  // elements per MPI call (counts are ints)

// Whether a launcher started this process as one of a job's ranks (OpenMPI, PMIx, MPICH's hydra). Plain
// `amgsolve` does not start MPI, so one-process runs never depend on it.
bool launched_by_mpirun() {
  for (const char* variable : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"})
    if (std::getenv(variable)) return true;
  return false;
}

// The ranks on this process's node (those that share its memory, as MPI sees it).
int ranks_sharing_memory() {
  MPI_Comm node = MPI_COMM_NULL;
  if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS) return 1;
  int ranks = 1;
  MPI_Comm_size(node, &ranks);
  MPI_Comm_free(&node);
  return ranks;
}

// The barrier of every_rank_arrives_within runs on a communicator of its own, so that it is never matched
// with a collective of the computation that other ranks may be waiting in.
MPI_Comm errors_communicator = MPI_COMM_NULL;

}  // namespace

Ranks::Ranks(int& argc, char**& argv) {
  register_distributed_spgemm_backends();  // listed everywhere, available under mpirun
  if (!launched_by_mpirun()) return;
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_dup(MPI_COMM_WORLD, &errors_communicator);
  set_ranks_on_this_node(ranks_sharing_memory());
}

Ranks::~Ranks() {
  if (!mpi_is_running()) return;
  if (errors_communicator != MPI_COMM_NULL) MPI_Comm_free(&errors_communicator);
  MPI_Finalize();
}

bool Ranks::every_rank_arrives_within(std::chrono::milliseconds wait) {
  if (size() == 1) return true;
  MPI_Request arrived = MPI_REQUEST_NULL;
  MPI_Ibarrier(errors_communicator, &arrived);
  const auto until = std::chrono::steady_clock::now() + wait;
  for (int done = 0;;) {
    MPI_Test(&arrived, &done, MPI_STATUS_IGNORE);
    if (done) return true;
    if (std::chrono::steady_clock::now() >= until) return false;  // the barrier is left pending: abort_all follows
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

int Ranks::rank() {
  int rank = 0;
  if (mpi_is_running()) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

int Ranks::size() {
  int size = 1;
  if (mpi_is_running()) MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

void Ranks::abort_all(int code) {
  if (mpi_is_running() && size() > 1) MPI_Abort(MPI_COMM_WORLD, code);
  std::exit(code);
}

namespace {

std::int64_t reduce(std::int64_t value, MPI_Op op) {
  if (Ranks::size() == 1) return value;
  MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_INT64_T, op, MPI_COMM_WORLD);
  return value;
}

}  // namespace

std::int64_t Ranks::sum(std::int64_t value) { return reduce(value, MPI_SUM); }
std::int64_t Ranks::max(std::int64_t value) { return reduce(value, MPI_MAX); }

void collectively(const std::function<void()>& f) {
  if (Ranks::size() == 1) return f();
  std::string message;
  bool failed = false;
  try {
    f();
  } catch (const std::bad_alloc&) {
    message = "out of memory (try a smaller problem or more ranks)";
    failed = true;
  } catch (const std::exception& e) {
    message = e.what();
    failed = true;
  }
  if (failed && message.empty()) message = "an error without a message";
  const RankProblem first = first_rank_problem(MPI_COMM_WORLD, failed ? message : std::string());
  if (first.rank < 0) return;
  throw Error(first.message());
}

double Ranks::sum(const ExactSum& partial) { return exact_sum_over(MPI_COMM_WORLD, partial); }

namespace {

// Each rank's count of entries, on rank 0 (empty elsewhere).
std::vector<std::int64_t> counts_on_first(std::size_t mine) {
  std::vector<std::int64_t> counts(Ranks::prints() ? static_cast<std::size_t>(Ranks::size()) : 0);
  const auto count = static_cast<std::int64_t>(mine);
  MPI_Gather(&count, 1, MPI_INT64_T, counts.data(), 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
  return counts;
}

// n entries from `from` to `to` (one of them this rank), a message of at most kMaxMessage at a time.
template <class T>
void send_entries(T* data, std::int64_t n, int from, int to) {
  constexpr int tag = 3141;
  const MPI_Datatype type = mpi_type<T>();
  for (std::int64_t at = 0; at < n; at += kMaxMessage) {
    const int count = static_cast<int>(std::min<std::int64_t>(kMaxMessage, n - at));
    if (Ranks::rank() == from)
      MPI_Send(data + at, count, type, to, tag, MPI_COMM_WORLD);
    else
      MPI_Recv(data + at, count, type, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
}

}  // namespace

void scatter_from_first(Vector<double>& v) {
  if (Ranks::size() == 1) return;
  const std::vector<std::int64_t> counts = counts_on_first(Ranks::prints() ? 0 : v.size());
  if (!Ranks::prints()) return send_entries(v.data(), static_cast<std::int64_t>(v.size()), 0, Ranks::rank());
  std::int64_t first = 0;  // rank 0's own rows lead: the others' follow in rank order
  for (int r = 1; r < Ranks::size(); ++r) first += counts[static_cast<std::size_t>(r)];
  first = static_cast<std::int64_t>(v.size()) - first;
  if (first < 0) {  // an internal error: the others' rows exceed rank 0's vector, and they wait for them
    std::fprintf(stderr, "amgsolve: error: internal: the ranks' rows of a vector exceed its %zu entries\n", v.size());
    Ranks::abort_all(1);
  }
  std::int64_t at = first;
  for (int r = 1; r < Ranks::size(); ++r) {
    send_entries(v.data() + at, counts[static_cast<std::size_t>(r)], 0, r);
    at += counts[static_cast<std::size_t>(r)];
  }
  Vector<double>(v.begin(), v.begin() + first).swap(v);  // the whole one let go of
}

void scatter_from_first(std::vector<Vector<double>>& vectors) {
  for (Vector<double>& v : vectors) scatter_from_first(v);
}

template <class T>
Array<T> gather_on_first(const Array<T>& mine) {
  if (Ranks::size() == 1) return mine;
  const std::vector<std::int64_t> counts = counts_on_first(mine.size());
  Array<T> whole;
  collectively([&] {
    if (Ranks::prints()) whole.resize(static_cast<std::size_t>(std::accumulate(counts.begin(), counts.end(), std::int64_t{0})));
  });
  if (!Ranks::prints()) {
    send_entries(const_cast<T*>(mine.data()), static_cast<std::int64_t>(mine.size()), Ranks::rank(), 0);
    return whole;
  }
  std::copy(mine.begin(), mine.end(), whole.begin());
  std::int64_t at = static_cast<std::int64_t>(mine.size());
  for (int r = 1; r < Ranks::size(); ++r) {
    send_entries(whole.data() + at, counts[static_cast<std::size_t>(r)], r, 0);
    at += counts[static_cast<std::size_t>(r)];
  }
  return whole;
}

template Array<double> gather_on_first(const Array<double>&);
template Array<Index> gather_on_first(const Array<Index>&);

namespace {

constexpr std::size_t kBatchEntries = std::size_t{1} << 20;  // rank 0 deals out 16 MiB of entries at a time

// A matrix entry as MPI moves it: 16 bytes, so that counts are entries (not bytes) and stay ints longer.
MPI_Datatype triplet_type() {
  static const MPI_Datatype type = [] {
    MPI_Datatype t;
    MPI_Type_contiguous(static_cast<int>(sizeof(Triplet<double>)), MPI_BYTE, &t);
    MPI_Type_commit(&t);
    return t;
  }();
  return type;
}

// Runs f on rank 0 alone; if it throws, every rank throws the same error (an InputError stays one).
void on_first_rank(const std::function<void()>& f) {
  int outcome[2] = {0, 0};  // 1: an input error, 2: another error; the message's length
  std::string message;
  if (Ranks::prints()) {
    try {
      f();
    } catch (const InputError& e) {
      message = e.what();
      outcome[0] = 1;
    } catch (const std::bad_alloc&) {
      message = "out of memory on rank 0 (try a smaller problem)";
      outcome[0] = 2;
    } catch (const std::exception& e) {
      message = e.what();
      outcome[0] = 2;
    }
    outcome[1] = static_cast<int>(message.size());
  }
  MPI_Bcast(outcome, 2, MPI_INT, 0, MPI_COMM_WORLD);
  if (outcome[0] == 0) return;
  message.resize(static_cast<std::size_t>(outcome[1]));
  MPI_Bcast(message.data(), outcome[1], MPI_CHAR, 0, MPI_COMM_WORLD);
  if (outcome[0] == 1) throw InputError(message);
  throw Error(message);
}

// Entries sent to the ranks that own their rows (global rows of `partition`) and received from every rank:
// what this rank receives, in rank order. all_to_all: every rank sends; otherwise rank 0 alone (a scatter).
std::vector<Triplet<double>> route(const std::vector<Triplet<double>>& entries, const BlockPartition& partition,
                                   bool all_to_all) {
  const int ranks = Ranks::size();
  // MPI counts are ints: more than that on any rank is the same error on every rank, before any exchange.
  if (Ranks::max(entries.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()) ? 1 : 0) > 0)
    throw Error("a rank would send more than 2^31 matrix entries at once: use more ranks");
  std::vector<int> send_counts(static_cast<std::size_t>(ranks), 0), send_offsets(send_counts);
  std::vector<int> owners(entries.size());
  for (std::size_t e = 0; e < entries.size(); ++e) {
    owners[e] = partition.owner(entries[e].row);
    ++send_counts[static_cast<std::size_t>(owners[e])];
  }
  for (int r = 1; r < ranks; ++r) send_offsets[r] = send_offsets[r - 1] + send_counts[r - 1];
  std::vector<Triplet<double>> ordered(entries.size());
  std::vector<int> next = send_offsets;
  for (std::size_t e = 0; e < entries.size(); ++e) ordered[static_cast<std::size_t>(next[owners[e]]++)] = entries[e];
  std::vector<Triplet<double>> received;
  if (all_to_all) {
    std::vector<int> receive_counts(send_counts.size()), receive_offsets(send_counts.size(), 0);
    MPI_Alltoall(send_counts.data(), 1, MPI_INT, receive_counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
    std::size_t total = 0;
    for (int r = 0; r < ranks; ++r) total += static_cast<std::size_t>(receive_counts[r]);
    if (Ranks::max(total > static_cast<std::size_t>(std::numeric_limits<int>::max()) ? 1 : 0) > 0)
      throw Error("a rank would receive more than 2^31 matrix entries at once: use more ranks");
    for (int r = 1; r < ranks; ++r) receive_offsets[r] = receive_offsets[r - 1] + receive_counts[r - 1];
    received.resize(total);
    MPI_Alltoallv(ordered.data(), send_counts.data(), send_offsets.data(), triplet_type(), received.data(),
                  receive_counts.data(), receive_offsets.data(), triplet_type(), MPI_COMM_WORLD);
  } else {
    int count = 0;
    MPI_Scatter(send_counts.data(), 1, MPI_INT, &count, 1, MPI_INT, 0, MPI_COMM_WORLD);
    received.resize(static_cast<std::size_t>(count));
    MPI_Scatterv(ordered.data(), send_counts.data(), send_offsets.data(), triplet_type(), received.data(), count,
                 triplet_type(), 0, MPI_COMM_WORLD);
  }
  return received;
}

}  // namespace

MatrixRows read_matrix_market_rows(const std::string& path, int block_size) {
  if (Ranks::size() == 1) return whole_matrix_market(path);
  std::unique_ptr<MatrixMarketReader> reader;
  std::int64_t shape[4] = {0, 0, 0, 0};  // rows, columns, entries stored with mirrors, symmetric storage
  on_first_rank([&] {
    reader = std::make_unique<MatrixMarketReader>(path);
    const MatrixMarketHeader& h = reader->header();
    shape[0] = h.rows;
    shape[1] = h.cols;
    shape[2] = h.entries_with_mirrors();
    shape[3] = h.symmetry == "symmetric" ? 1 : 0;
  });
  MPI_Bcast(shape, 4, MPI_INT64_T, 0, MPI_COMM_WORLD);
  const int ranks = Ranks::size();
  // Each rank's share of the matrix, of its reading and of the setup.
  collectively([&] {
    require_memory_of_each_rank(estimated_read_and_solve_bytes(shape[0] / ranks + 1, shape[2] / ranks + 1),
                                "this rank's share of the matrix in " + path);
  });
  const BlockPartition partition(shape[0], ranks, node_partition_unit(block_size));
  std::vector<Triplet<double>> mine, batch;
  for (int more = 1; more;) {
    batch.clear();
    on_first_rank([&] { more = reader->next_batch(batch, kBatchEntries) ? 1 : 0; });
    MPI_Bcast(&more, 1, MPI_INT, 0, MPI_COMM_WORLD);
    const std::vector<Triplet<double>> part = route(batch, partition, false);
    mine.insert(mine.end(), part.begin(), part.end());
  }
  reader.reset();
  const std::int64_t first = partition.begin(Ranks::rank());
  for (Triplet<double>& t : mine) t.row = static_cast<Index>(t.row - first);
  MatrixRows result;
  result.global_rows = shape[0];
  result.symmetric_storage = shape[3] == 1;
  result.partition = partition;
  std::pair<Index, Index> duplicate{-1, -1};
  result.rows = csr_from_triplets(static_cast<Index>(partition.count(Ranks::rank())), static_cast<Index>(shape[1]),
                                  std::move(mine), &duplicate);
  // The first place in row order over all ranks, as one process names it, on every rank.
  constexpr std::int64_t kNone = std::numeric_limits<std::int64_t>::max();
  const std::int64_t cols = std::max<std::int64_t>(shape[1], 1);
  const std::int64_t place = duplicate.first >= 0 ? (duplicate.first + first) * cols + duplicate.second : kNone;
  if (const std::int64_t earliest = -Ranks::max(-place); earliest != kNone)
    throw InputError(duplicate_entries_message(path, static_cast<Index>(earliest / cols),
                                               static_cast<Index>(earliest % cols), result.symmetric_storage));
  return result;
}

void require_spd_candidate_rows(const std::string& name, const MatrixRows& matrix) {
  if (Ranks::size() == 1) return require_spd_candidate(name, matrix.rows);
  const CsrMatrix<double>& rows = matrix.rows;
  const std::int64_t global_rows = matrix.global_rows;
  if (global_rows == 0) throw InputError(name + ": the matrix is empty (0 rows): nothing to solve");
  if (rows.cols != global_rows)  // the same on every rank: both come from the header
    throw InputError(name + ": matrix is " + std::to_string(global_rows) + "x" + std::to_string(rows.cols) +
                     ", not square");
  const BlockPartition& partition = matrix.partition;
  const std::int64_t first = partition.begin(Ranks::rank());
  // The first diagonal entry that is not a positive normal number, over the ranks: 3 row + (0: zero or
  // missing, 1: negative or NaN, 2: subnormal, whose value its rank then gives every rank for the message).
  std::int64_t first_bad = std::numeric_limits<std::int64_t>::max();
  const Vector<double> d = diagonal(rows, static_cast<Index>(first));
  for (Index i = 0; i < rows.rows; ++i)
    if (!(d[i] >= std::numeric_limits<double>::min())) {
      first_bad = 3 * (first + i) + (d[i] == 0 ? 0 : d[i] > 0 ? 2 : 1);
      break;
    }
  MPI_Allreduce(MPI_IN_PLACE, &first_bad, 1, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD);
  if (first_bad != std::numeric_limits<std::int64_t>::max()) {
    const std::int64_t row = first_bad / 3;
    const int kind = static_cast<int>(first_bad % 3);
    double value = kind == 0 ? 0.0 : -1.0;
    if (kind == 2) {
      value = row >= first && row < first + rows.rows ? d[static_cast<std::size_t>(row - first)] : 0.0;
      MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    }
    require_positive_diagonal_entry(name, static_cast<Index>(row), value);
  }
  if (matrix.symmetric_storage) return;  // each entry was stored once and mirrored by the reader
  // Each entry against its mirror: this rank's rows of A^T come from the ranks that hold their columns.
  std::vector<Triplet<double>> entries;
  entries.reserve(static_cast<std::size_t>(rows.nnz()));
  for (Index i = 0; i < rows.rows; ++i)
    for (Offset k = rows.row_begin(i); k < rows.row_end(i); ++k)
      entries.push_back({rows.col[k], static_cast<Index>(first + i), rows.val[k]});
  std::vector<Triplet<double>> mirrored = route(entries, partition, true);
  entries = {};
  // And each entry's column's diagonal (the differences are measured against the diagonals), sent back by
  // the rank that holds that column's row: (i, j, a_jj) for every stored a_ij.
  for (const Triplet<double>& t : mirrored)
    entries.push_back({t.col, t.row, d[static_cast<std::size_t>(t.row - first)]});
  std::vector<Triplet<double>> diagonals = route(entries, partition, true);
  entries = {};
  for (Triplet<double>& t : mirrored) t.row = static_cast<Index>(t.row - first);
  for (Triplet<double>& t : diagonals) t.row = static_cast<Index>(t.row - first);
  const CsrMatrix<double> transposed = csr_from_triplets(rows.rows, rows.cols, std::move(mirrored));
  const CsrMatrix<double> column_diagonals = csr_from_triplets(rows.rows, rows.cols, std::move(diagonals));
  const Asymmetry mine = largest_asymmetry(rows, transposed, column_diagonals, static_cast<Index>(first));
  std::vector<Asymmetry> all(static_cast<std::size_t>(Ranks::size()));
  MPI_Allgather(&mine, sizeof(Asymmetry), MPI_BYTE, all.data(), sizeof(Asymmetry), MPI_BYTE, MPI_COMM_WORLD);
  require_symmetry(name, worst_asymmetry(all));
}

std::vector<RankLoad> gather_rank_loads(const RankLoad& mine) {
  if (Ranks::size() == 1) return {};
  std::vector<RankLoad> all(Ranks::prints() ? static_cast<std::size_t>(Ranks::size()) : 0);
  MPI_Gather(&mine, sizeof(RankLoad), MPI_BYTE, all.data(), sizeof(RankLoad), MPI_BYTE, 0, MPI_COMM_WORLD);
  return all;
}

#else  // one process

Ranks::Ranks(int&, char**&) {}
Ranks::~Ranks() = default;
int Ranks::rank() { return 0; }
int Ranks::size() { return 1; }
std::int64_t Ranks::sum(std::int64_t value) { return value; }
std::int64_t Ranks::max(std::int64_t value) { return value; }
void Ranks::abort_all(int code) { std::exit(code); }
bool Ranks::every_rank_arrives_within(std::chrono::milliseconds) { return true; }
void collectively(const std::function<void()>& f) { f(); }
std::vector<RankLoad> gather_rank_loads(const RankLoad&) { return {}; }
double Ranks::sum(const ExactSum& partial) { return partial.value(); }
void scatter_from_first(Vector<double>&) {}
void scatter_from_first(std::vector<Vector<double>>&) {}
template <class T>
Array<T> gather_on_first(const Array<T>& mine) {
  return mine;
}
template Array<double> gather_on_first(const Array<double>&);
template Array<Index> gather_on_first(const Array<Index>&);
MatrixRows read_matrix_market_rows(const std::string& path, int /*block_size*/) { return whole_matrix_market(path); }
void require_spd_candidate_rows(const std::string& name, const MatrixRows& matrix) {
  require_spd_candidate(name, matrix.rows);
}

#endif

}  // namespace amgsolve
