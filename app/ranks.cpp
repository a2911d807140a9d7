#include "app/ranks.hpp"

#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

#include "common/error.hpp"
#ifdef AMGSOLVE_WITH_MPI
#include <mpi.h>

#include "distributed/communicator.hpp"
#include "distributed/spgemm/backends.hpp"
#endif

namespace amgsolve {

#ifdef AMGSOLVE_WITH_MPI
namespace {

// Whether a launcher started this process as one of a job's ranks (OpenMPI, PMIx, MPICH's hydra). Plain
// `amgsolve` does not start MPI, so one-process runs never depend on it.
bool launched_by_mpirun() {
  for (const char* variable : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"})
    if (std::getenv(variable)) return true;
  return false;
}

}  // namespace

Ranks::Ranks(int& argc, char**& argv) {
  register_distributed_spgemm_backends();  // listed everywhere, available under mpirun
  if (!launched_by_mpirun()) return;
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
}

Ranks::~Ranks() {
  if (mpi_is_running()) MPI_Finalize();
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
  const int me = Ranks::rank();
  int first_failed = failed ? me : Ranks::size();
  MPI_Allreduce(MPI_IN_PLACE, &first_failed, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (first_failed == Ranks::size()) return;
  int length = static_cast<int>(message.size());
  MPI_Bcast(&length, 1, MPI_INT, first_failed, MPI_COMM_WORLD);
  message.resize(static_cast<std::size_t>(length));
  MPI_Bcast(message.data(), length, MPI_CHAR, first_failed, MPI_COMM_WORLD);
  throw Error(first_failed == 0 ? message : "rank " + std::to_string(first_failed) + ": " + message);
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
void collectively(const std::function<void()>& f) { f(); }
std::vector<RankLoad> gather_rank_loads(const RankLoad&) { return {}; }

#endif

}  // namespace amgsolve
