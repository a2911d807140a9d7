#pragma once
// The ranks of an MPI run as the distributed layer sees them: who this rank is, the exact global sum of the
// ranks' partial sums (so reductions do not depend on the rank count), gathering a block-distributed vector,
// and what all of it cost (bytes, messages, seconds waiting), for the report.
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/device.hpp"
#include "common/exact_sum.hpp"
#include "distributed/partition.hpp"
#include "sparse/csr.hpp"

namespace amgsolve {

// The MPI datatype of a value type (float, double, std::int64_t, std::int32_t, std::uint64_t).
template <class T>
MPI_Datatype mpi_type();
template <>
MPI_Datatype mpi_type<double>();
template <>
MPI_Datatype mpi_type<float>();
template <>
MPI_Datatype mpi_type<std::int64_t>();
template <>
MPI_Datatype mpi_type<std::int32_t>();
template <>
MPI_Datatype mpi_type<std::uint64_t>();

// The lowest-numbered rank whose `mine` is not empty, and its text, on every rank of comm ({-1, ""} where no
// rank has one): how a problem one rank finds becomes the same error on every rank, never a rank left
// waiting. Collective: every rank calls it, whatever it found.
struct RankProblem {
  int rank = -1;
  std::string text;
  // The one line every rank throws: the text, after the rank that found it where that is not rank 0 (whose
  // problems are the run's own: a file it reads, an output it writes).
  std::string message() const { return rank <= 0 ? text : "rank " + std::to_string(rank) + ": " + text; }
};
RankProblem first_rank_problem(MPI_Comm comm, const std::string& mine);
// The exact sum over comm's ranks of each one's partial sum (common/exact_sum.hpp): the same value on every
// rank and for any rank count. Collective.
double exact_sum_over(MPI_Comm comm, ExactSum partial);

class Communicator {
 public:
  // A duplicate of comm (MPI_Comm_dup, collective), so that the layer's messages never meet the caller's.
  explicit Communicator(MPI_Comm comm = MPI_COMM_WORLD);
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  MPI_Comm get() const { return comm_; }
  // This rank's number among the ranks on its node (shared memory): which of the node's GPUs it takes.
  // Collective.
  int rank_on_node() const;

  // The sum over the ranks of each one's exact partial sum, rounded once: the same double on every rank,
  // and the same as one process summing everything.
  double sum(ExactSum partial) const;
  std::int64_t sum(std::int64_t value) const;
  // The sum of the values of the ranks before this one (0 on rank 0): where this rank's part starts.
  std::int64_t sum_before(std::int64_t value) const;
  double max(double value) const;
  std::int64_t min(std::int64_t value) const;
  // The largest of the ranks' values (each >= 0, at a global index; index -1: this rank has none) and the
  // first index holding it, as one process scanning in order finds it; index -1 where no rank has one.
  struct Located {
    std::int64_t index = -1;
    double value = 0.0;
  };
  Located first_of_largest(std::int64_t index, double value) const;
  // The first rank's problem (text non-empty) on every rank, as RankProblem::message says it, or "" where no
  // rank has one.
  std::string first_problem(const std::string& mine) const;
  // The ranks' consecutive ranges of `count` entries each (every rank its own count), on every rank: the
  // partition of what the ranks hold, however it was cut. Collective.
  BlockPartition partition_of(std::int64_t count) const;
  // The global vector of a block-distributed one (every rank's range of `partition`), on every rank.
  template <class V>
  void allgather(const Vector<V>& local, const BlockPartition& partition, Vector<V>& global) const;

  CommunicationStats& stats() const { return stats_; }

 private:
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
  mutable CommunicationStats stats_;
};

// What each rank asked this one for: `asked` holds global indices owned elsewhere, sorted; each goes to
// its owner in `partition`. Collective. received[from[r] .. from[r + 1]) came from rank r.
struct OwnerRequests {
  std::vector<int> asked;             // per rank: how many of `asked` went to it
  std::vector<std::int64_t> received;  // the indices other ranks asked this one for, by asking rank
  std::vector<int> from;              // offsets into received, ranks + 1 entries
};
OwnerRequests ask_owners(const Communicator& comm, const std::vector<std::int64_t>& asked,
                         const BlockPartition& partition);

// MPI initialised and not yet finalised.
bool mpi_is_running();
// True when this process is one of several MPI ranks: then amgsolve::Solver distributes the solve.
bool running_on_several_ranks();

// An error only this rank can see, inside work the other ranks do collectively (an internal invariant,
// a message beyond MPI's int counts): throwing would leave them waiting, so every rank is ended here,
// with one line naming the rank.
[[noreturn]] void abort_every_rank(const std::string& message);

// n as an MPI count (an int), or every rank ended, the message naming `what` is sent.
int mpi_count(std::int64_t n, const std::string& what);
// Where each rank's part starts in a buffer of these counts (an all-to-allv's displacements); a total
// beyond MPI's int displacements ends every rank likewise.
std::vector<int> mpi_displacements(const std::vector<int>& counts, const std::string& what);
// The bytes an all-to-all of these counts (values of `value_bytes` each) sends to ranks other than `rank`.
std::uint64_t bytes_to_other_ranks(const std::vector<int>& counts, int rank, std::size_t value_bytes);

// send[r] to rank r of comm, received[r] from rank r, values of a type mpi_type knows; the bytes sent to
// other ranks are counted as halo traffic. Collective; a count beyond MPI's ints ends every rank.
template <class T>
void all_to_all(const Communicator& comm, const std::vector<std::vector<T>>& send,
                std::vector<std::vector<T>>& received) {
  const auto ranks = static_cast<std::size_t>(comm.size());
  std::vector<int> send_counts(ranks), receive_counts(ranks);
  for (std::size_t r = 0; r < ranks; ++r) send_counts[r] = mpi_count(static_cast<std::int64_t>(send[r].size()), "all-to-all");
  MPI_Alltoall(send_counts.data(), 1, MPI_INT, receive_counts.data(), 1, MPI_INT, comm.get());
  const std::vector<int> send_at = mpi_displacements(send_counts, "all-to-all");
  const std::vector<int> receive_at = mpi_displacements(receive_counts, "all-to-all");
  std::vector<T> flat_send, flat_received(static_cast<std::size_t>(receive_at.back() + receive_counts.back()));
  for (const std::vector<T>& part : send) flat_send.insert(flat_send.end(), part.begin(), part.end());
  MPI_Alltoallv(flat_send.data(), send_counts.data(), send_at.data(), mpi_type<T>(), flat_received.data(),
                receive_counts.data(), receive_at.data(), mpi_type<T>(), comm.get());
  comm.stats().halo_bytes += bytes_to_other_ranks(send_counts, comm.rank(), sizeof(T));
  received.assign(ranks, {});
  for (std::size_t r = 0; r < ranks; ++r)
    received[r].assign(flat_received.begin() + receive_at[r], flat_received.begin() + receive_at[r] + receive_counts[r]);
}

}  // namespace amgsolve
