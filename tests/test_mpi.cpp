// The MPI layer, run by ctest through mpirun on 1, 2, 3, 4 and 8 ranks (label `mpi`): every distributed
// reduction, product, smoother pass and whole solve is compared bit for bit with the single-process one
// computed with the cpu backend on the same rank (the solver's whole solves: on rank 0, sent to the others).
// The matrices cover a stencil, AMG's rectangular transfers, random rows with empty ones, a block-diagonal
// matrix (no rank reads another's entries) and one smaller than a reduction block (all rows on rank 0, the
// other ranks empty: 40^2 rows against blocks of kReductionBlock = 2048).
#include <gtest/gtest.h>
#include <mpi.h>

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "amg/hierarchy.hpp"
#include "amg/mpi/distributed_setup.hpp"
#include "amg/mpi/system_setup.hpp"
#include "amg/rigid_body_modes.hpp"
#include "amg/system_nullspace.hpp"
#include "amg/vcycle.hpp"
#include "amgsolve/solver.hpp"
#include "backend/mpi/mpi_backend.hpp"
#include "backend/mpi/mpi_over.hpp"
#ifdef AMGSOLVE_WITH_CUDA
#include "backend/cuda/cuda_backend.hpp"
#endif
#include "distributed/spgemm/backends.hpp"
#include "spgemm/registry.hpp"
#include "common/error.hpp"
#include "common/hash.hpp"
#include "common/parallel.hpp"
#include "problems/elasticity.hpp"
#include "problems/poisson.hpp"
#include "sparse/matrix_market.hpp"
#include "solver/pcg.hpp"
#include "spgemm/numeric_product.hpp"
#include "sparse/csr_ops.hpp"
#include "test_support.hpp"

namespace amgsolve {
namespace {

int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

CsrMatrix<double> poisson(Stencil stencil, std::vector<std::int64_t> size, Boundary boundary = Boundary::dirichlet) {
  PoissonParams p;
  p.stencil = stencil;
  p.size = std::move(size);
  p.boundary = boundary;
  return poisson_matrix(p);
}

// rows x cols with up to `per_row` hashed columns a row; every 7th row empty.
CsrMatrix<double> random_rows(Index rows, Index cols, int per_row, std::uint64_t seed) {
  std::vector<Triplet<double>> t;
  for (Index i = 0; i < rows; ++i) {
    if (i % 7 == 3) continue;
    for (int k = 0; k < per_row; ++k) {
      const std::uint64_t key = static_cast<std::uint64_t>(i) * 64 + static_cast<std::uint64_t>(k);
      const auto j = static_cast<Index>(seeded_uniform(seed, key) * cols);
      t.push_back({i, std::min(j, cols - 1), 2.0 * seeded_uniform(seed + 1, key) - 1.0});
    }
  }
  return csr_from_triplets(rows, cols, std::move(t));
}

// Blocks of 5000 rows coupled only within themselves.
CsrMatrix<double> block_diagonal(Index rows) {
  std::vector<Triplet<double>> t;
  for (Index i = 0; i < rows; ++i) {
    t.push_back({i, i, 4.0});
    if (i % 5000 != 0) t.push_back({i, i - 1, -1.0});
    if ((i + 1) % 5000 != 0 && i + 1 < rows) t.push_back({i, i + 1, -1.0});
  }
  return csr_from_triplets(rows, rows, std::move(t));
}

// [A 0; 0 B].
CsrMatrix<double> direct_sum(const CsrMatrix<double>& A, const CsrMatrix<double>& B) {
  std::vector<Triplet<double>> t;
  for (const auto& [M, first] : {std::pair{&A, Index{0}}, std::pair{&B, A.rows}})
    for (Index i = 0; i < M->rows; ++i)
      for (Offset k = M->row_begin(i); k < M->row_end(i); ++k) t.push_back({first + i, first + M->col[k], M->val[k]});
  return csr_from_triplets(A.rows + B.rows, A.cols + B.cols, std::move(t));
}

// rows x cols: column i in row i, and every 500th row one column far away (few ghost columns spread wide,
// so a rank finds its ghosts by sorting rather than by marks over their span).
CsrMatrix<double> far_columns(Index rows, Index cols) {
  std::vector<Triplet<double>> t;
  for (Index i = 0; i < rows; ++i) {
    t.push_back({i, i % cols, 1.0 + i % 3});
    if (i % 500 == 0) t.push_back({i, static_cast<Index>((static_cast<std::int64_t>(i) * 7919 + cols / 2) % cols), -0.5});
  }
  return csr_from_triplets(rows, cols, std::move(t));
}

Vector<double> seeded_vector(Index n, std::uint64_t seed) {
  Vector<double> v(static_cast<std::size_t>(n));
  for (Index i = 0; i < n; ++i) v[i] = 2.0 * seeded_uniform(seed, static_cast<std::uint64_t>(i)) - 1.0;
  return v;
}

struct NamedMatrix {
  std::string name;
  std::shared_ptr<const CsrMatrix<double>> A;
};

std::vector<NamedMatrix> test_matrices() {
  std::vector<NamedMatrix> m;
  auto add = [&](std::string name, CsrMatrix<double> A) {
    m.push_back({std::move(name), std::make_shared<const CsrMatrix<double>>(std::move(A))});
  };
  add("poisson 7-point 41^3 (a last chunk of one row)", poisson(Stencil::p7, {41, 41, 41}));
  add("random 40000 x 30000", random_rows(40000, 30000, 6, 3));
  add("random 30000 x 45000", random_rows(30000, 45000, 4, 9));
  add("block diagonal 40000", block_diagonal(40000));
  add("poisson 5-point 40^2 (one block)", poisson(Stencil::p5, {40, 40}));
  const AmgHierarchy<double> amg(std::make_shared<const CsrMatrix<double>>(poisson(Stencil::p27, {34, 34, 34})), {});
  add("AMG prolongator", amg.prolongator(0));
  add("AMG restriction", amg.restriction(0));
  return m;
}

class Distributed : public ::testing::Test {
 protected:
  MpiBackend mpi;
  CpuBackend cpu;

  template <class V>
  Vector<V> gathered(const Vector<V>& local) const {
    Vector<V> global;
    mpi.download(local, global);
    return global;
  }
};

TEST_F(Distributed, ReductionsEqualTheSingleProcessOnes) {
  for (Index n : {Index{0}, Index{5}, Index{8192}, Index{5 * 8192 + 77}}) {
    const Vector<double> a = seeded_vector(n, 1), b = seeded_vector(n, 2);
    EXPECT_EQ(mpi.dot(mpi.upload(a), mpi.upload(b)), cpu.dot(a, b)) << n;
    EXPECT_EQ(mpi.sum(mpi.upload(a)), cpu.sum(a)) << n;
    Vector<double> local = mpi.upload(a), whole = a;
    mpi.remove_mean(local);
    cpu.remove_mean(whole);
    EXPECT_EQ(gathered(local), whole) << n;
  }
}

// OpenMP threads for a scope (the tests run with one a rank; task mode needs more).
class ScopedThreads {
 public:
  explicit ScopedThreads(int threads) : before_(max_threads()) { omp_set_num_threads(threads); }
  ~ScopedThreads() { omp_set_num_threads(before_); }
  ScopedThreads(const ScopedThreads&) = delete;
  ScopedThreads& operator=(const ScopedThreads&) = delete;

 private:
  int before_;
};

// Every product and smoother pass of a distributed backend on m (its rows in `format`) against the cpu
// backend's on one process, bit for bit.
template <class DistributedBackend>
void expect_single_process_products(const DistributedBackend& dist, const NamedMatrix& m,
                                    SpmvFormat format = SpmvFormat::csr) {
  const CpuBackend cpu;
  const auto gathered = [&](const auto& local) {
    Vector<double> global;
    dist.download(local, global);
    return global;
  };
  const CsrMatrix<double>& A = *m.A;
  const auto D = dist.matrix(m.A, format);
  const auto one_process = cpu.matrix(m.A, SpmvFormat::automatic);  // sliced ELLPACK where it pays
  const CpuBackend::Matrix<double>& C = *one_process;
  ASSERT_EQ(dist.comm().sum(std::int64_t{D->rows}), A.rows);
  const Vector<double> x = seeded_vector(A.cols, 4), b = seeded_vector(A.rows, 5);
  const auto x_local = dist.upload(x), b_local = dist.upload(b);

  Vector<double> y;
  typename DistributedBackend::template Vector<double> y_local;
  cpu.spmv(C, x, y);
  dist.spmv(*D, x_local, y_local);
  EXPECT_EQ(gathered(y_local), y) << "spmv";

  Vector<double> z = b;
  auto z_local = dist.upload(b);
  cpu.spmv_add(C, x, z);
  dist.spmv_add(*D, x_local, z_local);
  EXPECT_EQ(gathered(z_local), z) << "spmv_add";

  if (A.rows != A.cols) return;  // the rest needs a square matrix
  Vector<double> r;
  typename DistributedBackend::template Vector<double> r_local;
  cpu.residual(C, x, b, r);
  dist.residual(*D, x_local, b_local, r_local);
  EXPECT_EQ(gathered(r_local), r) << "residual";

  Vector<double> q;
  typename DistributedBackend::template Vector<double> q_local;
  EXPECT_EQ(dist.spmv_dot(*D, x_local, q_local), cpu.spmv_dot(C, x, q)) << "spmv_dot";
  EXPECT_EQ(gathered(q_local), q) << "spmv_dot's product";

  const Vector<double> dinv = seeded_vector(A.rows, 6);
  const auto dinv_local = dist.upload(dinv);
  Vector<double> next;
  typename DistributedBackend::template Vector<double> next_local;
  cpu.jacobi_sweep(C, dinv, b, x, next);
  dist.jacobi_sweep(*D, dinv_local, b_local, x_local, next_local);
  EXPECT_EQ(gathered(next_local), next) << "jacobi_sweep";

  Vector<double> d = seeded_vector(A.rows, 7);
  auto d_local = dist.upload(d);
  cpu.chebyshev_step(C, dinv, b, 0.25, 0.75, d, x, next);
  dist.chebyshev_step(*D, dinv_local, b_local, 0.25, 0.75, d_local, x_local, next_local);
  EXPECT_EQ(gathered(next_local), next) << "chebyshev_step x";
  EXPECT_EQ(gathered(d_local), d) << "chebyshev_step d";

  Vector<double> p = x, s = b;
  auto p_local = dist.upload(x), s_local = dist.upload(b);
  EXPECT_EQ(dist.cg_update(0.375, dinv_local, x_local, p_local, s_local), cpu.cg_update(0.375, dinv, x, p, s))
      << "cg_update";
  EXPECT_EQ(gathered(p_local), p) << "cg_update x";
  EXPECT_EQ(gathered(s_local), s) << "cg_update r";
}

// In each of Kreutzer et al.'s halo modes; task mode with three threads, so that two compute beside the one
// that waits for the messages. The rows in CSR, and the interior chunks in the solve's sliced copy where
// its padding is small (the Poisson matrices, the block diagonal), with the vector units.
TEST_F(Distributed, ProductsAndSmoothersEqualTheSingleProcessOnes) {
  const std::pair<HaloMode, const char*> modes[] = {
      {HaloMode::overlap, "naive overlap"}, {HaloMode::vector, "vector mode"}, {HaloMode::task, "task mode"}};
  for (const SpmvFormat format : {SpmvFormat::csr, SpmvFormat::automatic}) {
    for (const auto& [mode, mode_name] : modes) {
      for (const NamedMatrix& m : test_matrices()) {
        SCOPED_TRACE(std::string(name_of(format)) + ", " + mode_name + ", " + m.name);
        const ScopedThreads threads(mode == HaloMode::task ? 3 : max_threads());
        mpi.set_halo_mode(mode);
        expect_single_process_products(mpi, m, format);
      }
    }
  }
  const auto poisson = mpi.matrix(test_matrices().front().A, SpmvFormat::automatic);
  EXPECT_EQ(poisson->sliced(), sliced_ellpack_vector_units() && poisson->rows >= 8) << "not sliced: nothing tested";
  if (poisson->sliced()) {
    EXPECT_GT(mpi.bytes(*poisson), 0u) << "the solve's copy is counted";
  }
}

// The distributed layer over a local backend (backend/mpi/mpi_over.hpp), here over the cpu one: the same
// bits as one process, through the gathered send entries and the extended [own | ghost] vectors.
TEST_F(Distributed, TheLayerOverALocalBackendEqualsTheSingleProcessProducts) {
  const MpiOver<CpuBackend> layer(mpi.comm());
  for (const NamedMatrix& m : test_matrices()) {
    SCOPED_TRACE(m.name);
    expect_single_process_products(layer, m);
  }
  for (Index n : {Index{0}, Index{5}, Index{5 * 8192 + 77}}) {
    const Vector<double> a = seeded_vector(n, 1), b = seeded_vector(n, 2);
    EXPECT_EQ(layer.dot(layer.upload(a), layer.upload(b)), cpu.dot(a, b)) << n;
    EXPECT_EQ(layer.sum(layer.upload(a)), cpu.sum(a)) << n;
    Vector<double> local = layer.upload(a), whole = a, back;
    layer.remove_mean(local);
    cpu.remove_mean(whole);
    layer.download(local, back);
    EXPECT_EQ(back, whole) << n;
  }
}

TEST_F(Distributed, TheHaloCarriesOnlyWhatOtherRanksRead) {
  // The 7-point stencil over ranges of whole kReductionBlock-row blocks: a rank reads one plane of each
  // neighbouring rank's rows.
  const auto A = std::make_shared<const CsrMatrix<double>>(poisson(Stencil::p7, {32, 32, 64}));
  const auto D = mpi.matrix(A, SpmvFormat::csr);
  const int rank = mpi.comm().rank(), ranks = mpi.comm().size();
  const BlockPartition rows(A->rows, ranks);
  const int neighbours = (rank > 0 && rows.count(rank) > 0 ? 1 : 0) +
                         (rank + 1 < ranks && rows.count(rank) > 0 && rows.count(rank + 1) > 0 ? 1 : 0);
  EXPECT_EQ(D->halo().ghosts(), neighbours * 32 * 32);  // one 32 x 32 plane from each neighbour
  EXPECT_EQ(D->interior_rows() + static_cast<Index>(neighbours * 32 * 32), D->rows);
}

TEST_F(Distributed, ABlockOfVectorsCrossesTheHaloAsEachOfThemAlone) {
  // The rows of 3 vectors (3 values a row, as a system's near-nullspace is stored) in one exchange: the
  // ghosts' rows are the owners' entries, as 3 exchanges of one vector each give them.
  const auto A = std::make_shared<const CsrMatrix<double>>(poisson(Stencil::p7, {24, 24, 48}));
  const auto D = mpi.matrix(A, SpmvFormat::csr);
  constexpr int k = 3;
  const std::int64_t first = D->first_row();
  Vector<double> rows(static_cast<std::size_t>(D->local().cols) * k);
  for (Index i = 0; i < D->rows; ++i)
    for (int v = 0; v < k; ++v) rows[static_cast<std::size_t>(i) * k + v] = std::sin(1.0 + v + 0.5 * static_cast<double>(first + i));
  const std::uint64_t bytes_before = mpi.comm().stats().halo_bytes;
  D->fill_ghosts(rows, k);
  EXPECT_EQ(mpi.comm().stats().halo_bytes - bytes_before, sizeof(double) * k * static_cast<std::uint64_t>(D->halo().sent_entries()));
  for (int v = 0; v < k; ++v) {
    Vector<double> own(static_cast<std::size_t>(D->rows));
    for (Index i = 0; i < D->rows; ++i) own[i] = rows[static_cast<std::size_t>(i) * k + v];
    const Vector<double> alone = D->with_ghosts(own);
    for (Index j = 0; j < D->local().cols; ++j) {
      ASSERT_EQ(rows[static_cast<std::size_t>(j) * k + v], alone[j]) << "column " << j << ", vector " << v;
      ASSERT_EQ(alone[j], std::sin(1.0 + v + 0.5 * static_cast<double>(D->global_column(j)))) << "column " << j;
    }
  }
}

TEST_F(Distributed, GhostValuesAddUpAtTheirOwners) {
  // Each rank puts g % 7 + 1 + rank at every local column g (own and ghost); an owner's total is its own
  // value plus those of the ranks that read g as a ghost, found from every rank's ghost list.
  const auto A = std::make_shared<const CsrMatrix<double>>(poisson(Stencil::p7, {24, 24, 48}));
  const auto D = mpi.matrix(A, SpmvFormat::csr);
  const int rank = mpi.comm().rank();
  const auto value = [](std::int64_t g, int r) { return static_cast<double>(g % 7 + 1 + r); };
  Vector<double> values(static_cast<std::size_t>(D->local().cols));
  for (Index j = 0; j < D->local().cols; ++j) values[j] = value(D->global_column(j), rank);
  const Vector<double> own = D->sum_at_owners(values);
  const Vector<double> mine(D->ghost_columns().begin(), D->ghost_columns().end());
  const BlockPartition lists = mpi.comm().partition_of(static_cast<std::int64_t>(mine.size()));
  Vector<double> every;
  mpi.comm().allgather(mine, lists, every);
  ASSERT_EQ(own.size(), static_cast<std::size_t>(D->rows));
  for (Index i = 0; i < D->rows; ++i) {
    const std::int64_t g = D->first_row() + i;
    double expected = value(g, rank);
    for (int r = 0; r < mpi.comm().size(); ++r)
      if (std::binary_search(every.begin() + lists.begin(r), every.begin() + lists.end(r), static_cast<double>(g)))
        expected += value(g, r);
    ASSERT_EQ(own[i], expected) << "row " << g;
  }
}

// Rows [first, last) of A, as a rank that holds only them would pass them (global column numbers).
CsrMatrix<double> rows_of(const CsrMatrix<double>& A, std::int64_t first, std::int64_t last) {
  return row_block(A, static_cast<Index>(first), static_cast<Index>(last));
}

// D A D with d_i = 1 + 0.4 sin(i + phase): new values on A's pattern, still symmetric positive definite.
CsrMatrix<double> rescaled(const CsrMatrix<double>& A, double phase) {
  CsrMatrix<double> B = A;
  const auto d = [phase](Index i) { return 1.0 + 0.4 * std::sin(static_cast<double>(i) + phase); };
  for (Index i = 0; i < B.rows; ++i)
    for (Offset k = B.row_begin(i); k < B.row_end(i); ++k) B.val[k] *= d(i) * d(B.col[k]);
  return B;
}

// The cantilever under its weight (problems/elasticity.hpp) with its rigid-body modes.
struct Cantilever {
  CsrMatrix<double> A;
  AmgParams params;
};
Cantilever cantilever(std::vector<std::int64_t> cells) {
  ElasticityParams body;
  body.cells = std::move(cells);
  Cantilever c{elasticity_matrix(body), {}};
  c.params.block_size = body.dimensions();
  c.params.near_nullspace = rigid_body_modes(elasticity_coordinates(body), body.dimensions(), body.dimensions());
  c.params.nullspace = NullspaceChoice::none;  // clamped
  return c;
}

// An array sent from rank 0 to every rank, its length first (test sizes: within MPI's int count of bytes).
template <class Container>
void send_from_first(Container& v) {
  std::uint64_t n = v.size();
  MPI_Bcast(&n, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  v.resize(n);
  MPI_Bcast(v.data(), static_cast<int>(n * sizeof(typename Container::value_type)), MPI_BYTE, 0, MPI_COMM_WORLD);
}

// What expect_same_solve compares with: the single-process solver's results, made on rank 0 alone and sent
// to every rank (with 8 ranks on 2 cores, each rank making its own copy took most of the suite's time).
struct SingleProcessSolve {
  int iterations = 0;
  bool converged = false;
  int ranks = 0;
  std::vector<double> history, warm_history;
  Vector<double> x, warm_x, z;
  Array<Index> aggregates;
};

SingleProcessSolve single_process_solve(const std::shared_ptr<const CsrMatrix<double>>& A, Parameters params,
                                        const Vector<double>& b) {
  SingleProcessSolve run;
  int failed = 0;  // rank 0's error, on every rank: the others would wait for its results
  if (world_rank() == 0) try {
    params.distribute = false;
    const Solver alone(A, params);
    const SolveResult result = alone.solve(b, run.x);
    run.iterations = result.iterations;
    run.converged = result.converged;
    run.ranks = alone.setup().ranks;
    run.history = result.history;
    // From an initial guess: half the solution.
    run.warm_x = run.x;
    for (double& v : run.warm_x) v *= 0.5;
    SolveOptions from_x;
    from_x.initial_guess = true;
    run.warm_history = alone.solve(b, run.warm_x, {}, from_x).history;
    alone.precondition(b, run.z);
    run.aggregates = alone.finest_aggregates();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "the single-process solve: " << e.what();
    failed = 1;
  }
  MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (failed) throw std::runtime_error("the single-process solve failed on rank 0");
  MPI_Bcast(&run.iterations, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Bcast(&run.ranks, 1, MPI_INT, 0, MPI_COMM_WORLD);
  int converged = run.converged ? 1 : 0;
  MPI_Bcast(&converged, 1, MPI_INT, 0, MPI_COMM_WORLD);
  run.converged = converged != 0;
  send_from_first(run.history);
  send_from_first(run.warm_history);
  send_from_first(run.x);
  send_from_first(run.warm_x);
  send_from_first(run.z);
  send_from_first(run.aggregates);
  return run;
}

// A whole solve distributed over the ranks equals the single-process solve: hierarchy, iteration count,
// residual history and solution, bit for bit.
void expect_same_solve(const CsrMatrix<double>& A, Parameters params, const std::string& what) {
  SCOPED_TRACE(what);
  const auto shared = std::make_shared<const CsrMatrix<double>>(A);
  Vector<double> b = seeded_vector(A.rows, 8);
  if (params.amg.nullspace == NullspaceChoice::constant) CpuBackend{}.remove_mean(b);
  if (params.amg.is_system()) {  // a singular system's b in equilibrium: its part along the nullspace removed
    AmgParams amg = params.amg;
    resolve_system_nullspace(A, amg);
    if (amg.singular())
      NullspaceProjection(finest_near_nullspace(A.rows, amg.block_size, amg.near_nullspace), *amg.nullspace_combinations)
          .project(b);
  }
  const SingleProcessSolve one = single_process_solve(shared, params, b);
  params.distribute = true;
  const Solver together(shared, params);
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  EXPECT_EQ(together.setup().ranks, ranks);
  EXPECT_EQ(one.ranks, 1);
  Vector<double> x_together;
  const SolveResult many = together.solve(b, x_together);
  EXPECT_TRUE(one.converged);
  EXPECT_EQ(many.iterations, one.iterations);
  EXPECT_EQ(many.history, one.history);
  EXPECT_EQ(x_together, one.x);
  if (ranks > 1) {
    EXPECT_GT(many.communication.reductions, 0u);
  }
  // From an initial guess (half the solution, whole on every rank as b is): the same history again.
  SolveOptions from_x;
  from_x.initial_guess = true;
  Vector<double> guess_together = one.x;
  for (double& v : guess_together) v *= 0.5;
  EXPECT_EQ(together.solve(b, guess_together, {}, from_x).history, one.warm_history);
  EXPECT_EQ(guess_together, one.warm_x);
  EXPECT_LT(one.warm_history.front(), 1.0);
  // From the rank's rows alone (what a program that never holds the whole matrix passes): the same again.
  const auto [first, last] = owned_rows(A.rows, params.amg.block_size);
  const Solver by_rows(RowBlock{A.rows, rows_of(A, first, last)}, params);
  Vector<double> x_by_rows;
  const SolveResult rows_result = by_rows.solve(b, x_by_rows);
  EXPECT_EQ(by_rows.setup().nullspace, together.setup().nullspace);
  EXPECT_EQ(rows_result.history, one.history);
  EXPECT_EQ(x_by_rows, one.x);

  // With the vectors by rows too (no rank holds a whole one): each rank's rows of the same x, from zero and
  // from the guess's rows, and its rows of the same preconditioned vector.
  const auto slice = [&](const Vector<double>& v) {
    return Vector<double>(v.begin() + first, v.begin() + last);
  };
  Vector<double> x_rows;
  const SolveResult rows_only = by_rows.solve_rows(slice(b), x_rows);
  EXPECT_EQ(rows_only.iterations, one.iterations);
  EXPECT_EQ(rows_only.history, one.history);
  EXPECT_EQ(x_rows, slice(one.x));
  Vector<double> guess_rows = slice(one.x);
  for (double& v : guess_rows) v *= 0.5;
  EXPECT_EQ(by_rows.solve_rows(slice(b), guess_rows, {}, from_x).history, one.warm_history);
  EXPECT_EQ(guess_rows, slice(one.warm_x));
  Vector<double> z_rows;
  by_rows.precondition_rows(slice(b), z_rows);
  EXPECT_EQ(z_rows, slice(one.z));
  // The finest aggregates, each rank its rows of them where the solver is distributed.
  EXPECT_EQ(by_rows.finest_aggregates(), by_rows.setup().ranks > 1
                                             ? Array<Index>(one.aggregates.begin() + first, one.aggregates.begin() + last)
                                             : one.aggregates);
  // A solver built from the whole matrix takes the rows of the same partition.
  Vector<double> x_whole_matrix;
  EXPECT_EQ(together.solve_rows(slice(b), x_whole_matrix).history, one.history);
  EXPECT_EQ(x_whole_matrix, slice(one.x));
}

// A system's solve on the ranks (the node blocks' Chebyshev in the V-cycle), from the whole matrix and from
// the ranks' rows; and a singular one refused alike on every rank.
TEST(DistributedSolve, ASystemsSolveEqualsTheSingleProcessSolve) {
  Cantilever beam = cantilever({200, 45});
  Parameters p;
  p.amg = beam.params;
  p.amg.nullspace = NullspaceChoice::automatic;  // found to be none: the beam is clamped
  expect_same_solve(beam.A, p, "2D cantilever 200 x 45");
  p.amg.smoother.type = SmootherType::gauss_seidel;  // in blocks of 2,048 nodes, then of 64 aggregates' nodes
  expect_same_solve(beam.A, p, "2D cantilever 200 x 45, gauss_seidel");
  p.amg.smoother.type = SmootherType::chebyshev;
  p.solver.precision = Precision::mixed;
  const Cantilever solid = cantilever({24, 8, 8});
  p.amg = solid.params;
  expect_same_solve(solid.A, p, "3D cantilever 24 x 8 x 8, mixed");

  // A singular one: the beam held nowhere (9,821 nodes: five blocks of 2048), its three rigid-body modes its
  // nullspace, projected out of every iterate on the ranks' rows, the coarsest solved by its pseudo-inverse.
  Vector<double> points;
  p = {};
  const CsrMatrix<double> floating = test::elasticity_2d(160, 60, points, test::Support::floating);
  p.amg.block_size = 2;
  p.amg.near_nullspace = rigid_body_modes(points, 2);
  expect_same_solve(floating, p, "2D beam held nowhere (singular)");
}

// A system's near-nullspace given as each rank's rows of the vectors (the rigid-body modes of its nodes about
// the centroid of all, summed over the ranks) is those rows of the whole vectors, bit for bit, and sets up
// and solves as they do: no rank need hold a whole vector.
TEST(DistributedSolve, ASystemsNearNullspaceByRowsIsTheWholeOnes) {
  ElasticityParams body;
  body.cells = {100, 12, 12};  // 16,900 nodes: nine blocks of rows
  const CsrMatrix<double> A = elasticity_matrix(body);
  Parameters whole;
  whole.amg.block_size = 3;
  whole.amg.nullspace = NullspaceChoice::none;
  whole.amg.near_nullspace = rigid_body_modes(elasticity_coordinates(body), 3, 3);
  const auto [first, last] = owned_rows(A.rows, 3);
  const Vector<double> coordinates = elasticity_coordinates(body, first / 3, last / 3);
  const std::array<ExactSum, 3> partial = coordinate_sums(coordinates, 3);
  std::array<double, 3> sums{};
  for (std::size_t a = 0; a < 3; ++a) sums[a] = exact_sum_over(MPI_COMM_WORLD, partial[a]);
  const std::array<double, 3> centre = centroid(sums, A.rows / 3);
  Parameters by_rows = whole;
  by_rows.amg.near_nullspace = rigid_body_modes(coordinates, 3, 3, centre);
  const Vector<double>& all = *whole.amg.near_nullspace.values;
  EXPECT_EQ(*by_rows.amg.near_nullspace.values, Vector<double>(all.begin() + first * 6, all.begin() + last * 6));

  const Solver from_whole(RowBlock{A.rows, rows_of(A, first, last)}, whole);
  const Solver from_rows(RowBlock{A.rows, rows_of(A, first, last)}, by_rows);
  const Vector<double> b = seeded_vector(A.rows, 5);
  const Vector<double> mine(b.begin() + first, b.begin() + last);
  Vector<double> x_whole, x_rows;
  const SolveResult one = from_whole.solve_rows(mine, x_whole);
  EXPECT_TRUE(one.converged);
  EXPECT_EQ(from_rows.solve_rows(mine, x_rows).history, one.history);
  EXPECT_EQ(x_rows, x_whole);
  EXPECT_EQ(from_rows.setup().operator_complexity, from_whole.setup().operator_complexity);

  // Rows of the wrong length on one rank are every rank's error.
  Parameters wrong = by_rows;
  if (last > first)
    wrong.amg.near_nullspace.values = std::make_shared<const Vector<double>>(
        by_rows.amg.near_nullspace.values->begin(), by_rows.amg.near_nullspace.values->end() - 6);
  if (running_on_several_ranks()) {
    EXPECT_THROW(Solver(RowBlock{A.rows, rows_of(A, first, last)}, wrong), InputError);
  }

  // A vector that is zero on every rank's rows is every rank's error, whatever amg.nullspace says; one zero on
  // some ranks' rows only is a vector like any other.
  const auto with_column_zero = [&](bool here) {
    Vector<double> values = *by_rows.amg.near_nullspace.values;
    if (here)
      for (std::size_t e = 4; e < values.size(); e += 6) values[e] = 0.0;
    Parameters p = by_rows;
    p.amg.near_nullspace.values = std::make_shared<const Vector<double>>(std::move(values));
    return p;
  };
  try {
    Solver(RowBlock{A.rows, rows_of(A, first, last)}, with_column_zero(true));
    ADD_FAILURE() << "a zero vector was taken";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("vector 5 is zero on every row"), std::string::npos) << e.what();
  }
  if (running_on_several_ranks()) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    EXPECT_NO_THROW(Solver(RowBlock{A.rows, rows_of(A, first, last)}, with_column_zero(rank == 0)));
  }
}

TEST(DistributedSolve, EqualsTheSingleProcessSolve) {
  Parameters p;
  expect_same_solve(poisson(Stencil::p7, {40, 40, 40}), p, "7-point 40^3, double");
  p.solver.precision = Precision::mixed;
  expect_same_solve(poisson(Stencil::p27, {30, 30, 30}), p, "27-point 30^3, mixed");
  p = {};
  p.amg.smoother.type = SmootherType::jacobi;
  p.solver.type = SolverType::amg;
  p.solver.tolerance = 1e-6;
  expect_same_solve(poisson(Stencil::p5, {300, 200}), p, "5-point 300 x 200, jacobi, stationary");
  p = {};
  p.amg.nullspace = NullspaceChoice::constant;
  expect_same_solve(poisson(Stencil::p5, {250, 230}, Boundary::neumann), p, "Neumann 250 x 230, singular");
  // Gauss-Seidel in blocks of each level's reduction blocks, which the ranks hold whole: the ghosts read as
  // before the sweep, as the rows of the other blocks are on one process.
  p = {};
  p.amg.smoother.type = SmootherType::gauss_seidel;
  expect_same_solve(poisson(Stencil::p7, {30, 30, 30}), p, "7-point 30^3, gauss_seidel");
  p = {};
  p.solver.precision = Precision::mixed;  // A / 2^s (amgsolve/matrix_scale.hpp), s over all ranks' rows alike
  CsrMatrix<double> tiny = poisson(Stencil::p7, {24, 24, 24});
  for (double& v : tiny.val) v = std::ldexp(v, -1000);
  expect_same_solve(tiny, p, "7-point 24^3 times 2^-1000, mixed");
  p = {};
  p.amg.coarse_size = 20000;  // a coarsest level spread over several ranks, solved redundantly
  expect_same_solve(poisson(Stencil::p7, {36, 36, 36}), p, "7-point 36^3, large coarsest level");
  // solver.halo_exchange: the same histories in vector and task mode (two threads a rank for task mode).
  p = {};
  p.solver.halo_exchange = HaloMode::vector;
  expect_same_solve(poisson(Stencil::p7, {30, 30, 30}), p, "7-point 30^3, vector mode");
  const ScopedThreads threads(2);
  p.solver.halo_exchange = HaloMode::task;
  expect_same_solve(poisson(Stencil::p7, {30, 30, 30}), p, "7-point 30^3, task mode");
  const Solver task_mode(std::make_shared<const CsrMatrix<double>>(poisson(Stencil::p7, {8, 8, 8})), p);
  if (running_on_several_ranks()) {
    EXPECT_EQ(task_mode.setup().halo_exchange, HaloMode::task);
    // With one thread a rank task mode runs naive overlap, and the report says so (it said task).
    const ScopedThreads one_thread(1);
    const Solver one_thread_a_rank(std::make_shared<const CsrMatrix<double>>(poisson(Stencil::p7, {8, 8, 8})), p);
    EXPECT_EQ(one_thread_a_rank.setup().halo_exchange, HaloMode::overlap);
  }
}

// PCG with the V-cycle on the layer over a local backend (the cpu one here; the cuda one on a GPU), cycling
// on the levels the mpi backend's setup built: the single-process history and solution, bit for bit.
template <class V>
void expect_layer_solve(const CsrMatrix<double>& A_double, const AmgParams& amg, const std::string& what) {
  SCOPED_TRACE(what);
  const auto A = std::make_shared<const CsrMatrix<V>>(cast_values<V>(A_double));
  SolverParams solver;
  solver.tolerance = std::is_same_v<V, float> ? 1e-5 : 1e-8;
  const Vector<double> b_double = seeded_vector(A->rows, 8);
  const Vector<V> b(b_double.begin(), b_double.end());

  const CpuBackend cpu;
  const AmgHierarchy<V> alone(A, amg);
  const Vcycle<CpuBackend, V> cycle_alone(cpu, alone);
  const auto A_alone = cpu.matrix(A, SpmvFormat::csr);
  Vector<V> x_alone;
  const SolveResult one = pcg<CpuBackend, V>(cpu, *A_alone, b, x_alone,
                                             [&](const Vector<V>& r, Vector<V>& z) { cycle_alone.apply(r, z); }, solver);

  const MpiBackend mpi;
  const Hierarchy<MpiBackend, V> levels(mpi, mpi.csr(A), amg);
  const MpiOver<CpuBackend> layer(mpi.comm());
  const Vcycle<MpiOver<CpuBackend>, V> cycle(layer, levels);
  const auto A_layer = layer.matrix(levels.shared_matrix(0), SpmvFormat::csr);
  Vector<V> x_local;
  const SolveResult many = pcg<MpiOver<CpuBackend>, V>(
      layer, *A_layer, layer.upload(b), x_local, [&](const Vector<V>& r, Vector<V>& z) { cycle.apply(r, z); }, solver);
  EXPECT_TRUE(one.converged);
  EXPECT_EQ(many.iterations, one.iterations);
  EXPECT_EQ(many.history, one.history);
  Vector<V> x;
  layer.download(x_local, x);
  EXPECT_EQ(x, x_alone);
}

TEST(DistributedSolve, TheLayerOverALocalBackendEqualsTheSingleProcessSolve) {
  AmgParams p;
  p.coarse_size = 100;  // several levels, the small coarse ones gathered onto the first ranks
  expect_layer_solve<double>(poisson(Stencil::p7, {30, 28, 26}), p, "7-point, Chebyshev");
  expect_layer_solve<float>(poisson(Stencil::p27, {24, 24, 24}), p, "27-point, float");
  p.smoother.type = SmootherType::jacobi;
  expect_layer_solve<double>(poisson(Stencil::p5, {150, 140}), p, "5-point, Jacobi");
  p = {};
  p.coarse_size = 20000;  // a coarsest level over several ranks, solved redundantly on each
  expect_layer_solve<double>(poisson(Stencil::p7, {32, 32, 32}), p, "7-point, large coarsest level");
}

#ifdef AMGSOLVE_WITH_CUDA
// The layer over the cuda backend (ctest MpiGpu.2Ranks, label gpu): each rank's solve on a GPU of its node,
// the world's ranks against this rank alone (MPI_COMM_SELF): the same residual history and solution, in
// the formats whose kernels sum each row in its order (cuSPARSE's CSR promises no order); the iterations
// within one of the cpu backend's and the residual, recomputed on the host, at the tolerance.
TEST(DistributedSolve, OnEachRanksGpuTheHistoryIsOneRanks) {
  if (!gpu_status().usable()) GTEST_SKIP() << "no usable GPU: " << gpu_status().unavailable_reason;
  const auto A = std::make_shared<const CsrMatrix<double>>(poisson(Stencil::p7, {40, 40, 40}));
  AmgParams amg;
  amg.coarse_size = 500;
  SolverParams solver;
  solver.tolerance = 1e-8;
  const Vector<double> b = seeded_vector(A->rows, 8);
  const auto solve_on = [&](MPI_Comm comm, SpmvFormat format, Vector<double>& x) {
    const MpiBackend mpi(comm);
    const Hierarchy<MpiBackend, double> levels(mpi, mpi.csr(A), amg);
    const MpiOver<CudaBackend> layer(mpi.comm());
    const Vcycle<MpiOver<CudaBackend>, double> cycle(layer, levels, format);
    const auto A_layer = layer.matrix(levels.shared_matrix(0), format);
    DeviceVector<double> x_device;
    const SolveResult result = pcg<MpiOver<CudaBackend>, double>(
        layer, *A_layer, layer.upload(b), x_device,
        [&](const DeviceVector<double>& r, DeviceVector<double>& z) { cycle.apply(r, z); }, solver);
    layer.download(x_device, x);
    return result;
  };
  const AmgHierarchy<double> cpu_levels(A, amg);
  const CpuBackend cpu;
  const Vcycle<CpuBackend, double> cpu_cycle(cpu, cpu_levels);
  Vector<double> x_cpu;
  const SolveResult on_cpu = pcg<CpuBackend, double>(
      cpu, *cpu.matrix(A, SpmvFormat::csr), b, x_cpu,
      [&](const Vector<double>& r, Vector<double>& z) { cpu_cycle.apply(r, z); }, solver);
  for (const SpmvFormat format : {SpmvFormat::ellpack_r, SpmvFormat::pjds}) {
    SCOPED_TRACE(format_name(format));
    Vector<double> x_alone, x_together;
    const SolveResult alone = solve_on(MPI_COMM_SELF, format, x_alone);
    const SolveResult together = solve_on(MPI_COMM_WORLD, format, x_together);
    EXPECT_TRUE(together.converged);
    EXPECT_EQ(together.history, alone.history);
    EXPECT_EQ(x_together, x_alone);
    EXPECT_NEAR(together.iterations, on_cpu.iterations, 1);
    EXPECT_LT(test::true_relative_residual(*A, b, x_together), 1.01e-8);
  }
}
#endif

TEST(DistributedSolve, AWrongRowBlockIsTheSameErrorOnEveryRank) {
  const CsrMatrix<double> A = poisson(Stencil::p7, {12, 12, 12});
  const auto [first, last] = owned_rows(A.rows);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // Rank 0 leaves out its last row (on one process: a block that is not the whole matrix); every rank must
  // throw, none wait. (A matrix entry's problem, which the program says of the matrix's file, is marked.)
  const auto message_of = [](RowBlock block, const Parameters& params) {
    try {
      const Solver solver(std::move(block), params);
    } catch (const MatrixEntryError& e) {
      return "[matrix entry] " + std::string(e.what());
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const std::string short_block = message_of(RowBlock{A.rows, rows_of(A, first, last - (rank == 0 ? 1 : 0))}, {});
  if (ranks > 1) {
    EXPECT_NE(short_block.find("Solver: rank 0's row block has"), std::string::npos) << short_block;
  }
  // A parameter out of its range on one rank only: its message on every rank, none left waiting.
  Parameters bad_on_last;
  if (rank == ranks - 1) bad_on_last.amg.lanczos_steps = 0;
  const std::string parameter = message_of(RowBlock{A.rows, rows_of(A, first, last)}, bad_on_last);
  EXPECT_EQ(parameter.rfind("amg.lanczos_steps must be >= 4", 0), 0u) << parameter;
  // A value the float cycle cannot hold in the matrix's last row (on the rank that holds it; small matrices
  // live on the first ranks): the one-process message, on every rank.
  CsrMatrix<double> tiny = rows_of(A, first, last);
  if (last == A.rows && last > first) tiny.val.back() = 1e-36;  // the matrix's scale is its largest diagonal's
  Parameters mixed;
  mixed.solver.precision = Precision::mixed;
  const std::string range = message_of(RowBlock{A.rows, std::move(tiny)}, mixed);
  EXPECT_EQ(range.rfind("[matrix entry] entry (1728, 1728) (counted from 1) = 1e-36 is outside what the float cycle", 0),
            0u)
      << range;
  // A column count that is not the matrix's (rows given with another numbering of the columns).
  CsrMatrix<double> other_columns = rows_of(A, first, last);
  other_columns.cols = A.rows + 1;
  EXPECT_THROW(Solver(RowBlock{A.rows, std::move(other_columns)}, Parameters{}), InputError);
  // A solver from blocks does not re-set up from a whole matrix.
  Solver solver(RowBlock{A.rows, rows_of(A, first, last)}, Parameters{});
  EXPECT_THROW(solver.rebuild(std::make_shared<const CsrMatrix<double>>(A)), InputError);
}

// A floating part fails the setup (its coarsest level singular) or, in mixed precision, the solve (a PCG
// breakdown) on every rank, and every rank's error names the part as one process's does.
TEST(DistributedSolve, AFloatingPartIsNamedInEveryRanksError) {
  const auto A = test::side_by_side({poisson(Stencil::p5, {100, 100}, Boundary::dirichlet),
                                     poisson(Stencil::p5, {6, 5}, Boundary::neumann)});
  const auto [first, last] = owned_rows(A->rows);
  for (const Precision precision : {Precision::double_precision, Precision::mixed}) {
    Parameters params;
    params.solver.precision = precision;
    const std::string error = test::error_of<FloatingPartError>([&] {
      const Solver solver(RowBlock{A->rows, rows_of(*A, first, last)}, params);
      Vector<double> x;
      (void)solver.solve(Vector<double>(static_cast<std::size_t>(A->rows), 1.0), x);
    });
    EXPECT_NE(error.find(precision == Precision::mixed ? "PCG breakdown" : "coarsest-level matrix"), std::string::npos)
        << error;
    EXPECT_NE(error.find("row 10001 and the 29 rows coupled to it"), std::string::npos) << error;
  }
}

// Solver::rebuild from this rank's new rows: a re-setup whose solve is the single-process re-setup's solve,
// bit for bit; a block on another pattern is a full setup, said so; a wrong block, an error on every rank.
TEST(DistributedSolve, ReSetupFromRowBlocksEqualsTheSingleProcessReSetup) {
  const CsrMatrix<double> A = poisson(Stencil::p7, {32, 30, 28});
  const CsrMatrix<double> changed = rescaled(A, 1.0);
  const auto [first, last] = owned_rows(A.rows);
  Parameters params;
  params.amg.keep_structure = true;
  params.distribute = false;
  Solver alone(std::make_shared<const CsrMatrix<double>>(A), params);
  alone.rebuild(std::make_shared<const CsrMatrix<double>>(changed));
  ASSERT_TRUE(alone.setup().reused) << alone.setup().rebuild_note;
  params.distribute = true;
  Solver by_rows(RowBlock{A.rows, rows_of(A, first, last)}, params);
  by_rows.rebuild(RowBlock{A.rows, rows_of(changed, first, last)});
  EXPECT_TRUE(by_rows.setup().reused) << by_rows.setup().rebuild_note;
  const Vector<double> b = seeded_vector(A.rows, 5);
  test::expect_identical_solves(alone, by_rows, b);
  // Another pattern: a full setup that solves the new matrix.
  const CsrMatrix<double> other = poisson(Stencil::p27, {32, 30, 28});
  by_rows.rebuild(RowBlock{other.rows, rows_of(other, first, last)});
  EXPECT_FALSE(by_rows.setup().reused);
  EXPECT_NE(by_rows.setup().rebuild_note.find("pattern"), std::string::npos) << by_rows.setup().rebuild_note;
  Vector<double> x_by_rows;
  EXPECT_TRUE(by_rows.solve(b, x_by_rows).converged);
  // Rank 0 leaves out a row: the same InputError on every rank, none left waiting.
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  EXPECT_THROW(by_rows.rebuild(RowBlock{A.rows, rows_of(changed, first, last - (rank == 0 ? 1 : 0))}), InputError);
  // A solver from the whole matrix is not rebuilt from blocks.
  EXPECT_THROW(alone.rebuild(RowBlock{A.rows, rows_of(changed, first, last)}), InputError);
}

// ---- the distributed setup: the single-process hierarchy, level by level

// Bit for bit, or (relative > 0) the same pattern and values within `relative` of the largest entry.
template <class V>
void expect_same_matrix(const CsrMatrix<V>& distributed, const CsrMatrix<V>& alone, const std::string& what,
                        double relative = 0.0) {
  EXPECT_EQ(distributed.rows, alone.rows) << what;
  EXPECT_EQ(distributed.cols, alone.cols) << what;
  EXPECT_EQ(distributed.row_ptr, alone.row_ptr) << what;
  EXPECT_EQ(distributed.col, alone.col) << what;
  if (relative == 0.0 || distributed.val.size() != alone.val.size()) {
    EXPECT_EQ(distributed.val, alone.val) << what;
    return;
  }
  double largest = 0.0, worst = 0.0;
  for (std::size_t k = 0; k < alone.val.size(); ++k) {
    largest = std::max(largest, std::abs(double(alone.val[k])));
    worst = std::max(worst, std::abs(double(distributed.val[k]) - double(alone.val[k])));
  }
  EXPECT_LE(worst, relative * largest) << what;
}

// Every level's A, P and R built on the ranks' rows, gathered, equal the single-process ones bit for bit,
// and so do the level table, the finest aggregates and the coarsest level's nullspace. relative > 0: the
// products add their terms in another order (summa2d, split3d), the values agree to that.
template <class V>
void expect_same_levels(const MpiBackend& mpi, const Hierarchy<MpiBackend, V>& together, const AmgHierarchy<V>& alone,
                        double relative = 0.0) {
  ASSERT_EQ(together.levels(), alone.levels());
  ASSERT_GE(alone.levels(), 2u);
  for (std::size_t l = 0; l < alone.levels(); ++l) {
    const std::string level = "level " + std::to_string(l);
    expect_same_matrix(*mpi.host_view(together.matrix(l)), alone.matrix(l), level + " A", relative);
    const LevelInfo &mine = together.info()[l], &theirs = alone.info()[l];
    EXPECT_EQ(mine.rows, theirs.rows) << level;
    EXPECT_EQ(mine.nnz, theirs.nnz) << level;
    EXPECT_EQ(mine.aggregates, theirs.aggregates) << level;
    if (relative == 0.0) {
      EXPECT_EQ(mine.rho, theirs.rho) << level;
    } else {
      EXPECT_NEAR(mine.rho, theirs.rho, 1e-9 * theirs.rho) << level;
    }
    if (l + 1 == alone.levels()) break;
    expect_same_matrix(*mpi.host_view(together.prolongator(l)), alone.prolongator(l), level + " P", relative);
    expect_same_matrix(*mpi.host_view(together.restriction(l)), alone.restriction(l), level + " R", relative);
  }
  // Each rank keeps its rows' aggregates.
  const auto& finest = together.matrix(0);
  const Array<Index>& all = alone.finest_aggregates();
  EXPECT_EQ(together.finest_aggregates(),
            Array<Index>(all.begin() + finest.first_row(), all.begin() + finest.first_row() + finest.rows));
  EXPECT_EQ(together.coarse_nullspace(), alone.coarse_nullspace());
}

template <class V>
void expect_same_hierarchy(const CsrMatrix<double>& A_double, const AmgParams& params, const std::string& what,
                           double relative = 0.0) {
  SCOPED_TRACE(what);
  const auto A = std::make_shared<const CsrMatrix<V>>(cast_values<V>(A_double));
  const AmgHierarchy<V> alone(A, params);
  const MpiBackend mpi;
  const Hierarchy<MpiBackend, V> together(mpi, mpi.csr(A), params);
  expect_same_levels(mpi, together, alone, relative);
}

// New values that change which links are strong: off-diagonal entries scaled by 1 + 0.5 sin(i + j)
// (symmetric), the diagonal by 1.5 to stay dominant.
CsrMatrix<double> restrengthened(const CsrMatrix<double>& A) {
  CsrMatrix<double> B = A;
  for (Index i = 0; i < B.rows; ++i)
    for (Offset k = B.row_begin(i); k < B.row_end(i); ++k)
      B.val[k] *= B.col[k] == i ? 1.5 : 1.0 + 0.5 * std::sin(static_cast<double>(i + B.col[k]));
  return B;
}

// A re-setup on the ranks (the aggregates kept, the products by their numeric phase after the kept plans
// fetch the rows' values) is the single-process re-setup (the products by their numeric phase), level by level and bit for
// bit, twice in a row; a matrix on another pattern is refused on every rank.
template <class V>
void expect_same_resetup(const CsrMatrix<double>& A_double, AmgParams params, const std::string& what) {
  SCOPED_TRACE(what);
  params.keep_structure = true;
  const auto on_values = [](const CsrMatrix<double>& M) { return std::make_shared<const CsrMatrix<V>>(cast_values<V>(M)); };
  AmgHierarchy<V> alone(on_values(A_double), params);
  const MpiBackend mpi;
  Hierarchy<MpiBackend, V> together(mpi, mpi.csr(on_values(A_double)), params);
  for (const CsrMatrix<double>& changed : {rescaled(A_double, 0.3), rescaled(A_double, 2.0), restrengthened(A_double)}) {
    alone.rebuild(on_values(changed));
    together.rebuild(mpi, mpi.csr(on_values(changed)));
    expect_same_levels(mpi, together, alone);
    if (alone.products_renewed_from() < 0) {  // the kept patterns hold: the ranks' products by the numeric phase
      const LevelInfo& finest = together.info().front();
      for (const SpgemmStats* product : {&finest.ap_product, &finest.rap_product})
        EXPECT_EQ(product->choice.rfind(kNumericPhaseChoice, 0), 0u) << product->choice;
      // A_f T gathered with the Jacobi step, as one process forms it
      EXPECT_EQ(finest.prolongator_product.choice, alone.info().front().prolongator_product.choice);
      EXPECT_EQ(finest.prolongator_product.multiplications, alone.info().front().prolongator_product.multiplications);
    }
  }
  // Where the lumped rows change, the products are formed by the SpGEMM from that level on, on one process
  // as on the ranks; then, twice the same values, into the renewed patterns again.
  const CsrMatrix<double> moved = test::relumped(A_double);
  for (const CsrMatrix<double>& changed : {moved, test::scaled(moved, 2.0)}) {  // the latter: the same rows lumped
    alone.rebuild(on_values(changed));
    together.rebuild(mpi, mpi.csr(on_values(changed)));
    expect_same_levels(mpi, together, alone);
  }
  CsrMatrix<double> other = A_double;
  other.val.pop_back();
  other.col.pop_back();
  --other.row_ptr.back();
  EXPECT_THROW(together.rebuild(mpi, mpi.csr(on_values(other))), InputError);
}

TEST(DistributedSetup, ReSetupIsTheSingleProcessReSetup) {
  AmgParams p;
  p.coarse_size = 100;
  expect_same_resetup<double>(poisson(Stencil::p7, {30, 28, 26}), p, "7-point, double");
  expect_same_resetup<float>(poisson(Stencil::p27, {24, 24, 24}), p, "27-point, float");
  PoissonParams aniso;  // weak couplings: the filtered matrix from the kept strength
  aniso.stencil = Stencil::p5;
  aniso.size = {160, 150};
  aniso.anisotropy = {1.0, 0.05};
  const CsrMatrix<double> A = poisson_matrix(aniso);
  expect_same_resetup<double>(A, p, "anisotropic 5-point");
  {  // there the lumped rows do change: the case above renewed the patterns from that level on
    AmgParams keeping = p;
    keeping.keep_structure = true;
    AmgHierarchy<double> kept(std::make_shared<const CsrMatrix<double>>(A), keeping);
    kept.rebuild(std::make_shared<const CsrMatrix<double>>(test::relumped(A)));
    EXPECT_GE(kept.products_renewed_from(), 0);
  }
  // Those last values classify the links anew: a fresh setup of them aggregates otherwise, which the
  // re-setup, keeping the aggregates, must not.
  p.keep_structure = true;
  AmgHierarchy<double> rebuilt(std::make_shared<const CsrMatrix<double>>(A), p);
  const auto changed = std::make_shared<const CsrMatrix<double>>(restrengthened(A));
  rebuilt.rebuild(changed);
  EXPECT_NE(AmgHierarchy<double>(changed, p).finest_aggregates(), rebuilt.finest_aggregates());
}

// A system's nullspace found on the ranks' rows (the Gram matrices summed over them, B's ghost rows through
// the halo) is one process's, bit for bit: the floating beam's three rigid-body modes, the rotation alone of
// the beam pinned at a corner, none for the clamped one; and a declared one that does not hold is the same
// error on every rank, naming the row.
TEST(DistributedSetup, FindsTheSingleProcessNullspaceOfASystem) {
  MpiBackend mpi;
  mpi.set_finest_unit(node_partition_unit(2));
  for (const test::Support support : {test::Support::floating, test::Support::pinned_corner, test::Support::clamped}) {
    Vector<double> points;
    const auto A = std::make_shared<const CsrMatrix<double>>(test::elasticity_2d(160, 60, points, support));
    AmgParams alone;
    alone.block_size = 2;
    alone.near_nullspace = rigid_body_modes(points, 2);
    AmgParams together = alone;
    resolve_system_nullspace(*A, alone);
    resolve_system_nullspace(mpi, *mpi.csr(A), together);
    EXPECT_EQ(together.nullspace, alone.nullspace);
    ASSERT_EQ(together.nullspace_combinations != nullptr, alone.nullspace_combinations != nullptr);
    if (alone.nullspace_combinations) {
      EXPECT_EQ(*together.nullspace_combinations, *alone.nullspace_combinations);
    }
    EXPECT_EQ(alone.nullspace_combinations ? alone.nullspace_combinations->size() / 3 : 0u,
              support == test::Support::floating ? 3u : support == test::Support::pinned_corner ? 1u : 0u);
  }
  Vector<double> points;
  const auto A = std::make_shared<const CsrMatrix<double>>(test::elasticity_2d(160, 60, points));
  AmgParams declared;
  declared.block_size = 2;
  declared.near_nullspace = rigid_body_modes(points, 2);
  declared.nullspace = NullspaceChoice::near_nullspace;
  std::string alone, together;
  try {
    resolve_system_nullspace(*A, declared);
  } catch (const InputError& e) {
    alone = e.what();
  }
  try {
    resolve_system_nullspace(mpi, *mpi.csr(A), declared);
  } catch (const InputError& e) {
    together = e.what();
  }
  EXPECT_NE(alone.find("does not map near-nullspace vector 1"), std::string::npos) << alone;
  EXPECT_EQ(together, alone);
}

// A system's re-setup on the ranks (its aggregates, T and coarse near-nullspaces kept on their ranks) is the
// single-process one: the 2D cantilever's 18,300 nodes in three blocks, rescaled twice (D A D: still SPD).
TEST(DistributedSetup, ASystemsReSetupIsTheSingleProcessReSetup) {
  Cantilever beam = cantilever({300, 60});
  beam.params.keep_structure = true;
  AmgHierarchy<double> alone(std::make_shared<const CsrMatrix<double>>(beam.A), beam.params);
  MpiBackend mpi;
  mpi.set_finest_unit(node_partition_unit(beam.params.block_size));
  Hierarchy<MpiBackend, double> together(mpi, mpi.csr(std::make_shared<const CsrMatrix<double>>(beam.A)), beam.params);
  for (double phase : {0.3, 2.0}) {
    const auto changed = std::make_shared<const CsrMatrix<double>>(rescaled(beam.A, phase));
    alone.rebuild(changed);
    together.rebuild(mpi, mpi.csr(changed));
    expect_same_levels(mpi, together, alone);
  }
}

// The graph Laplacian (degree on the diagonal, -1 off it) of n nodes with the given undirected edges.
CsrMatrix<double> graph_laplacian(Index n, const std::vector<std::pair<Index, Index>>& edges) {
  std::vector<Triplet<double>> t;
  std::vector<double> degree(static_cast<std::size_t>(n), 0.0);
  for (const auto& [a, b] : edges) {
    t.push_back({a, b, -1.0});
    t.push_back({b, a, -1.0});
    ++degree[a];
    ++degree[b];
  }
  for (Index i = 0; i < n; ++i) t.push_back({i, i, degree[i]});
  return csr_from_triplets(n, n, std::move(t));
}

// The parts of a graph counted on the ranks' rows, nothing gathered, are the one-process count: parts
// that snake through every rank, parts far apart on two ranks, parts joined only through a third rank's
// node, parts within one rank, isolated nodes; and
// a singular matrix in parts is the one-process error on every rank.
TEST(DistributedSetup, ConnectedPartsAreCountedOnTheRanksRows) {
  const MpiBackend mpi;
  const auto expect_same_count = [&](const CsrMatrix<double>& A, const std::string& what) {
    const auto shared = std::make_shared<const CsrMatrix<double>>(A);
    EXPECT_EQ(connected_components(mpi, *mpi.csr(shared)), connected_components(A)) << what;
  };
  const Index n = 30000;
  std::vector<std::pair<Index, Index>> interleaved, mirrored, blocks;
  for (Index i = 0; i + 2 < n; ++i) interleaved.push_back({i, i + 2});  // odd and even: 2 parts, every rank
  for (Index i = 0; i < n / 2; ++i) mirrored.push_back({i, n - 1 - i});  // groups of 4 at both ends
  for (Index i = 0; i + 1 < n / 2; i += 2) mirrored.push_back({i, i + 1});
  for (Index i = 0; i + 1 < n; ++i)
    if ((i + 1) % 4000 != 0 && i < 28000) blocks.push_back({i, i + 1});  // 7 chains, then isolated nodes
  expect_same_count(graph_laplacian(n, interleaved), "interleaved chains");
  expect_same_count(graph_laplacian(n, mirrored), "mirrored pairs");
  expect_same_count(graph_laplacian(n, blocks), "chains and isolated nodes");
  // Parts whose smallest row reaches a middle rank's node only through the last rank's: several rounds.
  std::vector<std::pair<Index, Index>> detours;
  for (Index i = 0; i < 1000; ++i) {
    detours.push_back({i, n - 1 - i});
    detours.push_back({n - 1 - i, n / 2 + i});
  }
  expect_same_count(graph_laplacian(n, detours), "detours through the last rank");
  expect_same_count(poisson(Stencil::p5, {250, 230}, Boundary::neumann), "Neumann 5-point");
  const CsrMatrix<double> parts = graph_laplacian(n, interleaved);
  {
    // Stored zeros link nothing, within a rank (rows 0 and 1) or across ranks (rows 0 and n - 1).
    std::vector<Triplet<double>> t;
    for (Index i = 0; i < parts.rows; ++i)
      for (Offset k = parts.row_begin(i); k < parts.row_end(i); ++k) t.push_back({i, parts.col[k], parts.val[k]});
    for (const auto& [a, b] : {std::pair<Index, Index>{0, 1}, {0, n - 1}}) {
      t.push_back({a, b, 0.0});
      t.push_back({b, a, 0.0});
    }
    const CsrMatrix<double> zeros_linked = csr_from_triplets(n, n, std::move(t));
    ASSERT_EQ(zeros_linked.nnz(), parts.nnz() + 4);
    EXPECT_EQ(connected_components(zeros_linked), 2);
    expect_same_count(zeros_linked, "parts linked by stored zeros");
  }
  std::string alone, together;
  try {
    resolve_nullspace(parts, NullspaceChoice::automatic);
  } catch (const InputError& e) {
    alone = e.what();
  }
  try {
    resolve_nullspace(mpi, *mpi.csr(std::make_shared<const CsrMatrix<double>>(parts)), NullspaceChoice::automatic);
  } catch (const InputError& e) {
    together = e.what();
  }
  EXPECT_NE(alone.find("2 disconnected parts"), std::string::npos) << alone;
  EXPECT_EQ(together, alone);
}

// A floating part (a part of the graph whose rows all sum to zero, beside held ones) is named on the ranks'
// rows as on one process: a part at the end (the last rank's), one at the start, a part that snakes through
// every rank beside a held one, and none where every part is held or the whole is one part.
TEST(DistributedSetup, AFloatingPartIsNamedOnTheRanksRowsAsOnOne) {
  const MpiBackend mpi;
  const auto expect_same_clause = [&](const std::shared_ptr<const CsrMatrix<double>>& A, const std::string& what) {
    const std::string alone = floating_part(*A);
    EXPECT_EQ(floating_part(mpi, *mpi.csr(A)), alone) << what;
    return alone;
  };
  const CsrMatrix<double> held = poisson(Stencil::p5, {100, 100}, Boundary::dirichlet);
  const CsrMatrix<double> floating = poisson(Stencil::p5, {6, 5}, Boundary::neumann);
  EXPECT_NE(expect_same_clause(test::side_by_side({held, floating}), "held, floating").find("row 10001 and the 29 rows"),
            std::string::npos);
  EXPECT_NE(expect_same_clause(test::side_by_side({floating, held}), "floating, held").find("row 1 and the 29 rows"),
            std::string::npos);
  EXPECT_EQ(expect_same_clause(test::side_by_side({held, held}), "held, held"), "");
  const CsrMatrix<double> larger = poisson(Stencil::p5, {20, 10}, Boundary::neumann);
  EXPECT_NE(expect_same_clause(test::side_by_side({held, larger, held, floating}), "two floating")
                .find("row 10001 and the 199 rows"),
            std::string::npos);
  EXPECT_EQ(expect_same_clause(std::make_shared<const CsrMatrix<double>>(floating), "one part"), "");
  // Odd and even rows two chains through every rank; the even one held by its first row.
  const Index n = 30000;
  std::vector<std::pair<Index, Index>> interleaved;
  for (Index i = 0; i + 2 < n; ++i) interleaved.push_back({i, i + 2});
  CsrMatrix<double> chains = graph_laplacian(n, interleaved);
  for (Offset k = chains.row_begin(0); k < chains.row_end(0); ++k)
    if (chains.col[k] == 0) chains.val[k] += 1.0;
  EXPECT_NE(expect_same_clause(std::make_shared<const CsrMatrix<double>>(chains), "interleaved chains")
                .find("row 2 and the 14999 rows"),
            std::string::npos);
}

// A system's floating part (an elastic body held nowhere beside a clamped one, its nodes cut between ranks from
// 2 ranks on: 3,100 held and 1,891 free nodes, the ranks' blocks of 2,048) is named on the ranks' rows as on
// one process, and in every rank's error of a solver built from the rows.
TEST(DistributedSetup, ASystemsFloatingPartIsNamedOnTheRanksRowsAsOnOne) {
  MpiBackend mpi;
  mpi.set_finest_unit(node_partition_unit(2));
  const test::HeldAndFreeBodies bodies = test::held_and_free_bodies(100, 30, 60, 30);
  const auto& A = bodies.A;
  const NearNullspaceVectors& modes = bodies.modes;
  const NearNullspace whole = finest_near_nullspace(A->rows, 2, modes);
  const std::string alone = floating_part(*A, &whole);
  const auto D = mpi.csr(A);
  const NearNullspace mine = finest_near_nullspace(mpi, *D, 2, modes);
  EXPECT_EQ(floating_part(mpi, *D, &mine), alone);
  const std::string part = bodies.part();
  EXPECT_NE(alone.find(part), std::string::npos) << alone;
  Parameters params;
  params.amg.block_size = 2;
  params.amg.near_nullspace = modes;
  const auto [first, last] = owned_rows(A->rows, 2);
  const std::string error = test::error_of<FloatingPartError>([&] {
    const Solver solver(RowBlock{A->rows, rows_of(*A, first, last)}, params);
    Vector<double> x;
    (void)solver.solve(Vector<double>(static_cast<std::size_t>(A->rows), 1.0), x);
  });
  EXPECT_NE(error.find(part), std::string::npos) << error;
}

TEST(DistributedSetup, BuildsTheSingleProcessHierarchy) {
  AmgParams p;
  p.coarse_size = 100;  // several levels, the small coarse ones gathered onto the first ranks
  expect_same_hierarchy<double>(poisson(Stencil::p7, {36, 34, 32}), p, "7-point, double");
  expect_same_hierarchy<float>(poisson(Stencil::p27, {34, 34, 34}), p, "27-point, float");
  PoissonParams aniso;  // weak couplings: the filtered matrix and the Lanczos estimate of A itself
  aniso.stencil = Stencil::p5;
  aniso.size = {180, 170};
  aniso.anisotropy = {1.0, 0.001};
  expect_same_hierarchy<double>(poisson_matrix(aniso), p, "anisotropic 5-point");
  p.nullspace = NullspaceChoice::constant;  // left-out nodes aggregated alone, weights carried down
  p.strength_threshold = 0.25;
  p.coarse_size = 100;
  expect_same_hierarchy<double>(poisson(Stencil::p5, {150, 140}, Boundary::neumann), p, "Neumann, singular");
  p = {};
  p.smoother.type = SmootherType::jacobi;
  p.spectral_radius = SpectralRadius::gershgorin;
  p.coarse_size = 3000;  // a coarsest level over several ranks
  expect_same_hierarchy<double>(poisson(Stencil::p7, {30, 30, 30}), p, "jacobi, gershgorin");
}

// coarse_partition: whole blocks of kAggregateBlock, as the aggregates fall to the ranks where the level
// covers every rank (the ranks after the last that made any holding none, the left-out nodes' aggregates
// with that last one), else evenly over as many first ranks as get at least min_per_rank each.
TEST(DistributedSetup, ACoarseLevelIsCutInWholeBlocksWhereItsAggregatesFall) {
  const MpiBackend mpi;
  const Communicator& comm = mpi.comm();
  const int ranks = comm.size(), rank = comm.rank();
  const std::vector<std::int64_t> uneven = {3000, 0, 700, 5100, 129, 4000, 2600, 1};
  const std::vector<std::int64_t> first_half = {3100, 3100, 3100, 3100, 0, 0, 0, 0};  // the finest on 4 ranks
  const std::vector<std::int64_t> nothing(8, 0);  // left-out nodes alone (a level of isolated nodes)
  for (const std::vector<std::int64_t>* made_by_rank : {&uneven, &first_half, &nothing}) {
    for (const std::int64_t scale : {1, 2, 40}) {
      for (const std::int64_t min_per_rank : {kAggregateBlock, kCoarseRowsPerRank}) {
        const std::int64_t mine = (*made_by_rank)[static_cast<std::size_t>(rank) % made_by_rank->size()] / scale;
        const std::int64_t made = comm.sum(mine), made_before = comm.sum_before(mine);
        const std::int64_t count = made + 37 / scale;  // the left-out nodes' aggregates, numbered after all
        SCOPED_TRACE(std::to_string(count) + " aggregates, at least " + std::to_string(min_per_rank) + " a rank");
        const BlockPartition cut = coarse_partition(comm, count, mine, min_per_rank);
        ASSERT_EQ(cut.ranks(), ranks);
        EXPECT_EQ(cut.begin(0), 0);
        EXPECT_EQ(cut.size(), count);
        EXPECT_LE(cut.begin(rank), cut.end(rank));
        if (cut.begin(rank) < count) {
          EXPECT_EQ(cut.begin(rank) % kAggregateBlock, 0) << cut.begin(rank);
        }
        const std::int64_t holding = comm.sum(cut.count(rank) > 0 ? 1 : 0);
        if (count >= min_per_rank * (ranks - 1) + 1) {
          if (made_before < made) {
            EXPECT_LE(std::abs(cut.begin(rank) - made_before), kAggregateBlock / 2);
          } else if (made > 0 || rank > 0) {
            EXPECT_EQ(cut.count(rank), 0);  // after the last rank that made some
          } else {
            EXPECT_EQ(cut.count(rank), count);  // none made any: rank 0 holds the left-out nodes' all
          }
        } else {
          EXPECT_EQ(holding, (count + min_per_rank - 1) / min_per_rank);  // none for no aggregates
          EXPECT_EQ(cut.count(rank) > 0, rank < holding);
          const std::int64_t blocks = (count + kAggregateBlock - 1) / kAggregateBlock;
          if (rank < holding) {
            EXPECT_LE(cut.count(rank), (blocks / holding + 1) * kAggregateBlock);  // evenly
          }
        }
      }
    }
  }
}

// The prolongator's rows on a rank name that rank's own aggregates: few of its entries are in ghost columns
// (rows along the rank boundary, smoothed across it), also where ranks make unequal numbers of aggregates. With
// the coarse level cut as it was before 2026-12-01, evenly in blocks of 8192 rows, rank 0 owned 16,384 of level
// 1's 17,636 aggregates on 2 ranks, so most of rank 1's rows of P named columns on rank 0.
TEST(DistributedSetup, AProlongatorsColumnsLieMostlyOnItsRowsRank) {
  const MpiBackend mpi;
  const auto ghost_share_of_P = [&mpi](const CsrMatrix<double>& matrix) {
    const Hierarchy<MpiBackend, double> amg(mpi, mpi.csr(std::make_shared<const CsrMatrix<double>>(matrix)), AmgParams{});
    EXPECT_GE(amg.levels(), 2u);
    const DistributedMatrix<double>& P = amg.prolongator(0);
    const auto own = static_cast<Index>(P.local().cols - static_cast<Index>(P.ghost_columns().size()));
    Offset in_ghosts = 0;
    for (Index c : P.local().col) in_ghosts += c >= own ? 1 : 0;
    return P.local().nnz() > 0 ? double(in_ghosts) / double(P.local().nnz()) : 0.0;
  };
  EXPECT_LT(ghost_share_of_P(poisson(Stencil::p7, {40, 40, 120})), 0.2);
  // The first rows make fewer aggregates a row (3D) than the last (2D): an even cut of the aggregates, in
  // blocks of 64, put up to 0.28 of a rank's entries in ghost columns on 3 ranks, 0.71 on 8 (this cut: 0.14).
  EXPECT_LT(ghost_share_of_P(direct_sum(poisson(Stencil::p7, {40, 40, 24}), poisson(Stencil::p5, {160, 240}))), 0.2);
}

TEST(DistributedSetup, EveryDistributedProductBuildsTheSameHierarchy) {
  const CsrMatrix<double> A = poisson(Stencil::p7, {28, 26, 24});
  AmgParams p;
  for (const char* spgemm : {"rowwise", "magnus", "hash"}) {  // each row's terms in one process's order
    p.spgemm = spgemm;
    expect_same_hierarchy<double>(A, p, spgemm);
  }
  for (const char* spgemm : {"summa2d", "split3d"}) {  // the layers' partial sums added at the end
    p.spgemm = spgemm;
    expect_same_hierarchy<double>(A, p, spgemm, 1e-12);
  }
}

// A system (amg.block_size, near-nullspace vectors: amg/system_setup.hpp) on the ranks' nodes: the finest
// level's in whole blocks of kReductionBlock nodes, the coarse levels' as their aggregates fall to the ranks.
// Level 1 is spread over the ranks in blocks of kAggregateBlock aggregates (evenly on the first ranks where
// it has fewer than kCoarseRowsPerRank rows a rank, each aggregate up to as many rows as there are
// near-nullspace vectors; else on the ranks that made them): returns how many blocks it has.
template <class V>
std::int64_t expect_same_system_hierarchy(const CsrMatrix<double>& A_double, const AmgParams& params,
                                          const std::string& what) {
  SCOPED_TRACE(what);
  const auto A = std::make_shared<const CsrMatrix<V>>(cast_values<V>(A_double));
  const AmgHierarchy<V> alone(A, params);
  MpiBackend mpi;
  mpi.set_finest_unit(node_partition_unit(params.block_size));
  const Hierarchy<MpiBackend, V> together(mpi, mpi.csr(A), params);
  expect_same_levels(mpi, together, alone);
  for (std::size_t l = 0; l < alone.levels(); ++l) {
    EXPECT_EQ(together.info()[l].smoother, alone.info()[l].smoother) << l;
    EXPECT_EQ(together.info()[l].smoother_block_values, alone.info()[l].smoother_block_values) << l;
  }
  if (alone.levels() < 2) return 0;
  const std::int64_t aggregates = alone.info()[0].aggregates;
  const int vectors = params.near_nullspace.count > 0 ? params.near_nullspace.count : params.block_size;
  const std::int64_t per_rank = std::max<std::int64_t>(kAggregateBlock, (kCoarseRowsPerRank + vectors - 1) / vectors);
  const std::int64_t spread = (aggregates + per_rank - 1) / per_rank;
  const std::int64_t holding_finest = mpi.comm().sum(together.matrix(0).rows > 0 ? 1 : 0);
  EXPECT_EQ(mpi.comm().sum(together.matrix(1).rows > 0 ? 1 : 0),
            spread < mpi.comm().size() ? spread : holding_finest);
  return (aggregates + kAggregateBlock - 1) / kAggregateBlock;
}

// The 2D cantilever (30,300 nodes: fifteen blocks of 2048 on the finest level, about 3,000 aggregates: about
// 47 blocks of 64 on level 1) and the 5-point Laplacian set up as a system (likewise); aggregates that span
// ranks, QR'd where they are owned; the node blocks' smoothing and the pointwise one, Chebyshev and Jacobi,
// Lanczos and Gershgorin, the near-nullspace relaxed and not; in double and float.
TEST(DistributedSetup, BuildsTheSingleProcessHierarchyOfASystem) {
  Cantilever beam = cantilever({300, 100});
  EXPECT_GE(expect_same_system_hierarchy<double>(beam.A, beam.params, "2D cantilever 300 x 100"), 2);
  beam.params.smoother.type = SmootherType::jacobi;
  beam.params.smoother.diagonal = SmootherDiagonal::point;
  beam.params.improve_near_nullspace = 0;
  expect_same_system_hierarchy<float>(beam.A, beam.params, "2D cantilever, float, pointwise Jacobi, not relaxed");
  const Cantilever solid = cantilever({20, 8, 8});
  expect_same_system_hierarchy<double>(solid.A, solid.params, "3D cantilever 20 x 8 x 8");
  AmgParams scalar;
  scalar.block_size = 1;
  scalar.near_nullspace = {1, std::make_shared<const Vector<double>>(160 * 160, 1.0)};
  scalar.nullspace = NullspaceChoice::none;
  scalar.spectral_radius = SpectralRadius::gershgorin;
  EXPECT_GE(expect_same_system_hierarchy<double>(poisson(Stencil::p5, {160, 160}), scalar,
                                                 "5-point 160^2 as a system, Gershgorin"),
            2);
}

TEST(DistributedSetup, BuildsTheSingleProcessHierarchyOfARealMatrix) {
  const std::string path = test::shared_matrix("bcsstk18");
  if (path.empty()) GTEST_SKIP() << "bcsstk18 not found: " << test::no_shared_matrices();
  AmgParams p;
  p.coarse_size = 200;
  expect_same_hierarchy<double>(read_matrix_market(path), p, "bcsstk18");
}

// A matrix that is not positive definite is found on the rank that holds the bad row and reported alike
// on every rank (no rank left waiting).
TEST(DistributedSetup, ANonPositiveDiagonalIsTheSameErrorOnEveryRank) {
  CsrMatrix<double> A = poisson(Stencil::p5, {200, 200});
  for (Offset k = A.row_begin(30000); k < A.row_end(30000); ++k)
    if (A.col[k] == 30000) A.val[k] = -1.0;
  const MpiBackend mpi;
  try {
    const Hierarchy<MpiBackend, double> amg(mpi, mpi.csr(std::make_shared<const CsrMatrix<double>>(A)), AmgParams{});
    ADD_FAILURE() << "no error";
  } catch (const NumericalError& e) {
    EXPECT_NE(std::string(e.what()).find("diagonal entry 30001 is -1"), std::string::npos) << e.what();
  }
}

// The setup's products on row-distributed operands (MpiBackend::multiply) and its transpose, gathered,
// against one process: every kind of backend, rectangular random matrices over several ranks with empty
// rows, a block-diagonal one (few remote columns) and one that rank 0 holds alone.
TEST_F(Distributed, TheSetupsProductsAndTransposeEqualTheSingleProcessOnes) {
  struct Operands {
    std::string name;
    CsrMatrix<double> A, B;
  };
  const std::vector<Operands> cases = {
      {"random 40000 x 30000 x 45000", random_rows(40000, 30000, 6, 3), random_rows(30000, 45000, 4, 9)},
      {"block diagonal 40000", block_diagonal(40000), block_diagonal(40000)},
      {"2000 x 2000 x 1500: rank 0 alone", random_rows(2000, 2000, 5, 1), random_rows(2000, 1500, 3, 2)},
      {"40000 x 200000 x 3000: few ghosts spread wide", far_columns(40000, 200000), random_rows(200000, 3000, 2, 5)}};
  const SpgemmRegistry& registry = SpgemmRegistry::instance();
  for (const Operands& c : cases) {
    SCOPED_TRACE(c.name);
    const auto A = mpi.csr(std::make_shared<const CsrMatrix<double>>(c.A));
    const auto B = mpi.csr(std::make_shared<const CsrMatrix<double>>(c.B));
    expect_same_matrix(*mpi.host_view(mpi.transpose(*A)), transpose(c.A), "transpose");
    const CsrMatrix<double> reference = registry.get("gustavson").multiply(c.A, c.B);
    for (const std::string backend : {"gustavson", "magnus", "rowwise", "summa2d", "split3d"}) {
      SpgemmStats stats;
      const auto C = mpi.multiply(registry.get(backend), *A, *B, &stats);
      const bool grid = backend == "summa2d" || backend == "split3d";  // the layers' sums added at the end
      expect_same_matrix(*mpi.host_view(C), reference, backend, grid ? 1e-12 : 0.0);
      EXPECT_EQ(stats.nnz, reference.nnz()) << backend;
      EXPECT_FALSE(stats.phases.empty()) << backend;
    }
  }
}

// A partition of n into uneven ranges of whole nodes of `node` entries (rank r's ends near n (r / ranks)^2,
// on a node boundary) and, on 3 ranks or more, rank 1 without any: how a system's levels are cut.
BlockPartition uneven_partition(std::int64_t n, int ranks, std::int64_t node) {
  std::vector<std::int64_t> offsets(static_cast<std::size_t>(ranks) + 1, n);
  offsets[0] = 0;
  for (int r = 1; r < ranks; ++r) {
    const auto share = static_cast<std::int64_t>(static_cast<double>(n) * r * r / (static_cast<double>(ranks) * ranks));
    offsets[static_cast<std::size_t>(r)] = share / node * node;
  }
  if (ranks >= 3) offsets[2] = offsets[1];
  return BlockPartition::from_offsets(std::move(offsets));
}

// The same in any partitions (ranges ending between nodes, a rank without rows): what is derived from a
// matrix keeps its partitions (a product A's rows and B's columns, a transpose the two swapped), and the
// products, transpose and SpMV are the single-process ones.
TEST_F(Distributed, ProductsAndTransposeInAnyPartitionEqualTheSingleProcessOnes) {
  const CsrMatrix<double> A = random_rows(40000, 30000, 6, 3), B = random_rows(30000, 45000, 4, 9);
  const int ranks = mpi.comm().size(), rank = mpi.comm().rank();
  const BlockPartition rows = uneven_partition(A.rows, ranks, 3), inner = uneven_partition(A.cols, ranks, 6),
                       columns = uneven_partition(B.cols, ranks, 5);
  const DistributedMatrix<double> A_d(mpi.comm(), A, rows, inner), B_d(mpi.comm(), B, inner, columns);

  const DistributedMatrix<double> AT = mpi.transpose(A_d);
  EXPECT_EQ(AT.row_partition(), inner);
  EXPECT_EQ(AT.column_partition(), rows);
  expect_same_matrix(*mpi.host_view(AT), transpose(A), "transpose");

  const SpgemmRegistry& registry = SpgemmRegistry::instance();
  const CsrMatrix<double> reference = registry.get("gustavson").multiply(A, B);
  for (const std::string backend : {"gustavson", "magnus", "rowwise", "summa2d", "split3d"}) {
    const auto C = mpi.multiply(registry.get(backend), A_d, B_d, nullptr);
    EXPECT_EQ(C.row_partition(), rows) << backend;
    EXPECT_EQ(C.column_partition(), columns) << backend;
    const bool grid = backend == "summa2d" || backend == "split3d";  // the layers' sums added at the end
    expect_same_matrix(*mpi.host_view(C), reference, backend, grid ? 1e-12 : 0.0);
  }

  const Vector<double> x = seeded_vector(A.cols, 4);
  const Vector<double> x_local(x.begin() + inner.begin(rank), x.begin() + inner.end(rank));
  Vector<double> y_local, y, y_global;
  mpi.spmv(A_d, x_local, y_local);
  cpu.spmv(*cpu.matrix(std::make_shared<const CsrMatrix<double>>(A), SpmvFormat::csr), x, y);
  mpi.download(y_local, y_global);
  EXPECT_EQ(y_global, y) << "spmv";
}

// A product formed again on the patterns of a kept one (a re-setup's: the rowwise fetch plan and the
// product's layout kept, only B's values fetched) is the product of the new values formed from scratch,
// entry for entry, with the same ghosts, and multiplies a vector as that one does; so is one into the
// layout of a matrix held elsewhere (the plan alone kept). The operands of the test above: empty rows, few
// remote columns, one rank holding everything, few ghosts spread wide.
TEST_F(Distributed, AProductFormedAgainOnKeptPatternsIsTheProductFromScratch) {
  const auto new_values = [](CsrMatrix<double> M) {
    for (std::size_t k = 0; k < M.val.size(); ++k) M.val[k] *= 1.0 + 0.25 * std::sin(static_cast<double>(k));
    return M;
  };
  const std::vector<std::pair<CsrMatrix<double>, CsrMatrix<double>>> cases = {
      {random_rows(40000, 30000, 6, 3), random_rows(30000, 45000, 4, 9)},
      {block_diagonal(40000), block_diagonal(40000)},
      {random_rows(5000, 6000, 5, 1), random_rows(6000, 3000, 3, 2)},
      {far_columns(40000, 200000), random_rows(200000, 3000, 2, 5)}};
  const SpgemmBackend& gustavson = SpgemmRegistry::instance().get("gustavson");
  for (const auto& [A_whole, B_whole] : cases) {
    SCOPED_TRACE(std::to_string(A_whole.rows) + " x " + std::to_string(A_whole.cols) + " x " + std::to_string(B_whole.cols));
    const auto A = mpi.csr(std::make_shared<const CsrMatrix<double>>(A_whole));
    const auto B = mpi.csr(std::make_shared<const CsrMatrix<double>>(B_whole));
    auto C = std::make_shared<const DistributedMatrix<double>>(mpi.multiply(gustavson, *A, *B, nullptr));
    const RowwisePattern<double> kept = mpi.product_pattern(*A, *B, DistributedMatrix<double>(*C));
    const auto held = mpi.pattern_of(C, mpi.held_product_pattern(*A, *B, *C));

    const auto A_new = mpi.csr(std::make_shared<const CsrMatrix<double>>(new_values(A_whole)));
    const auto B_new = mpi.csr(std::make_shared<const CsrMatrix<double>>(new_values(B_whole)));
    const DistributedMatrix<double> fresh = mpi.multiply(gustavson, *A_new, *B_new, nullptr);
    const Vector<double> x = mpi.upload(seeded_vector(static_cast<Index>(B_whole.cols), 17));
    Vector<double> y_fresh, y;
    mpi.spmv(fresh, x, y_fresh);
    for (const RowwisePattern<double>* pattern : {&kept, held.get()}) {
      SpgemmStats stats;
      const DistributedMatrix<double> again = mpi.multiply_into(gustavson, *A_new, *B_new, *pattern, stats);
      expect_same_matrix(*mpi.host_view(again), *mpi.host_view(fresh), pattern == &kept ? "kept layout" : "held layout");
      EXPECT_EQ(again.ghost_columns(), fresh.ghost_columns());
      mpi.spmv(again, x, y);
      EXPECT_EQ(y, y_fresh);
      EXPECT_EQ(stats.choice.rfind(kNumericPhaseChoice, 0), 0u) << stats.choice;
      EXPECT_EQ(stats.nnz, mpi.global_nnz(fresh));
    }
  }
}

// A transpose formed again by a kept plan (a re-setup's: only the values moved, in the first transpose's
// order) is the transpose of the new values from scratch, with the same ghosts; the operands above.
TEST_F(Distributed, ATransposeFormedAgainByAKeptPlanIsTheTransposeFromScratch) {
  for (const CsrMatrix<double>& whole : {random_rows(40000, 30000, 6, 3), block_diagonal(40000),
                                         random_rows(5000, 6000, 5, 1), far_columns(40000, 200000)}) {
    SCOPED_TRACE(std::to_string(whole.rows) + " x " + std::to_string(whole.cols));
    const auto M = mpi.csr(std::make_shared<const CsrMatrix<double>>(whole));
    TransposePlan<double> plan;
    expect_same_matrix(*mpi.host_view(mpi.transpose_kept(*M, plan)), transpose(whole), "recorded");
    CsrMatrix<double> changed = whole;
    for (std::size_t k = 0; k < changed.val.size(); ++k) changed.val[k] = std::cos(static_cast<double>(k));
    const auto M_new = mpi.csr(std::make_shared<const CsrMatrix<double>>(changed));
    const DistributedMatrix<double> again = mpi.transpose(*M_new, plan);
    expect_same_matrix(*mpi.host_view(again), transpose(changed), "formed again");
    EXPECT_EQ(again.ghost_columns(), mpi.transpose(*M_new).ghost_columns());
  }
}

// Misuse that would leave ranks waiting for each other is refused on every rank before anything collective.
TEST(DistributedSolve, MisuseIsRefusedBeforeAnyCollective) {
  const auto A = std::make_shared<const CsrMatrix<double>>(poisson(Stencil::p5, {40, 40}));
  Parameters p;
  p.distribute = false;
  p.amg.spgemm = "rowwise";
  EXPECT_THROW(Solver(A, p), InputError);  // a collective SpGEMM in a solve each rank does alone
  if (running_on_several_ranks()) {
    p = {};
    p.amg.spgemm = "cusparse";  // a GPU product in the setup the ranks' cores run
    EXPECT_THROW(Solver(A, p), InputError);
    p.backend = BackendChoice::cuda;
    EXPECT_THROW(Solver(A, p), InputError);
    p = {};
    p.backend = BackendChoice::cuda;
    if (!gpu_status().usable()) {
      try {
        Solver(A, p);
        ADD_FAILURE() << "backend cuda without a GPU was accepted";
      } catch (const InputError& e) {  // every rank's, the same line
        EXPECT_NE(std::string(e.what()).find("needs a GPU"), std::string::npos) << e.what();
      }
    }
  }
  p = {};
  const Solver solver(A, p);
  Vector<double> x;
  EXPECT_THROW(solver.solve(Vector<double>(7, 1.0), x), InputError);
  EXPECT_TRUE(solver.solve(Vector<double>(static_cast<std::size_t>(A->rows), 1.0), x).converged);  // still usable
}

// A wrong right-hand side or limit on one rank only is an InputError on every rank (the others waited in the
// solve's first reduction, for ever), and so are limits the ranks disagree on; the solver stays usable.
TEST(DistributedSolve, ASolveInputWrongOnOneRankIsAnErrorOnEveryRank) {
  const auto A = std::make_shared<const CsrMatrix<double>>(poisson(Stencil::p5, {40, 40}));
  const Solver solver(A, Parameters{});
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const int last = ranks - 1;
  const Vector<double> b(static_cast<std::size_t>(A->rows), 1.0);
  Vector<double> x;
  const auto message_of = [&](const Vector<double>& rhs, const SolveLimits& limits) {
    try {
      (void)solver.solve(rhs, x, {}, limits);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string size = message_of(rank == last ? Vector<double>(7, 1.0) : b, {});
  EXPECT_NE(size.find("right-hand side has 7 entries"), std::string::npos) << size;
  if (last > 0) {  // every rank says which rank found it
    EXPECT_EQ(size.rfind("rank " + std::to_string(last) + ": ", 0), 0u) << size;
  }
  SolveLimits tolerance;
  tolerance.tolerance = rank == last ? 2.0 : 1e-8;
  EXPECT_NE(message_of(b, tolerance).find("tolerance must be > 0 and < 1"), std::string::npos);
  if (ranks > 1) {
    SolveLimits differing;
    differing.max_iterations = rank == last ? 50 : 60;
    EXPECT_NE(message_of(b, differing).find("different tolerances or iteration limits"), std::string::npos);
  }
  EXPECT_TRUE(solver.solve(b, x).converged);  // still usable, on every rank

  // By rows (a matrix of three blocks of rows, so that at most three ranks hold some): a rank's wrong count of
  // rows, or a NaN in one rank's rows (named by its global row), is every rank's error too; the scale of b
  // is the largest over all ranks' rows, so a b that one rank holds a large entry of solves as the whole does.
  const auto spread_A = std::make_shared<const CsrMatrix<double>>(poisson(Stencil::p5, {90, 60}));  // 5,400 rows
  const Solver spread(spread_A, Parameters{});
  const auto [first, end] = owned_rows(spread_A->rows);
  const Vector<double> mine(static_cast<std::size_t>(end - first), 1.0);
  const auto rows_message_of = [&](const Vector<double>& rhs) {
    try {
      (void)spread.solve_rows(rhs, x);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string short_rows = rows_message_of(rank == last ? Vector<double>(3, 1.0) : mine);
  EXPECT_NE(short_rows.find("right-hand side has 3 entries"), std::string::npos) << short_rows;
  const bool holds_last_row = end == spread_A->rows && first < end;
  Vector<double> with_nan = mine;
  if (holds_last_row) with_nan.back() = std::nan("");
  const std::string nan = rows_message_of(with_nan);
  EXPECT_NE(nan.find("entry " + std::to_string(spread_A->rows - 1) + " (counted from 0) is nan"), std::string::npos)
      << nan;
  Vector<double> scaled_whole(static_cast<std::size_t>(spread_A->rows), 1.0);
  scaled_whole.back() = 1e200;
  Vector<double> x_whole, x_rows;
  const SolveResult whole_result = spread.solve(scaled_whole, x_whole);
  Vector<double> scaled_rows = mine;
  if (holds_last_row) scaled_rows.back() = 1e200;
  EXPECT_EQ(spread.solve_rows(scaled_rows, x_rows).history, whole_result.history);
  // precondition_rows refuses alike: a rank's wrong count, a NaN in one rank's rows.
  Vector<double> z;
  EXPECT_THROW(spread.precondition_rows(rank == last ? Vector<double>(3, 1.0) : mine, z), InputError);
  EXPECT_THROW(spread.precondition_rows(with_nan, z), InputError);
  EXPECT_EQ(x_rows, Vector<double>(x_whole.begin() + first, x_whole.begin() + end));
}

// ---- distributed SpGEMM: every backend against gustavson on one process

template <class V>
void expect_same_product(const std::string& backend, const CsrMatrix<V>& A, const CsrMatrix<V>& B,
                         const std::string& what) {
  SCOPED_TRACE(backend + ": " + what);
  const SpgemmRegistry& registry = SpgemmRegistry::instance();
  SpgemmStats reference_stats, stats;
  const CsrMatrix<V> reference = registry.get("gustavson").multiply(A, B, &reference_stats);
  const CsrMatrix<V> C = registry.get(backend).multiply(A, B, &stats);
  ASSERT_EQ(C.rows, reference.rows);
  ASSERT_EQ(C.cols, reference.cols);
  EXPECT_EQ(C.row_ptr, reference.row_ptr);  // the same pattern, explicit zeros included
  ASSERT_EQ(C.col, reference.col);
  double largest = 0, difference = 0;
  for (std::size_t k = 0; k < C.val.size(); ++k) {
    largest = std::max(largest, std::abs(double(reference.val[k])));
    difference = std::max(difference, std::abs(double(C.val[k]) - double(reference.val[k])));
  }
  EXPECT_LE(difference, (std::is_same_v<V, float> ? 1e-5 : 1e-12) * largest);
  if (backend == "rowwise") {
    EXPECT_EQ(C.val, reference.val);  // the same products in the same order
  }
  EXPECT_EQ(stats.multiplications, reference_stats.multiplications);
  EXPECT_EQ(stats.nnz, reference.nnz());
  EXPECT_FALSE(stats.phases.empty());
  for (const SpgemmPhase& p : stats.phases) EXPECT_GE(p.seconds, 0.0) << p.name;
}

// The three products of each level of a hierarchy, and matrices that stress the distribution.
template <class V>
void expect_every_product(const std::string& backend) {
  const auto A = std::make_shared<const CsrMatrix<double>>(poisson(Stencil::p27, {18, 17, 16}));
  AmgParams params;
  params.coarse_size = 50;
  const AmgHierarchy<double> amg(A, params);
  for (std::size_t l = 0; l + 1 < amg.levels(); ++l) {
    const auto Af = cast_values<V>(amg.matrix(l));
    const auto P = cast_values<V>(amg.prolongator(l));
    const auto R = cast_values<V>(amg.restriction(l));
    const CsrMatrix<V> AP = SpgemmRegistry::instance().get("gustavson").multiply(Af, P);
    expect_same_product(backend, Af, P, "A P, level " + std::to_string(l));
    expect_same_product(backend, R, AP, "P^T (A P), level " + std::to_string(l));
    expect_same_product(backend, R, Af, "R^T A, level " + std::to_string(l));
  }
  expect_same_product(backend, cast_values<V>(random_rows(900, 700, 5, 3)), cast_values<V>(random_rows(700, 1100, 4, 4)),
                      "random 900 x 700 x 1100 with empty rows");
  expect_same_product(backend, cast_values<V>(random_rows(5, 7, 3, 5)), cast_values<V>(random_rows(7, 3, 2, 6)),
                      "5 x 7 x 3: ranks without rows");
  expect_same_product(backend, cast_values<V>(block_diagonal(3000)), cast_values<V>(block_diagonal(3000)),
                      "block diagonal: no remote columns where the blocks fit the ranks");
  expect_same_product(backend, CsrMatrix<V>(0, 4), CsrMatrix<V>(4, 6), "0 x 4 x 6");
}

TEST(DistributedSpgemm, EveryBackendEqualsGustavsonInDoubleAndFloat) {
  for (const std::string backend : {"rowwise", "summa2d", "split3d"}) {
    expect_every_product<double>(backend);
    expect_every_product<float>(backend);
  }
}

TEST(DistributedSpgemm, Split3dOnEveryLayerCount) {
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  for (int layers = 1; layers <= ranks; ++layers) {
    setenv("AMGSOLVE_SPLIT3D_LAYERS", std::to_string(layers).c_str(), 1);
    expect_every_product<double>("split3d");
  }
  unsetenv("AMGSOLVE_SPLIT3D_LAYERS");
}

TEST(DistributedSpgemm, TheGridAndItsIdleRanksAreStated) {
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  SpgemmStats stats;
  const CsrMatrix<double> A = poisson(Stencil::p5, {30, 30});
  SpgemmRegistry::instance().get("summa2d").multiply(A, A, &stats);
  const std::map<int, std::string> grid_of = {{1, "grid 1x1x1 on 1 rank"},
                                               {2, "grid 1x1x1 on 1 of 2 ranks"},
                                               {3, "grid 1x1x1 on 1 of 3 ranks"},
                                               {4, "grid 2x2x1 on 4 ranks"},
                                               {8, "grid 2x2x1 on 4 of 8 ranks"}};
  if (grid_of.count(ranks) == 0) GTEST_SKIP() << "no expected grid written down for " << ranks << " ranks";
  EXPECT_EQ(stats.choice, grid_of.at(ranks));
}

// The setup's products by rows say on how many ranks they ran: 7-point 36 x 34 x 32 is 39,168 rows, twenty
// reduction blocks, so level 0 lies on every rank up to 8; a coarse level on ceil(rows / kCoarseRowsPerRank)
// ranks at most.
TEST(DistributedSpgemm, TheRanksHoldingALevelsRowsAreStated) {
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const std::map<int, std::string> level0_of = {
      {1, "on 1 rank"}, {2, "on 2 ranks"}, {3, "on 3 ranks"}, {4, "on 4 ranks"}, {8, "on 8 ranks"}};
  if (level0_of.count(ranks) == 0) GTEST_SKIP() << "no expected text written down for " << ranks << " ranks";
  // A coarse level gathers onto ceil(rows / kCoarseRowsPerRank) ranks where that is fewer than all.
  const auto on_ranks_of = [ranks](Index rows) {
    const auto holding = std::min<std::int64_t>(ranks, (rows + kCoarseRowsPerRank - 1) / kCoarseRowsPerRank);
    if (holding == ranks) return ranks == 1 ? std::string("on 1 rank") : "on " + std::to_string(ranks) + " ranks";
    return "on " + std::to_string(holding) + " of " + std::to_string(ranks) + " ranks";
  };
  AmgParams p;
  p.coarse_size = 100;
  p.spgemm = "rowwise";
  const MpiBackend mpi;
  const auto A = std::make_shared<const CsrMatrix<double>>(poisson(Stencil::p7, {36, 34, 32}));
  const Hierarchy<MpiBackend, double> amg(mpi, mpi.csr(A), p);
  const std::vector<LevelInfo>& levels = amg.info();
  ASSERT_GE(levels.size(), 3u);
  ASSERT_GT(levels[1].rows, kCoarseRowsPerRank);  // level 1 on more than one rank, level 2 on one
  ASSERT_LT(levels[1].rows, 8 * kCoarseRowsPerRank);
  ASSERT_LE(levels[2].rows, kCoarseRowsPerRank);
  const auto ends_with = [](const std::string& text, const std::string& end) {
    return text.size() >= end.size() && text.compare(text.size() - end.size(), end.size(), end) == 0;
  };
  EXPECT_TRUE(ends_with(levels[0].ap_product.choice, "rows fetched, " + level0_of.at(ranks)))
      << levels[0].ap_product.choice;
  // P^T (A P) has the coarse level's rows; A P the level's own.
  for (std::size_t l = 0; l + 1 < levels.size(); ++l)
    EXPECT_TRUE(ends_with(levels[l].rap_product.choice, "rows fetched, " + on_ranks_of(levels[l + 1].rows)))
        << l << ": " << levels[l].rap_product.choice;
  for (std::size_t l = 1; l + 1 < levels.size(); ++l)
    EXPECT_TRUE(ends_with(levels[l].ap_product.choice, "rows fetched, " + on_ranks_of(levels[l].rows)))
        << l << ": " << levels[l].ap_product.choice;
}

TEST(DistributedSpgemm, ASetupWithADistributedBackendBuildsTheSameHierarchy) {
  const auto A = std::make_shared<const CsrMatrix<double>>(poisson(Stencil::p7, {24, 22, 20}));
  AmgParams params;
  const AmgHierarchy<double> reference(A, params);
  // rowwise sums each entry's terms in one process's order: the same bits; split3d adds the layers' partial
  // sums at the end: the same to rounding.
  for (const auto& [backend, tolerance] : {std::pair<std::string, double>{"rowwise", 0.0}, {"split3d", 1e-12}}) {
    params.spgemm = backend;
    const AmgHierarchy<double> amg(A, params);
    ASSERT_EQ(amg.levels(), reference.levels()) << backend;
    const auto expect_same = [&](const CsrMatrix<double>& M, const CsrMatrix<double>& R, const std::string& what) {
      ASSERT_EQ(M.row_ptr, R.row_ptr) << backend << ", " << what;
      ASSERT_EQ(M.col, R.col) << backend << ", " << what;
      double largest = 0;
      for (const double v : R.val) largest = std::max(largest, std::abs(v));
      for (std::size_t k = 0; k < R.val.size(); ++k)
        ASSERT_LE(std::abs(M.val[k] - R.val[k]), tolerance * largest) << backend << ", " << what << ", entry " << k;
    };
    for (std::size_t l = 0; l < amg.levels(); ++l) {
      expect_same(amg.matrix(l), reference.matrix(l), "level " + std::to_string(l));
      if (l + 1 < amg.levels())
        expect_same(amg.prolongator(l), reference.prolongator(l), "prolongator " + std::to_string(l));
    }
  }
}

// Reports failures from every rank (rank 0 prints as usual), and fails on every rank when one fails.
class RankFailurePrinter : public ::testing::EmptyTestEventListener {
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (result.failed())
      std::printf("[rank %d] %s:%d: %s\n", world_rank(), result.file_name() ? result.file_name() : "?",
                  result.line_number(), result.summary());
  }
};

}  // namespace
}  // namespace amgsolve

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  ::testing::InitGoogleTest(&argc, argv);
  amgsolve::register_distributed_spgemm_backends();
  if (amgsolve::world_rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new amgsolve::RankFailurePrinter);
  }
  int failed = RUN_ALL_TESTS();
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return failed;
}
