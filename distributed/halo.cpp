#include "distributed/halo.hpp"

#include "common/error.hpp"
#include "common/timer.hpp"

namespace amgsolve {

HaloPlan::HaloPlan(const Communicator& comm, const std::vector<std::int64_t>& ghosts, const BlockPartition& columns) {
  const int ranks = comm.size();
  // What this rank asks each owner for: ghosts are sorted, so each owner's are contiguous.
  std::vector<int> asked(static_cast<std::size_t>(ranks), 0);
  receive_offsets_.push_back(0);
  for (std::size_t k = 0; k < ghosts.size();) {
    const int owner = columns.owner(ghosts[k]);
    std::size_t end = k;
    while (end < ghosts.size() && ghosts[end] < columns.end(owner)) ++end;
    receive_ranks_.push_back(owner);
    receive_offsets_.push_back(static_cast<std::int64_t>(end));
    asked[static_cast<std::size_t>(owner)] = static_cast<int>(end - k);
    k = end;
  }
  // What each rank asks of this one: the counts, then the global indices.
  std::vector<int> wanted(static_cast<std::size_t>(ranks), 0);
  MPI_Alltoall(asked.data(), 1, MPI_INT, wanted.data(), 1, MPI_INT, comm.get());
  std::vector<int> asked_at(static_cast<std::size_t>(ranks), 0), wanted_at(static_cast<std::size_t>(ranks), 0);
  int total_wanted = 0;
  for (int r = 0; r < ranks; ++r) {
    asked_at[static_cast<std::size_t>(r)] = static_cast<int>(
        r == 0 ? 0 : asked_at[static_cast<std::size_t>(r) - 1] + asked[static_cast<std::size_t>(r) - 1]);
    wanted_at[static_cast<std::size_t>(r)] = total_wanted;
    total_wanted += wanted[static_cast<std::size_t>(r)];
  }
  std::vector<std::int64_t> requested(static_cast<std::size_t>(total_wanted));
  MPI_Alltoallv(ghosts.data(), asked.data(), asked_at.data(), MPI_INT64_T, requested.data(), wanted.data(),
                wanted_at.data(), MPI_INT64_T, comm.get());
  const std::int64_t first = columns.begin(comm.rank());
  send_offsets_.push_back(0);
  for (int r = 0; r < ranks; ++r) {
    const int count = wanted[static_cast<std::size_t>(r)];
    if (count == 0) continue;
    for (int k = 0; k < count; ++k) {
      const std::int64_t g = requested[static_cast<std::size_t>(wanted_at[static_cast<std::size_t>(r)] + k)];
      if (g < first || g >= columns.end(comm.rank()))
        throw Error("halo plan: rank " + std::to_string(r) + " asked rank " + std::to_string(comm.rank()) +
                    " for column " + std::to_string(g) + ", which it does not own");
      send_local_.push_back(static_cast<Index>(g - first));
    }
    send_ranks_.push_back(r);
    send_offsets_.push_back(static_cast<std::int64_t>(send_local_.size()));
  }
}

void HaloPlan::end(const Communicator& comm, std::vector<MPI_Request>& requests) const {
  Timer timer;
  MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  comm.stats().halo_wait_seconds += timer.seconds();
}

}  // namespace amgsolve
