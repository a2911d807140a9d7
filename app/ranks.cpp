#include "app/ranks.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

#include "common/error.hpp"
#ifdef AMGSOLVE_WITH_MPI
#include <mpi.h>

#include "distributed/communicator.hpp"
#include "distributed/partition.hpp"
#include "distributed/spgemm/backends.hpp"
#endif

namespace amgsolve {

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

void broadcast_from_first(Vector<double>& v) {
  if (Ranks::size() == 1) return;
  std::int64_t n = static_cast<std::int64_t>(v.size());
  MPI_Bcast(&n, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
  v.resize(static_cast<std::size_t>(n));
  for (std::int64_t at = 0; at < n; at += kMaxMessage) {  // MPI counts are ints
    const int count = static_cast<int>(std::min<std::int64_t>(kMaxMessage, n - at));
    MPI_Bcast(v.data() + at, count, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  }
}

namespace {

// Sends (rank 0) or receives a contiguous array in pieces of at most kMaxMessage elements.
template <class T>
void send_array(const T* data, std::int64_t count, int to, MPI_Datatype type) {
  for (std::int64_t at = 0; at < count; at += kMaxMessage)
    MPI_Send(data + at, static_cast<int>(std::min<std::int64_t>(kMaxMessage, count - at)), type, to, 0, MPI_COMM_WORLD);
}
template <class T>
void receive_array(T* data, std::int64_t count, MPI_Datatype type) {
  for (std::int64_t at = 0; at < count; at += kMaxMessage)
    MPI_Recv(data + at, static_cast<int>(std::min<std::int64_t>(kMaxMessage, count - at)), type, 0, 0, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
}

}  // namespace

CsrMatrix<double> scatter_rows(const CsrMatrix<double>& whole) {
  if (Ranks::size() == 1) return whole;
  std::int64_t shape[2] = {whole.rows, whole.cols};
  MPI_Bcast(shape, 2, MPI_INT64_T, 0, MPI_COMM_WORLD);
  const BlockPartition partition(shape[0], Ranks::size());
  if (Ranks::prints()) {
    for (int r = 1; r < Ranks::size(); ++r) {
      const CsrMatrix<double> block =
          row_block(whole, static_cast<Index>(partition.begin(r)), static_cast<Index>(partition.end(r)));
      const std::int64_t nnz = block.nnz();
      MPI_Send(&nnz, 1, MPI_INT64_T, r, 0, MPI_COMM_WORLD);
      send_array(block.row_ptr.data(), static_cast<std::int64_t>(block.row_ptr.size()), r, MPI_INT64_T);
      send_array(block.col.data(), nnz, r, MPI_INT32_T);
      send_array(block.val.data(), nnz, r, MPI_DOUBLE);
    }
    return row_block(whole, Index{0}, static_cast<Index>(partition.end(0)));
  }
  const int me = Ranks::rank();
  CsrMatrix<double> block(static_cast<Index>(partition.count(me)), static_cast<Index>(shape[1]));
  std::int64_t nnz = 0;
  MPI_Recv(&nnz, 1, MPI_INT64_T, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  block.col.resize(static_cast<std::size_t>(nnz));
  block.val.resize(static_cast<std::size_t>(nnz));
  receive_array(block.row_ptr.data(), static_cast<std::int64_t>(block.row_ptr.size()), MPI_INT64_T);
  receive_array(block.col.data(), nnz, MPI_INT32_T);
  receive_array(block.val.data(), nnz, MPI_DOUBLE);
  return block;
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
void broadcast_from_first(Vector<double>&) {}
CsrMatrix<double> scatter_rows(const CsrMatrix<double>& whole) { return whole; }

#endif

}  // namespace amgsolve
