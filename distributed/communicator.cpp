#include "distributed/communicator.hpp"

#include <cstdio>
#include <cstdlib>
#include <limits>
#include <numeric>

#include "common/error.hpp"
#include "common/timer.hpp"

namespace amgsolve {

template <>
MPI_Datatype mpi_type<double>() {
  return MPI_DOUBLE;
}
template <>
MPI_Datatype mpi_type<float>() {
  return MPI_FLOAT;
}
template <>
MPI_Datatype mpi_type<std::int64_t>() {
  return MPI_INT64_T;
}
template <>
MPI_Datatype mpi_type<std::int32_t>() {
  return MPI_INT32_T;
}
template <>
MPI_Datatype mpi_type<std::uint64_t>() {
  return MPI_UINT64_T;
}

Communicator::Communicator(MPI_Comm comm) {
  MPI_Comm_dup(comm, &comm_);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

int Communicator::rank_on_node() const {
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node);
  int rank = 0;
  MPI_Comm_rank(node, &rank);
  MPI_Comm_free(&node);
  return rank;
}

Communicator::~Communicator() {
  if (mpi_is_running()) MPI_Comm_free(&comm_);
}

double exact_sum_over(MPI_Comm comm, ExactSum partial) {
  partial.normalise();  // limbs below 2^32: the int64 sums over ranks cannot overflow
  MPI_Allreduce(MPI_IN_PLACE, partial.limbs().data(), ExactSum::kLimbs, MPI_INT64_T, MPI_SUM, comm);
  MPI_Allreduce(MPI_IN_PLACE, &partial.special(), 1, MPI_DOUBLE, MPI_SUM, comm);
  return partial.value();
}

double Communicator::sum(ExactSum partial) const {
  Timer timer;
  const double total = exact_sum_over(comm_, partial);
  ++stats_.reductions;
  stats_.reduction_seconds += timer.seconds();
  return total;
}

std::int64_t Communicator::sum(std::int64_t value) const {
  MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_INT64_T, MPI_SUM, comm_);
  ++stats_.reductions;
  return value;
}

std::int64_t Communicator::sum_before(std::int64_t value) const {
  std::int64_t before = 0;
  MPI_Exscan(&value, &before, 1, MPI_INT64_T, MPI_SUM, comm_);
  ++stats_.reductions;
  return rank_ == 0 ? 0 : before;  // MPI leaves rank 0's result undefined
}

double Communicator::max(double value) const {
  MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_DOUBLE, MPI_MAX, comm_);
  ++stats_.reductions;
  return value;
}

std::int64_t Communicator::min(std::int64_t value) const {
  MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_INT64_T, MPI_MIN, comm_);
  ++stats_.reductions;
  return value;
}

Communicator::Located Communicator::first_of_largest(std::int64_t index, double value) const {
  const double largest = max(index < 0 ? -1.0 : value);
  constexpr std::int64_t kNone = std::numeric_limits<std::int64_t>::max();
  const std::int64_t first = min(index >= 0 && value == largest ? index : kNone);
  if (first == kNone) return {};
  return {first, largest};
}

RankProblem first_rank_problem(MPI_Comm comm, const std::string& mine) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  RankProblem first;
  first.rank = mine.empty() ? size : rank;
  MPI_Allreduce(MPI_IN_PLACE, &first.rank, 1, MPI_INT, MPI_MIN, comm);
  if (first.rank == size) return {};
  first.text = mine;
  std::int64_t length = static_cast<std::int64_t>(first.text.size());
  MPI_Bcast(&length, 1, MPI_INT64_T, first.rank, comm);
  first.text.resize(static_cast<std::size_t>(length));
  MPI_Bcast(first.text.data(), static_cast<int>(length), MPI_CHAR, first.rank, comm);
  return first;
}

std::string Communicator::first_problem(const std::string& mine) const {
  ++stats_.reductions;
  return first_rank_problem(comm_, mine).message();
}

BlockPartition Communicator::partition_of(std::int64_t count) const {
  std::vector<std::int64_t> counts(static_cast<std::size_t>(size_));
  MPI_Allgather(&count, 1, MPI_INT64_T, counts.data(), 1, MPI_INT64_T, comm_);
  ++stats_.reductions;
  std::vector<std::int64_t> offsets(counts.size() + 1, 0);
  std::partial_sum(counts.begin(), counts.end(), offsets.begin() + 1);
  return BlockPartition::from_offsets(std::move(offsets));
}

template <class V>
void Communicator::allgather(const Vector<V>& local, const BlockPartition& partition, Vector<V>& global) const {
  Timer timer;
  if (static_cast<std::int64_t>(local.size()) != partition.count(rank_))
    abort_every_rank("allgather: this rank holds " + std::to_string(local.size()) + " entries, its range " +
                     std::to_string(partition.count(rank_)));
  if (partition.size() > INT32_MAX)
    abort_every_rank("allgather: " + std::to_string(partition.size()) + " entries are beyond MPI's int counts");
  std::vector<int> counts(static_cast<std::size_t>(size_)), displacements(static_cast<std::size_t>(size_));
  for (int r = 0; r < size_; ++r) {
    counts[static_cast<std::size_t>(r)] = static_cast<int>(partition.count(r));
    displacements[static_cast<std::size_t>(r)] = static_cast<int>(partition.begin(r));
  }
  global.resize(static_cast<std::size_t>(partition.size()));
  MPI_Allgatherv(local.data(), static_cast<int>(local.size()), mpi_type<V>(), global.data(), counts.data(),
                 displacements.data(), mpi_type<V>(), comm_);
  stats_.gathered_bytes += sizeof(V) * local.size() * static_cast<std::uint64_t>(size_ - 1);
  stats_.gather_seconds += timer.seconds();
}

template void Communicator::allgather(const Vector<double>&, const BlockPartition&, Vector<double>&) const;
template void Communicator::allgather(const Vector<float>&, const BlockPartition&, Vector<float>&) const;
template void Communicator::allgather(const Vector<std::int32_t>&, const BlockPartition&, Vector<std::int32_t>&) const;

OwnerRequests ask_owners(const Communicator& comm, const std::vector<std::int64_t>& asked,
                         const BlockPartition& partition) {
  const auto ranks = static_cast<std::size_t>(comm.size());
  OwnerRequests r;
  r.asked.assign(ranks, 0);
  for (std::int64_t g : asked) ++r.asked[static_cast<std::size_t>(partition.owner(g))];
  std::vector<int> wanted(ranks, 0), asked_at(ranks, 0);
  MPI_Alltoall(r.asked.data(), 1, MPI_INT, wanted.data(), 1, MPI_INT, comm.get());
  r.from.assign(ranks + 1, 0);
  for (std::size_t k = 0; k < ranks; ++k) {
    r.from[k + 1] = r.from[k] + wanted[k];
    if (k > 0) asked_at[k] = asked_at[k - 1] + r.asked[k - 1];
  }
  r.received.resize(static_cast<std::size_t>(r.from.back()));
  MPI_Alltoallv(asked.data(), r.asked.data(), asked_at.data(), MPI_INT64_T, r.received.data(), wanted.data(),
                r.from.data(), MPI_INT64_T, comm.get());
  return r;
}

int mpi_count(std::int64_t n, const std::string& what) {
  if (n > INT32_MAX) abort_every_rank(what + ": " + std::to_string(n) + " values are beyond MPI's int counts");
  return static_cast<int>(n);
}

std::vector<int> mpi_displacements(const std::vector<int>& counts, const std::string& what) {
  std::vector<int> at(counts.size(), 0);
  std::int64_t total = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    at[r] = static_cast<int>(total);
    total += counts[r];
  }
  mpi_count(total, what);
  return at;
}

std::uint64_t bytes_to_other_ranks(const std::vector<int>& counts, int rank, std::size_t value_bytes) {
  std::uint64_t values = 0;
  for (std::size_t r = 0; r < counts.size(); ++r)
    if (static_cast<int>(r) != rank) values += static_cast<std::uint64_t>(counts[r]);
  return values * value_bytes;
}

bool mpi_is_running() {
  int initialised = 0, finalised = 0;
  MPI_Initialized(&initialised);
  MPI_Finalized(&finalised);
  return initialised && !finalised;
}

bool running_on_several_ranks() {
  if (!mpi_is_running()) return false;
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size > 1;
}

void abort_every_rank(const std::string& message) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr, "amgsolve: internal error on rank %d: %s\n", rank, message.c_str());
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();  // not reached: MPI_Abort ends the process
}

}  // namespace amgsolve
