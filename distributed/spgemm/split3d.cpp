#include "distributed/spgemm/split3d.hpp"

#include <cmath>

#include "common/error.hpp"
#include "distributed/communicator.hpp"
#include "common/timer.hpp"
#include "spgemm/registry.hpp"

namespace amgsolve {

Grid3d::Grid3d(MPI_Comm comm, int layers) : c_(layers) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  if (layers < 1 || layers > ranks)
    throw InputError("split3d: " + std::to_string(layers) + " layers do not fit " + std::to_string(ranks) +
                     " ranks (AMGSOLVE_SPLIT3D_LAYERS must be 1.." + std::to_string(ranks) + ")");
  q_ = static_cast<int>(std::sqrt(static_cast<double>(ranks / layers)));
  while ((q_ + 1) * (q_ + 1) * layers <= ranks) ++q_;
  while (q_ * q_ * layers > ranks) --q_;
  active_ = rank < q_ * q_ * c_;
  // Rank g = (k q + i) q + j: layer-major, rows within a layer.
  k_ = rank / (q_ * q_), i_ = rank / q_ % q_, j_ = rank % q_;
  const int undefined = MPI_UNDEFINED;
  MPI_Comm_split(comm, active_ ? k_ * q_ + i_ : undefined, j_, &row_);
  MPI_Comm_split(comm, active_ ? k_ * q_ + j_ : undefined, i_, &column_);
  MPI_Comm_split(comm, active_ ? i_ * q_ + j_ : undefined, k_, &fiber_);
}

Grid3d::~Grid3d() {
  for (MPI_Comm* c : {&row_, &column_, &fiber_})
    if (*c != MPI_COMM_NULL) MPI_Comm_free(c);
}

Range grid_rows(const Grid3d& g, std::int64_t rows, int i) { return even_range(rows, g.q(), i); }

Range grid_columns(const Grid3d& g, std::int64_t cols, int j, int k) {
  return even_subrange(even_range(cols, g.q(), j), g.c(), k);
}

namespace {

// Times one phase on this rank and adds it (or its time to the phase of the same name) to stats.
class Phase {
 public:
  Phase(SpgemmStats& stats, const char* name) : stats_(stats), name_(name) {}
  ~Phase() {
    for (SpgemmPhase& p : stats_.phases)
      if (p.name == name_) {
        p.seconds += timer_.seconds(), p.bytes += bytes;
        return;
      }
    stats_.phases.push_back({name_, timer_.seconds(), bytes});
  }
  std::uint64_t bytes = 0;

 private:
  SpgemmStats& stats_;
  const char* name_;
  Timer timer_;
};

}  // namespace

template <class V>
CsrMatrix<V> split3d_multiply(const Grid3d& g, const CsrMatrix<V>& A_block, const CsrMatrix<V>& B_block,
                              std::int64_t inner, SpgemmStats& stats) {
  const int q = g.q(), c = g.c();
  // 1. (line 4) B_ijk's rows cut into the c layers' inner slices; layer k gets slice k of every part.
  CsrMatrix<V> B_hat;
  {
    Phase phase(stats, "B all-to-all");
    std::vector<CsrMatrix<V>> pieces, received;
    for (int layer = 0; layer < c; ++layer)
      pieces.push_back(cut_block(B_block, even_range(B_block.rows, c, layer), {0, B_block.cols}));
    phase.bytes = all_to_all_blocks(pieces, received, g.fiber());
    B_hat = join_columns(received);  // received[k']: column slice (j, k'), in column order
  }
  // 2. (lines 5-10) q SUMMA stages in this layer.
  std::vector<CsrMatrix<V>> stage_products;
  for (int r = 0; r < q; ++r) {
    CsrMatrix<V> A_remote, B_remote;
    {
      Phase phase(stats, "broadcasts");
      if (g.j() == r) A_remote = A_block;
      if (g.i() == r) B_remote = B_hat;
      phase.bytes = broadcast_block(A_remote, r, g.process_row()) + broadcast_block(B_remote, r, g.process_column());
    }
    if (A_remote.cols != B_remote.rows)
      abort_every_rank("split3d: stage " + std::to_string(r) + " pairs a block of " + std::to_string(A_remote.cols) +
                       " columns with one of " + std::to_string(B_remote.rows) + " rows (inner dimension " +
                       std::to_string(inner) + ")");
    Phase phase(stats, "local multiply");
    SpgemmStats local;
    stage_products.push_back(SpgemmRegistry::instance().get("auto").multiply(A_remote, B_remote, &local));
    stats.multiplications += local.multiplications;
  }
  // 3. (line 10) the stages summed.
  CsrMatrix<V> C_partial;
  {
    Phase phase(stats, "layer merge");
    C_partial = merge_sum(stage_products);
  }
  // 4. (lines 11-12) each column slice of the partial C to its layer, and the c parts merged there.
  std::vector<CsrMatrix<V>> parts;
  {
    Phase phase(stats, "C all-to-all");
    std::vector<CsrMatrix<V>> pieces;
    for (int layer = 0; layer < c; ++layer)
      pieces.push_back(cut_block(C_partial, {0, C_partial.rows}, even_range(C_partial.cols, c, layer)));
    phase.bytes = all_to_all_blocks(pieces, parts, g.fiber());
  }
  Phase phase(stats, "fiber merge");
  return merge_sum(parts);
}

template CsrMatrix<double> split3d_multiply(const Grid3d&, const CsrMatrix<double>&, const CsrMatrix<double>&,
                                            std::int64_t, SpgemmStats&);
template CsrMatrix<float> split3d_multiply(const Grid3d&, const CsrMatrix<float>&, const CsrMatrix<float>&,
                                           std::int64_t, SpgemmStats&);

}  // namespace amgsolve
