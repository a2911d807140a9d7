#include "distributed/spgemm/backends.hpp"

#include <mutex>

#include "common/environment.hpp"
#include "common/error.hpp"
#include "common/timer.hpp"
#include "distributed/communicator.hpp"
#include "distributed/partition.hpp"
#include "distributed/spgemm/rowwise.hpp"
#include "distributed/spgemm/split3d.hpp"
#include "spgemm/numeric_product.hpp"

namespace amgsolve {

namespace {

// Phases over the ranks: the slowest rank's seconds, everybody's bytes. Every rank passes the same names
// (a rank without a phase contributes zero), so the reductions match.
void reduce_phases(const std::vector<std::string>& names, SpgemmStats& stats, MPI_Comm comm) {
  std::vector<double> seconds(names.size(), 0.0);
  std::vector<std::uint64_t> bytes(names.size(), 0);
  for (std::size_t n = 0; n < names.size(); ++n)
    for (const SpgemmPhase& p : stats.phases)
      if (p.name == names[n]) seconds[n] += p.seconds, bytes[n] += p.bytes;
  MPI_Allreduce(MPI_IN_PLACE, seconds.data(), static_cast<int>(seconds.size()), MPI_DOUBLE, MPI_MAX, comm);
  MPI_Allreduce(MPI_IN_PLACE, bytes.data(), static_cast<int>(bytes.size()), MPI_UINT64_T, MPI_SUM, comm);
  MPI_Allreduce(MPI_IN_PLACE, &stats.multiplications, 1, MPI_INT64_T, MPI_SUM, comm);
  stats.phases.clear();
  for (std::size_t n = 0; n < names.size(); ++n) stats.phases.push_back({names[n], seconds[n], bytes[n]});
}

// "on 3 ranks", "on 2 of 3 ranks", "on 1 rank": where a product ran, out of the job's ranks.
std::string on_ranks(std::int64_t used, std::int64_t ranks) {
  if (ranks == 1) return "on 1 rank";
  return "on " + (used < ranks ? std::to_string(used) + " of " : std::string()) + std::to_string(ranks) + " ranks";
}

// The report's `choice` of a product by rows: what multiplied locally, on how many of the ranks (a small
// level's rows lie on the first ranks only). Collective.
std::string rowwise_choice(const std::string& local, const Communicator& comm, Index rows_here) {
  const std::int64_t holding = comm.sum(std::int64_t{rows_here > 0 ? 1 : 0});
  return local + " locally, rows fetched, " + on_ranks(holding, comm.size());
}

// The end of a product by rows: this rank's bytes counted, the phases reduced over the ranks, the totals.
template <class V>
void end_of_rows_product(const std::vector<std::string>& names, const Timer& timer, const CsrMatrix<V>& C,
                         SpgemmStats& stats, const Communicator& comm) {
  for (const SpgemmPhase& phase : stats.phases) comm.stats().halo_bytes += phase.bytes;  // this rank's, before the sums
  reduce_phases(names, stats, comm.get());
  stats.numeric_seconds = comm.max(timer.seconds());
  stats.nnz = comm.sum(static_cast<std::int64_t>(C.nnz()));
}

// A backend that multiplies row-distributed operands its own way (the grid algorithms).
class RowsProduct {
 public:
  virtual ~RowsProduct() = default;
  // A_rows: this rank's rows of A by a_rows, with global columns; B_rows: its rows of B by b_rows.
  virtual CsrMatrix<double> product_of_rows(const Communicator& comm, const CsrMatrix<double>& A_rows,
                                            const BlockPartition& a_rows, const CsrMatrix<double>& B_rows,
                                            const BlockPartition& b_rows, SpgemmStats& stats) const = 0;
  virtual CsrMatrix<float> product_of_rows(const Communicator& comm, const CsrMatrix<float>& A_rows,
                                           const BlockPartition& a_rows, const CsrMatrix<float>& B_rows,
                                           const BlockPartition& b_rows, SpgemmStats& stats) const = 0;
};

// The phases' names of the rowwise algorithm, and of the grid algorithms from and to rows.
const std::vector<std::string> kRowwisePhases = {"fetch B rows", "local multiply"};
const std::vector<std::string> kGridPhases = {"B all-to-all", "broadcasts", "local multiply", "layer merge",
                                              "C all-to-all", "fiber merge"};

// What the three backends share: they run under MPI, all ranks together, and end alike.
template <class Self>
class DistributedSpgemm : public SpgemmBackendFor<Self> {
 public:
  BackendKind runs_on() const override { return BackendKind::cpu; }
  std::string unavailable_reason() const override { return mpi_is_running() ? "" : "needs MPI: run amgsolve under mpirun"; }
  bool collective() const override { return true; }

 protected:
  // The end of a product: every rank's blocks of C gathered on every rank and put together by `assemble`
  // (what the registry's whole-matrix interface returns), the phases reduced over the ranks, the totals since
  // `timer` started.
  template <class V, class Assemble>
  static CsrMatrix<V> gathered(const std::vector<CsrMatrix<V>>& mine, Assemble&& assemble,
                               const std::vector<std::string>& phases, const Timer& timer, std::string choice,
                               SpgemmStats& stats) {
    Timer gather;
    std::vector<CsrMatrix<V>> all;
    const std::uint64_t bytes = all_gather_blocks(mine, all, MPI_COMM_WORLD);
    CsrMatrix<V> C = assemble(all);
    stats.phases.push_back({"gather C", gather.seconds(), bytes});
    std::vector<std::string> names = phases;
    names.push_back("gather C");
    reduce_phases(names, stats, MPI_COMM_WORLD);
    stats.numeric_seconds = timer.seconds();
    MPI_Allreduce(MPI_IN_PLACE, &stats.numeric_seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    stats.nnz = C.nnz();
    stats.choice = std::move(choice);
    return C;
  }
};

class RowwiseSpgemm final : public DistributedSpgemm<RowwiseSpgemm> {
 public:
  std::string name() const override { return "rowwise"; }
  bool sums_in_row_order() const override { return true; }  // gustavson's, after the fetch
  std::string description() const override {
    return "MPI: rows of A and B over the ranks, the referenced B rows fetched, gustavson locally (hypre, PETSc)";
  }

  template <class V>
  CsrMatrix<V> product(const CsrMatrix<V>& A, const CsrMatrix<V>& B, SpgemmStats& stats) const {
    const Communicator comm;
    const BlockPartition rows(A.rows, comm.size()), inner(B.rows, comm.size());
    const CsrMatrix<V> A_rows = cut_block(A, {rows.begin(comm.rank()), rows.end(comm.rank())}, {0, A.cols});
    const CsrMatrix<V> B_rows = cut_block(B, {inner.begin(comm.rank()), inner.end(comm.rank())}, {0, B.cols});
    Timer timer;
    const CsrMatrix<V> C_rows = rowwise_multiply(comm, A_rows, B_rows, SpgemmRegistry::instance().get("gustavson"), stats);
    return gathered(std::vector<CsrMatrix<V>>{C_rows}, [&](const auto& all) { return stack_rows(all, B.cols); },
                    kRowwisePhases, timer, on_ranks(comm.size(), comm.size()), stats);
  }
};

// Sparse SUMMA (layers = 1) and Split-3D.
template <class Self>
class GridSpgemm : public DistributedSpgemm<Self>, public RowsProduct {
 public:
  CsrMatrix<double> product_of_rows(const Communicator& comm, const CsrMatrix<double>& A_rows,
                                    const BlockPartition& a_rows, const CsrMatrix<double>& B_rows,
                                    const BlockPartition& b_rows, SpgemmStats& stats) const override {
    return rows_product(comm, A_rows, a_rows, B_rows, b_rows, stats);
  }
  CsrMatrix<float> product_of_rows(const Communicator& comm, const CsrMatrix<float>& A_rows,
                                   const BlockPartition& a_rows, const CsrMatrix<float>& B_rows,
                                   const BlockPartition& b_rows, SpgemmStats& stats) const override {
    return rows_product(comm, A_rows, a_rows, B_rows, b_rows, stats);
  }

  template <class V>
  CsrMatrix<V> product(const CsrMatrix<V>& A, const CsrMatrix<V>& B, SpgemmStats& stats) const {
    const Communicator world;
    const Grid3d g(MPI_COMM_WORLD, static_cast<const Self&>(*this).layers(world.size()));
    Timer timer;
    std::vector<CsrMatrix<V>> mine;
    if (g.active()) {
      const CsrMatrix<V> A_block = cut_block(A, grid_rows(g, A.rows, g.i()), grid_columns(g, A.cols, g.j(), g.k()));
      const CsrMatrix<V> B_block = cut_block(B, grid_rows(g, B.rows, g.i()), grid_columns(g, B.cols, g.j(), g.k()));
      mine.push_back(split3d_multiply(g, A_block, B_block, A.cols, stats));
    }
    return DistributedSpgemm<Self>::gathered(
        mine, [&](const auto& blocks) { return assemble(g, blocks, B.cols); },  // blocks in grid rank order
        kGridPhases, timer, describe(g, world.size()), stats);
  }

  static std::string describe(const Grid3d& g, int ranks) {
    return "grid " + std::to_string(g.q()) + "x" + std::to_string(g.q()) + "x" + std::to_string(g.c()) + " " +
           on_ranks(g.q() * g.q() * g.c(), ranks);
  }

 private:
  // The grid rank of P(i, j, k) (split3d.hpp).
  static int grid_rank(const Grid3d& g, int i, int j, int k) { return (k * g.q() + i) * g.q() + j; }

  // The distributed setup's product: A's and B's rows sent to the grid blocks they fall in, the grid's
  // product, and C's blocks sent back to the ranks whose rows they hold.
  template <class V>
  CsrMatrix<V> rows_product(const Communicator& comm, const CsrMatrix<V>& A_rows, const BlockPartition& a_rows,
                            const CsrMatrix<V>& B_rows, const BlockPartition& b_rows, SpgemmStats& stats) const {
    const Grid3d g(comm.get(), static_cast<const Self&>(*this).layers(comm.size()));
    const std::int64_t inner = A_rows.cols, cols = B_rows.cols;
    Timer timer;
    std::uint64_t bytes = 0;
    const CsrMatrix<V> A_block = to_grid(comm, g, A_rows, a_rows, inner, bytes);
    const CsrMatrix<V> B_block = to_grid(comm, g, B_rows, b_rows, cols, bytes);
    stats.phases.push_back({"to the grid", timer.seconds(), bytes});
    CsrMatrix<V> C_block;
    if (g.active()) C_block = split3d_multiply(g, A_block, B_block, inner, stats);
    timer.restart();
    CsrMatrix<V> C_rows = to_rows(comm, g, C_block, a_rows, cols, bytes = 0);
    stats.phases.push_back({"to the rows", timer.seconds(), bytes});
    stats.choice = describe(g, comm.size());
    return C_rows;
  }

  // The part of a rank's range that falls in [range), in the rank's own row numbers.
  static Range rows_within(const BlockPartition& rows, int rank, Range range) {
    const std::int64_t first = rows.begin(rank);
    const std::int64_t begin = std::max(first, range.begin), end = std::min(rows.end(rank), range.end);
    return begin < end ? Range{begin - first, end - first} : Range{0, 0};
  }

  // This grid rank's block (rows block i, column slice (j, k)) of a row-distributed matrix.
  template <class V>
  static CsrMatrix<V> to_grid(const Communicator& comm, const Grid3d& g, const CsrMatrix<V>& M_rows,
                              const BlockPartition& rows, std::int64_t cols, std::uint64_t& bytes) {
    std::vector<CsrMatrix<V>> parts(static_cast<std::size_t>(comm.size())), received;
    for (int i = 0; i < g.q(); ++i)
      for (int j = 0; j < g.q(); ++j)
        for (int k = 0; k < g.c(); ++k)
          parts[static_cast<std::size_t>(grid_rank(g, i, j, k))] =
              cut_block(M_rows, rows_within(rows, comm.rank(), grid_rows(g, rows.size(), i)), grid_columns(g, cols, j, k));
    bytes += all_to_all_blocks(parts, received, comm.get());
    if (!g.active()) return {};
    return stack_rows(received, static_cast<Index>(grid_columns(g, cols, g.j(), g.k()).size()));  // ranks in row order
  }

  // This rank's rows of C from the grid's blocks.
  template <class V>
  static CsrMatrix<V> to_rows(const Communicator& comm, const Grid3d& g, const CsrMatrix<V>& C_block,
                              const BlockPartition& rows, std::int64_t cols, std::uint64_t& bytes) {
    std::vector<CsrMatrix<V>> parts(static_cast<std::size_t>(comm.size())), received;
    if (g.active()) {
      const Range mine = grid_rows(g, rows.size(), g.i());
      for (int r = 0; r < comm.size(); ++r) {
        const std::int64_t begin = std::max(mine.begin, rows.begin(r)), end = std::min(mine.end, rows.end(r));
        const Range theirs = begin < end ? Range{begin - mine.begin, end - mine.begin} : Range{0, 0};
        parts[static_cast<std::size_t>(r)] = cut_block(C_block, theirs, {0, C_block.cols});
      }
    }
    bytes += all_to_all_blocks(parts, received, comm.get());
    return assemble(g, received, static_cast<Index>(cols));  // grid rank g is rank g
  }

  // The blocks C_ijk put back (blocks by grid rank): per row block i, the column slices (j, k) side by side,
  // then the row blocks stacked (those with no rows left out).
  template <class V>
  static CsrMatrix<V> assemble(const Grid3d& g, const std::vector<CsrMatrix<V>>& blocks, Index cols) {
    std::vector<CsrMatrix<V>> row_blocks;
    for (int i = 0; i < g.q(); ++i) {
      std::vector<CsrMatrix<V>> slices;
      for (int j = 0; j < g.q(); ++j)
        for (int k = 0; k < g.c(); ++k) slices.push_back(blocks[static_cast<std::size_t>(grid_rank(g, i, j, k))]);
      if (slices.front().rows > 0) row_blocks.push_back(join_columns(slices));
    }
    if (row_blocks.empty()) return CsrMatrix<V>(0, cols);
    return stack_rows(row_blocks, cols);
  }
};

class Summa2dSpgemm final : public GridSpgemm<Summa2dSpgemm> {
 public:
  std::string name() const override { return "summa2d"; }
  std::string description() const override {
    return "MPI: Sparse SUMMA on a q x q grid (Buluc & Gilbert; the c = 1 case of split3d), auto locally";
  }
  int layers(int) const { return 1; }
};

class Split3dSpgemm final : public GridSpgemm<Split3dSpgemm> {
 public:
  std::string name() const override { return "split3d"; }
  std::string description() const override {
    return "MPI: Split-3D on a q x q x c grid (Azad et al. 2016, Algorithm 2; c: AMGSOLVE_SPLIT3D_LAYERS), auto locally";
  }
  // c from the environment is checked against the ranks here, so that a count beyond them is said as a bad
  // value of the variable, as any other.
  int layers(int ranks) const {
    if (const auto c = integer_from_environment("AMGSOLVE_SPLIT3D_LAYERS", 1, ranks)) return static_cast<int>(*c);
    int best = 1, best_used = 1;
    for (int c = 2; c <= ranks; ++c) {
      int q = 1;
      while ((q + 1) * (q + 1) * c <= ranks) ++q;
      if (q * q * c > best_used) best = c, best_used = q * q * c;
    }
    return best;
  }
};

}  // namespace

template <class V>
DistributedMatrix<V> multiply_rows(const DistributedMatrix<V>& A, const DistributedMatrix<V>& B,
                                   const SpgemmBackend& spgemm, SpgemmStats& stats) {
  const Communicator& comm = A.communicator();
  Timer timer;
  if (const auto* grid = dynamic_cast<const RowsProduct*>(&spgemm)) {
    CsrMatrix<V> C = grid->product_of_rows(comm, A.with_global_columns(), A.row_partition(), B.with_global_columns(),
                                           B.row_partition(), stats);
    std::vector<std::string> names = kGridPhases;
    names.insert(names.begin(), "to the grid");
    names.push_back("to the rows");
    end_of_rows_product(names, timer, C, stats, comm);
    return DistributedMatrix<V>(comm, A.row_partition(), B.column_partition(), std::move(C));
  }
  const SpgemmBackend& local = spgemm.collective() ? SpgemmRegistry::instance().get("gustavson") : spgemm;
  NumberedRows<V> C = rowwise_multiply_numbered(A, B, local, stats);
  stats.choice = rowwise_choice(spgemm.collective() ? "gustavson" : spgemm.name(), comm, A.rows);
  end_of_rows_product(kRowwisePhases, timer, C.rows, stats, comm);
  return DistributedMatrix<V>(comm, A.row_partition(), B.column_partition(), std::move(C.rows), C.columns);
}

template <class V>
DistributedMatrix<V> multiply_rows_into(const DistributedMatrix<V>& A, const DistributedMatrix<V>& B,
                                        const RowwisePattern<V>& pattern, SpgemmStats& stats) {
  const Communicator& comm = A.communicator();
  Timer timer;
  CsrMatrix<V> C = rowwise_multiply_planned(A, B, *pattern.fetch, *pattern.layout, stats);
  stats.choice = rowwise_choice(kNumericPhaseChoice, comm, A.rows);
  end_of_rows_product(kRowwisePhases, timer, C, stats, comm);
  return DistributedMatrix<V>(*pattern.layout, std::move(C));
}

#define AMGSOLVE_MULTIPLY_ROWS(V)                                                                                  \
  template DistributedMatrix<V> multiply_rows(const DistributedMatrix<V>&, const DistributedMatrix<V>&,              \
                                              const SpgemmBackend&, SpgemmStats&);                                 \
  template DistributedMatrix<V> multiply_rows_into(const DistributedMatrix<V>&, const DistributedMatrix<V>&,        \
                                                   const RowwisePattern<V>&, SpgemmStats&);
AMGSOLVE_MULTIPLY_ROWS(double)
AMGSOLVE_MULTIPLY_ROWS(float)
#undef AMGSOLVE_MULTIPLY_ROWS

void register_distributed_spgemm_backends(SpgemmRegistry& registry) {
  static std::once_flag once;
  std::call_once(once, [&registry] {
    registry.add(std::make_unique<RowwiseSpgemm>());
    registry.add(std::make_unique<Summa2dSpgemm>());
    registry.add(std::make_unique<Split3dSpgemm>());
  });
}

}  // namespace amgsolve
