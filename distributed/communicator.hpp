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

// The MPI datatype of a value type (float, double, std::int64_t, std::int32_t).
template <class T>
MPI_Datatype mpi_type();

class Communicator {
 public:
  explicit Communicator(MPI_Comm comm = MPI_COMM_WORLD);

  int rank() const { return rank_; }
  int size() const { return size_; }
  MPI_Comm get() const { return comm_; }

  // The sum over the ranks of each one's exact partial sum, rounded once: the same double on every rank,
  // and the same as one process summing everything.
  double sum(ExactSum partial) const;
  std::int64_t sum(std::int64_t value) const;
  // The global vector of a block-distributed one (every rank's range of `partition`), on every rank.
  template <class V>
  void allgather(const Vector<V>& local, const BlockPartition& partition, Vector<V>& global) const;

  CommunicationStats& stats() const { return stats_; }

 private:
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
  mutable CommunicationStats stats_;
};

// True when this process is one of several MPI ranks (MPI initialised, not finalised, more than one rank):
// then amgsolve::Solver distributes the solve.
bool running_on_several_ranks();

}  // namespace amgsolve
