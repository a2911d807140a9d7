#pragma once
// The program's MPI ranks: started when amgsolve is launched by mpirun (a build with MPI), one process
// otherwise. Rank 0 prints and writes; the others compute quietly. Errors never leave ranks waiting for
// each other: a phase that each rank does alone (reading the config and the input, checking the outputs)
// runs under collectively(), so that an error on any rank ends every rank with that one line; the setup
// and the solve fail on every rank alike (the same hierarchy, global reductions); anything else aborts
// every rank (abort_all) rather than hang.
#include <functional>
#include <string>
#include <vector>

#include "output/report.hpp"

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
  // Ends every rank at once with `code` (an error that other ranks cannot know of).
  [[noreturn]] static void abort_all(int code);
};

// Runs f on every rank; if it throws on any, every rank throws an Error with the message of the lowest
// failing rank (prefixed with its number when that is not rank 0). One process: f().
void collectively(const std::function<void()>& f);

// What each rank held and communicated, on rank 0 (empty elsewhere and on one process).
std::vector<RankLoad> gather_rank_loads(const RankLoad& mine);

// Rank 0's vector on every rank (collective; v is resized elsewhere).
void broadcast_from_first(Vector<double>& v);

// Rank 0's whole matrix (`whole`, read on rank 0 only) dealt out in row blocks: every rank receives its
// rows of the block partition (amgsolve::owned_rows) with global column numbers. Collective. One process:
// the matrix itself.
CsrMatrix<double> scatter_rows(const CsrMatrix<double>& whole);

}  // namespace amgsolve
