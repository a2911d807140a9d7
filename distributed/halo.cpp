#include "distributed/halo.hpp"

#include "common/error.hpp"
#include "common/timer.hpp"

namespace amgsolve {

HaloPlan::HaloPlan(const Communicator& comm, const std::vector<std::int64_t>& ghosts, const BlockPartition& columns) {
  // The ghosts are sorted, so each owner's are contiguous: one message from each.
  receive_offsets_.push_back(0);
  for (std::size_t k = 0; k < ghosts.size();) {
    const int owner = columns.owner(ghosts[k]);
    std::size_t end = k;
    while (end < ghosts.size() && ghosts[end] < columns.end(owner)) ++end;
    receive_ranks_.push_back(owner);
    receive_offsets_.push_back(static_cast<std::int64_t>(end));
    k = end;
  }
  const OwnerRequests requests = ask_owners(comm, ghosts, columns);
  const std::int64_t first = columns.begin(comm.rank());
  send_offsets_.push_back(0);
  for (int r = 0; r < comm.size(); ++r) {
    const int begin = requests.from[static_cast<std::size_t>(r)], end = requests.from[static_cast<std::size_t>(r) + 1];
    if (begin == end) continue;
    for (int k = begin; k < end; ++k) {
      const std::int64_t g = requests.received[static_cast<std::size_t>(k)];
      if (g < first || g >= columns.end(comm.rank()))
        abort_every_rank("halo plan: rank " + std::to_string(r) + " asked for column " + std::to_string(g) +
                         ", which this rank does not own");
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
