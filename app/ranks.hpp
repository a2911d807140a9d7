#pragma once
// The program's MPI ranks: started when amgsolve is launched by mpirun (a build with MPI), one process
// otherwise. Rank 0 prints and writes; the others compute quietly. Errors never leave ranks waiting for
// each other: a phase that each rank does alone (reading the config and the input, checking the outputs)
// runs under collectively(), so that an error on any rank ends every rank with that one line; the setup
// and the solve fail on every rank alike (the same hierarchy, global reductions); an error that only some
// ranks meet (one rank's environment or memory), found when the other ranks do not arrive at the error's
// barrier (every_rank_arrives_within), and anything else abort every rank (abort_all) rather than hang.
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "common/exact_sum.hpp"
#include "common/parallel.hpp"
#include "distributed/partition.hpp"
#include "output/report.hpp"
#include "sparse/csr.hpp"

namespace amgsolve {

class Ranks {
 public:
  // MPI started (MPI_THREAD_FUNNELED) when mpirun launched this process; finished by the destructor.
  Ranks(int& argc, char**& argv);
  ~Ranks();
  Ranks(const Ranks&) = delete;
  Ranks& operator=(const Ranks&) = delete;

  static int rank();
  static int size();
  static bool prints() { return rank() == 0; }  // the rank that prints and writes the outputs
  // " on rank N" under several ranks, "" on one process: for messages only one rank can give.
  static std::string where() { return size() > 1 ? " on rank " + std::to_string(rank()) : ""; }
  // Over every rank (collective); the value itself on one process.
  static std::int64_t sum(std::int64_t value);
  static std::int64_t max(std::int64_t value);
  // The exact sum of the ranks' partial sums (common/exact_sum.hpp): the single-process value on any number
  // of ranks where each sums whole reduction blocks. Collective.
  static double sum(const ExactSum& partial);
  // Ends every rank at once with `code` (an error that other ranks cannot know of).
  [[noreturn]] static void abort_all(int code);
  // Whether every rank calls this within `wait` of this rank's call (a barrier of its own): true for an error
  // that every rank met alike, false for one that left other ranks waiting in the computation. One
  // process: true.
  static bool every_rank_arrives_within(std::chrono::milliseconds wait);
};

// The sum of f(i) over a vector's entries i: a whole vector's, or (by_rows) over the ranks' rows of it
// (collective). Exact either way, so the same on any number of ranks.
template <class F>
double sum_of(const Vector<double>& v, F&& f, bool by_rows) {
  const ExactSum partial = deterministic_partial_sum(static_cast<std::int64_t>(v.size()), f);
  return by_rows ? Ranks::sum(partial) : partial.value();
}

// Runs f on every rank; if it throws on any, every rank throws an Error with the message of the lowest
// failing rank (prefixed with its number when that is not rank 0). One process: f().
void collectively(const std::function<void()>& f);

// What each rank held and communicated, on rank 0 (empty elsewhere and on one process).
std::vector<RankLoad> gather_rank_loads(const RankLoad& mine);

// Where each rank holds its rows of a vector (consecutive ranges, in rank order):
// rank 0's whole vector dealt out, every other rank's v (sized to its rows by the caller, so that running out
// of memory is found before) receiving its rows and rank 0 keeping its own (collective; one process: v as
// it is);
void scatter_from_first(Vector<double>& v);
void scatter_from_first(std::vector<Vector<double>>& vectors);  // as many on every rank
// and the ranks' rows put together on rank 0, the whole vector there and an empty one elsewhere (collective;
// rank 0 running out of memory for it is every rank's error; one process: a copy). T: double or Index.
template <class T>
Array<T> gather_on_first(const Array<T>& mine);

// A Matrix Market matrix read on rank 0 a batch of entries at a time, each batch dealt out to the ranks that
// own its rows (the block partition of amgsolve::owned_rows; PETSc's MatLoad does the same), so no rank ever
// holds more than a batch and its own rows. Errors (the file's, a duplicate entry, too little memory for a
// rank's share) are the same one line on every rank. Collective. One process: the whole matrix.
struct MatrixRows {
  std::int64_t global_rows = 0;
  bool symmetric_storage = false;  // the file stored one triangle (so the matrix is symmetric)
  CsrMatrix<double> rows;          // this rank's, with global column numbers
  BlockPartition partition;        // the ranks' rows
  std::int64_t first_row() const { return partition.begin(Ranks::rank()); }
};
// block_size: a system's nodes, whole on each rank (owned_rows).
MatrixRows read_matrix_market_rows(const std::string& path, int block_size = 1);
// require_spd_candidate on a matrix spread by rows: the same checks and the same message as for the whole
// (the first non-positive diagonal entry, the largest asymmetry with its entry). Collective.
void require_spd_candidate_rows(const std::string& name, const MatrixRows& matrix);

}  // namespace amgsolve
