#pragma once
// The halo plan of a distributed matrix (the hypre ParCSR / PETSc MPIAIJ communication package): the
// ghost columns this rank's rows read, grouped by the rank that owns them, and the entries of its own
// vector that other ranks read, found by asking them once when the matrix is built. An exchange posts
// the receives, packs and sends, and is completed later, so that the rows which need no ghost are computed
// in between (Kreutzer et al. 2011, section 5: "naive overlap").
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "distributed/communicator.hpp"
#include "distributed/partition.hpp"
#include "sparse/csr.hpp"

namespace amgsolve {

class HaloPlan {
 public:
  HaloPlan() = default;
  // ghosts: the global columns this rank reads and does not own, sorted and unique; columns: who owns
  // which column. Collective: every rank of comm builds its plan at the same time.
  HaloPlan(const Communicator& comm, const std::vector<std::int64_t>& ghosts, const BlockPartition& columns);

  Index ghosts() const { return static_cast<Index>(receive_offsets_.empty() ? 0 : receive_offsets_.back()); }
  Index sent_entries() const { return static_cast<Index>(send_local_.size()); }
  int neighbours() const { return static_cast<int>(receive_ranks_.size() + send_ranks_.size()); }

  // Starts the exchange of x (this rank's entries, `width` consecutive values each: the rows of a block of
  // vectors, one message for all of them): ghost values arrive in `ghost`, sized ghosts() * width.
  template <class V>
  void begin(const Communicator& comm, const Vector<V>& x, Vector<V>& ghost, Vector<V>& send_buffer,
             std::vector<MPI_Request>& requests, int width = 1) const;
  // The same for entries packed elsewhere (a device gathers them: backend/mpi/mpi_over.hpp): send_buffer
  // holds x[sent_indices()[k]] in order.
  template <class V>
  void begin_packed(const Communicator& comm, const Vector<V>& send_buffer, Vector<V>& ghost,
                    std::vector<MPI_Request>& requests, int width = 1) const;
  // The local indices of the entries other ranks read, in the order they are sent.
  const std::vector<Index>& sent_indices() const { return send_local_; }
  // Waits for it; the time spent waiting is counted in comm's stats.
  void end(const Communicator& comm, std::vector<MPI_Request>& requests) const;
  // The exchange backwards: each ghost's value (ghost, sized ghosts()) goes to its owner, which adds it to
  // its entry of own, the ranks' contributions in rank order. Collective; for sums whose value no order
  // changes (counts, integer weights).
  template <class V>
  void add_to_owners(const Communicator& comm, const Vector<V>& ghost, Vector<V>& own) const;

 private:
  std::vector<int> receive_ranks_;
  std::vector<std::int64_t> receive_offsets_;  // ghosts from receive_ranks_[k]: [offsets[k], offsets[k+1])
  std::vector<int> send_ranks_;
  std::vector<std::int64_t> send_offsets_;     // send_local_[send_offsets[k], send_offsets[k+1]) to send_ranks_[k]
  std::vector<Index> send_local_;              // local indices of the entries sent
};

template <class V>
void HaloPlan::begin(const Communicator& comm, const Vector<V>& x, Vector<V>& ghost, Vector<V>& send_buffer,
                     std::vector<MPI_Request>& requests, int width) const {
  const auto w = static_cast<std::size_t>(width);
  send_buffer.resize(send_local_.size() * w);
#pragma omp parallel for schedule(static)
  for (std::size_t k = 0; k < send_local_.size(); ++k)
    for (std::size_t j = 0; j < w; ++j) send_buffer[k * w + j] = x[static_cast<std::size_t>(send_local_[k]) * w + j];
  begin_packed(comm, send_buffer, ghost, requests, width);
}

template <class V>
void HaloPlan::begin_packed(const Communicator& comm, const Vector<V>& send_buffer, Vector<V>& ghost,
                            std::vector<MPI_Request>& requests, int width) const {
  constexpr int tag = 2718;
  const auto w = static_cast<std::int64_t>(width);
  if (send_buffer.size() != send_local_.size() * static_cast<std::size_t>(width))
    abort_every_rank("halo plan: " + std::to_string(send_buffer.size()) + " entries packed for " +
                     std::to_string(send_local_.size()) + " sent, " + std::to_string(width) + " values each");
  ghost.resize(static_cast<std::size_t>(ghosts() * w));
  requests.assign(receive_ranks_.size() + send_ranks_.size(), MPI_REQUEST_NULL);
  for (std::size_t k = 0; k < receive_ranks_.size(); ++k)
    MPI_Irecv(ghost.data() + receive_offsets_[k] * w,
              mpi_count((receive_offsets_[k + 1] - receive_offsets_[k]) * w, "a halo message"), mpi_type<V>(),
              receive_ranks_[k], tag, comm.get(), &requests[k]);
  for (std::size_t k = 0; k < send_ranks_.size(); ++k)
    MPI_Isend(send_buffer.data() + send_offsets_[k] * w,
              mpi_count((send_offsets_[k + 1] - send_offsets_[k]) * w, "a halo message"), mpi_type<V>(),
              send_ranks_[k], tag, comm.get(), &requests[receive_ranks_.size() + k]);
  comm.stats().halo_bytes += sizeof(V) * send_buffer.size();
  comm.stats().halo_messages += send_ranks_.size();
}

template <class V>
void HaloPlan::add_to_owners(const Communicator& comm, const Vector<V>& ghost, Vector<V>& own) const {
  constexpr int tag = 2719;
  if (ghost.size() != static_cast<std::size_t>(ghosts()))
    abort_every_rank("halo plan: " + std::to_string(ghost.size()) + " ghost values for " + std::to_string(ghosts()) +
                     " ghosts");
  Vector<V> arrived(send_local_.size());
  std::vector<MPI_Request> requests(receive_ranks_.size() + send_ranks_.size(), MPI_REQUEST_NULL);
  for (std::size_t k = 0; k < send_ranks_.size(); ++k)  // from the ranks that read this one's entries
    MPI_Irecv(arrived.data() + send_offsets_[k], static_cast<int>(send_offsets_[k + 1] - send_offsets_[k]),
              mpi_type<V>(), send_ranks_[k], tag, comm.get(), &requests[k]);
  for (std::size_t k = 0; k < receive_ranks_.size(); ++k)  // to the owners of this rank's ghosts
    MPI_Isend(ghost.data() + receive_offsets_[k], static_cast<int>(receive_offsets_[k + 1] - receive_offsets_[k]),
              mpi_type<V>(), receive_ranks_[k], tag, comm.get(), &requests[send_ranks_.size() + k]);
  comm.stats().halo_bytes += sizeof(V) * ghost.size();
  comm.stats().halo_messages += receive_ranks_.size();
  end(comm, requests);
  for (std::size_t j = 0; j < send_local_.size(); ++j) own[static_cast<std::size_t>(send_local_[j])] += arrived[j];
}

}  // namespace amgsolve
