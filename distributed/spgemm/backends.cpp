#include "distributed/spgemm/backends.hpp"

#include <mutex>

#include "common/environment.hpp"
#include "common/error.hpp"
#include "common/timer.hpp"
#include "distributed/communicator.hpp"
#include "distributed/partition.hpp"
#include "distributed/spgemm/rowwise.hpp"
#include "distributed/spgemm/split3d.hpp"

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

// What the three backends share: they run under MPI, all ranks together, and end alike.
template <class Self>
class DistributedSpgemm : public SpgemmBackendFor<Self> {
 public:
  BackendKind runs_on() const override { return BackendKind::cpu; }
  std::string unavailable_reason() const override { return mpi_is_running() ? "" : "needs MPI: run amgsolve under mpirun"; }
  bool collective() const override { return true; }

 protected:
  // The end of a product: every rank's blocks of C gathered on every rank and put together by `assemble`
  // (the replicated setup's need), the phases reduced over the ranks, the totals since `timer` started.
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
                    {"fetch B rows", "local multiply"}, timer, std::to_string(comm.size()) + " ranks", stats);
  }
};

// Sparse SUMMA (layers = 1) and Split-3D.
template <class Self>
class GridSpgemm : public DistributedSpgemm<Self> {
 public:
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
    const std::string grid = "grid " + std::to_string(g.q()) + "x" + std::to_string(g.q()) + "x" +
                             std::to_string(g.c()) + " on " + std::to_string(g.q() * g.q() * g.c()) + " of " +
                             std::to_string(world.size()) + " ranks";
    return DistributedSpgemm<Self>::gathered(
        mine, [&](const auto& blocks) { return assemble(g, blocks, B.cols); },  // blocks in grid rank order
        {"B all-to-all", "broadcasts", "local multiply", "layer merge", "C all-to-all", "fiber merge"}, timer, grid,
        stats);
  }

 private:
  // The blocks C_ijk put back: per row block i, the column slices (j, k) side by side, then stacked.
  template <class V>
  static CsrMatrix<V> assemble(const Grid3d& g, const std::vector<CsrMatrix<V>>& blocks, Index cols) {
    std::vector<CsrMatrix<V>> row_blocks;
    for (int i = 0; i < g.q(); ++i) {
      std::vector<CsrMatrix<V>> slices;
      for (int j = 0; j < g.q(); ++j)
        for (int k = 0; k < g.c(); ++k) slices.push_back(blocks[static_cast<std::size_t>((k * g.q() + i) * g.q() + j)]);
      row_blocks.push_back(join_columns(slices));
    }
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
  int layers(int ranks) const {
    if (const auto c = integer_from_environment("AMGSOLVE_SPLIT3D_LAYERS", 1, 1 << 20)) return static_cast<int>(*c);
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

void register_distributed_spgemm_backends(SpgemmRegistry& registry) {
  static std::once_flag once;
  std::call_once(once, [&registry] {
    registry.add(std::make_unique<RowwiseSpgemm>());
    registry.add(std::make_unique<Summa2dSpgemm>());
    registry.add(std::make_unique<Split3dSpgemm>());
  });
}

}  // namespace amgsolve
