// The first setup phases on the GPU (amg/gpu_setup.hpp) against their CPU twins: strength of connection,
// MIS-2 and its aggregates, the tentative prolongator. The results must be identical, entry for entry and
// bit for bit (same seeded hash, same tie-breaking), so that a hierarchy built on the GPU equals the CPU's.
// Without a CUDA device every test first checks that the entry points throw amgsolve::Error naming the
// reason, then skips saying why.
#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "amg/filtered_matrix.hpp"
#include "amg/gpu_setup.hpp"
#include "amg/hierarchy.hpp"
#include "config/config.hpp"
#include "problems/problem.hpp"
#include "amg/mis2_aggregation.hpp"
#include "amg/nullspace.hpp"
#include "amg/params.hpp"
#include "amg/spectral_radius.hpp"
#include "amg/strength.hpp"
#include "amg/tentative_prolongation.hpp"
#include "common/device.hpp"
#include "common/error.hpp"
#include "common/hash.hpp"
#include "problems/poisson.hpp"
#include "sparse/csr_ops.hpp"
#include "sparse/spmv_format.hpp"
#include "test_support.hpp"
#ifdef AMGSOLVE_WITH_CUDA
#include "amg/cuda/device_setup.hpp"
#include "backend/cuda/cuda_backend.hpp"
#endif

namespace amgsolve {
namespace {

// ---- no device: every entry point refuses with an amgsolve::Error that carries gpu_status()'s reason

void expect_refusal(const std::string& reason, const std::string& what, const std::function<void()>& call) {
  try {
    call();
    ADD_FAILURE() << what << " ran without a usable GPU";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << what << ": '" << e.what() << "'";
  }
}

void expect_entry_points_refuse(const std::string& reason) {
  ASSERT_FALSE(reason.empty());
  PoissonParams p;
  p.size = {4, 3, 2};
  const CsrMatrix<double> A = poisson_matrix(p);
  const Strength strength = strength_of_connection(A, 0.02);
  const Aggregates aggregates = mis2_aggregation(strength.graph, 1);
  expect_refusal(reason, "gpu_strength_of_connection", [&] { gpu_strength_of_connection(A, 0.02); });
  expect_refusal(reason, "gpu_strength_of_connection<float>",
                 [&] { gpu_strength_of_connection(cast_values<float>(A), 0.02); });
  expect_refusal(reason, "gpu_mis2", [&] { gpu_mis2(strength.graph, 1); });
  expect_refusal(reason, "gpu_mis2_aggregation", [&] { gpu_mis2_aggregation(strength.graph, 1); });
  expect_refusal(reason, "gpu_tentative_prolongation", [&] { gpu_tentative_prolongation<double>(aggregates); });
  expect_refusal(reason, "gpu_tentative_prolongation<float>",
                 [&] { gpu_tentative_prolongation<float>(aggregates); });
}

#define AMGSOLVE_SKIP_WITHOUT_GPU()                                      \
  do {                                                                   \
    const GpuStatus status = gpu_status();                               \
    if (!status.usable()) {                                              \
      expect_entry_points_refuse(status.unavailable_reason);             \
      GTEST_SKIP() << "no GPU: " << status.unavailable_reason;           \
    }                                                                    \
  } while (0)

// ---- the problems

struct SetupCase {
  std::string name;
  CsrMatrix<double> A;
  double theta;
};

CsrMatrix<double> poisson(Stencil stencil, std::vector<std::int64_t> size, std::vector<double> anisotropy = {},
                          Coefficient coefficient = Coefficient::constant) {
  PoissonParams p;
  p.stencil = stencil;
  p.size = std::move(size);
  p.anisotropy = std::move(anisotropy);
  p.coefficient = coefficient;
  return poisson_matrix(p);
}

// Symmetric, strictly diagonally dominant with a positive diagonal (so SPD), off-diagonals of both signs
// and magnitudes spread over [0, 2): at theta = 0.25 some couplings are strong and some weak. The nodes in
// `isolated` have no off-diagonal entries.
CsrMatrix<double> random_spd(Index n, double density, std::uint64_t seed, const std::vector<Index>& isolated) {
  const CsrMatrix<double> R = test::random_sparse(n, n, density, seed, isolated, isolated);
  std::vector<Triplet<double>> t;
  std::vector<double> row_sum(static_cast<std::size_t>(n), 0.0);
  for (Index i = 0; i < n; ++i)
    for (Offset k = R.row_begin(i); k < R.row_end(i); ++k) {
      const Index j = R.col[k];
      if (j == i) continue;
      t.push_back({i, j, R.val[k]});
      t.push_back({j, i, R.val[k]});
      row_sum[i] += std::abs(R.val[k]);
      row_sum[j] += std::abs(R.val[k]);
    }
  for (Index i = 0; i < n; ++i) t.push_back({i, i, 0.1 + 1.01 * row_sum[i]});
  return csr_from_triplets(n, n, std::move(t));
}

// A symmetric chain with the special rows of a real matrix: row 3 empty (not even a diagonal), row 10
// diagonal only, explicit zero couplings around 20, a zero diagonal in row 30 (its nonzero coupling is
// strong, its explicit zero one weak), tiny (weak) couplings around 40, and a detached pair 45-46.
CsrMatrix<double> chain_with_isolated_nodes() {
  const Index n = 50;
  std::vector<Triplet<double>> t;
  auto couple = [&t](Index i, Index j, double a) {
    t.push_back({i, j, a});
    t.push_back({j, i, a});
  };
  for (Index i = 0; i < n; ++i)
    if (i != 3 && i != 30) t.push_back({i, i, 2.0});
  t.push_back({30, 30, 0.0});
  for (Index i = 0; i + 1 < n; ++i) {
    if (i == 2 || i == 3 || i == 9 || i == 10 || (i >= 44 && i <= 46)) continue;  // 3, 10, 45-46 detached
    if (i == 19 || i == 20 || i == 30)
      couple(i, i + 1, 0.0);
    else if (i == 39 || i == 40)
      couple(i, i + 1, -1e-5);
    else
      couple(i, i + 1, -1.0);
  }
  couple(45, 46, -1.0);
  return csr_from_triplets(n, n, std::move(t));
}

std::vector<SetupCase> setup_cases() {
  const double theta = AmgParams{}.strength_threshold;
  std::vector<SetupCase> cases;
  cases.push_back({"7pt 14x13x12", poisson(Stencil::p7, {14, 13, 12}), theta});
  cases.push_back({"7pt 40x36x33", poisson(Stencil::p7, {40, 36, 33}), theta});  // many blocks and rounds
  cases.push_back({"5pt 61x47", poisson(Stencil::p5, {61, 47}), theta});
  cases.push_back({"27pt 9x8x7", poisson(Stencil::p27, {9, 8, 7}), theta});
  cases.push_back({"5pt anisotropic 1e-3", poisson(Stencil::p5, {40, 40}, {1.0, 1e-3}), theta});
  cases.push_back({"7pt anisotropic 1e-3 in x", poisson(Stencil::p7, {20, 19, 18}, {1e-3, 1.0, 1.0}), theta});
  cases.push_back({"7pt checkerboard", poisson(Stencil::p7, {16, 16, 16}, {}, Coefficient::checkerboard), theta});
  cases.push_back({"random SPD 2000", random_spd(2000, 0.003, 11, {5, 17, 1999}), 0.25});
  cases.push_back({"random SPD 600 dense", random_spd(600, 0.02, 12, {0, 300}), 0.1});
  cases.push_back({"chain with isolated nodes", chain_with_isolated_nodes(), theta});
  cases.push_back({"diagonal 5x5", csr_from_triplets<double>(5, 5, {{0, 0, 1.0}, {2, 2, 3.0}, {4, 4, 2.0}}), theta});
  cases.push_back({"1x1", csr_from_triplets<double>(1, 1, {{0, 0, 4.0}}), theta});
  cases.push_back({"0x0", CsrMatrix<double>(0, 0), theta});
  return cases;
}

// The seed of level 0 and 1 in a hierarchy (amg/hierarchy.cpp) and a few plain ones.
std::vector<std::uint64_t> seeds() {
  const std::uint64_t s = AmgParams{}.seed;
  return {seeded_hash(s, 0), seeded_hash(s, 1), 0, 42, ~std::uint64_t(0)};
}

// ---- comparisons: exact equality everywhere

void expect_same_strength(const Strength& gpu, const Strength& cpu) {
  EXPECT_EQ(gpu.graph.nodes, cpu.graph.nodes);
  EXPECT_EQ(gpu.graph.row_ptr, cpu.graph.row_ptr);
  EXPECT_EQ(gpu.graph.adj, cpu.graph.adj);
  EXPECT_EQ(gpu.keep, cpu.keep);
  EXPECT_EQ(gpu.weak_entries, cpu.weak_entries);
}

void expect_same_aggregates(const Aggregates& gpu, const Aggregates& cpu) {
  EXPECT_EQ(gpu.count, cpu.count);
  EXPECT_EQ(gpu.mis2_roots, cpu.mis2_roots);
  EXPECT_EQ(gpu.id, cpu.id);
  EXPECT_EQ(gpu.root, cpu.root);
}

// Same shape, pattern and values; values compared with ==, i.e. bit for bit (none is NaN).
template <class Value>
void expect_same_matrix(const CsrMatrix<Value>& gpu, const CsrMatrix<Value>& cpu) {
  EXPECT_EQ(gpu.rows, cpu.rows);
  EXPECT_EQ(gpu.cols, cpu.cols);
  EXPECT_EQ(gpu.row_ptr, cpu.row_ptr);
  EXPECT_EQ(gpu.col, cpu.col);
  EXPECT_EQ(gpu.val, cpu.val);
}

// ---- the tests

TEST(GpuSetup, StrengthOfConnectionEqualsTheCpusInDoubleAndFloat) {
  AMGSOLVE_SKIP_WITHOUT_GPU();
  for (const SetupCase& c : setup_cases()) {
    SCOPED_TRACE(c.name);
    expect_same_strength(gpu_strength_of_connection(c.A, c.theta), strength_of_connection(c.A, c.theta));
    const CsrMatrix<float> A_float = cast_values<float>(c.A);
    expect_same_strength(gpu_strength_of_connection(A_float, c.theta), strength_of_connection(A_float, c.theta));
  }
  // Entries whose squares overflow or underflow: each row is scaled by a power of two on both (in double).
  const CsrMatrix<double> checkerboard = poisson(Stencil::p7, {16, 16, 16}, {}, Coefficient::checkerboard);
  for (int exponent : {-900, 600, 1000}) {
    SCOPED_TRACE(exponent);
    CsrMatrix<double> scaled = checkerboard;
    for (double& v : scaled.val) v = std::ldexp(v, exponent);
    const double theta = AmgParams{}.strength_threshold;
    expect_same_strength(gpu_strength_of_connection(scaled, theta), strength_of_connection(scaled, theta));
    expect_same_strength(strength_of_connection(scaled, theta), strength_of_connection(checkerboard, theta));
  }
}

// The anisotropic cases do exercise weak connections: all y couplings (1e-3) are weak, all x couplings strong.
TEST(GpuSetup, AnisotropicPoissonDropsTheWeakDirection) {
  AMGSOLVE_SKIP_WITHOUT_GPU();
  const CsrMatrix<double> A = poisson(Stencil::p5, {30, 30}, {1.0, 1e-3});
  const Strength gpu = gpu_strength_of_connection(A, 0.02);
  EXPECT_EQ(gpu.weak_entries, 2 * 30 * 29);
  EXPECT_EQ(gpu.graph.row_ptr.back(), 2 * 30 * 29);
  expect_same_strength(gpu, strength_of_connection(A, 0.02));
}

TEST(GpuSetup, Mis2EqualsTheCpusSetInTheSameNumberOfRounds) {
  AMGSOLVE_SKIP_WITHOUT_GPU();
  for (const SetupCase& c : setup_cases()) {
    const StrengthGraph g = strength_of_connection(c.A, c.theta).graph;
    for (std::uint64_t seed : seeds()) {
      SCOPED_TRACE(c.name + ", seed " + std::to_string(seed));
      int cpu_rounds = -1, gpu_rounds = -2;
      const Array<std::uint8_t> cpu = mis2(g, seed, &cpu_rounds);
      const Array<std::uint8_t> gpu = gpu_mis2(g, seed, &gpu_rounds);
      EXPECT_EQ(gpu, cpu);
      EXPECT_EQ(gpu_rounds, cpu_rounds);
    }
  }
}

TEST(GpuSetup, AggregatesEqualTheCpusBitForBit) {
  AMGSOLVE_SKIP_WITHOUT_GPU();
  for (const SetupCase& c : setup_cases()) {
    const StrengthGraph g = strength_of_connection(c.A, c.theta).graph;
    for (std::uint64_t seed : seeds()) {
      SCOPED_TRACE(c.name + ", seed " + std::to_string(seed));
      expect_same_aggregates(gpu_mis2_aggregation(g, seed), mis2_aggregation(g, seed));
    }
  }
}

TEST(GpuSetup, TentativeProlongatorEqualsTheCpusInDoubleAndFloat) {
  AMGSOLVE_SKIP_WITHOUT_GPU();
  for (const SetupCase& c : setup_cases()) {
    SCOPED_TRACE(c.name);
    const Aggregates agg = mis2_aggregation(strength_of_connection(c.A, c.theta).graph, 3);
    expect_same_matrix(gpu_tentative_prolongation<double>(agg), tentative_prolongation<double>(agg));
    expect_same_matrix(gpu_tentative_prolongation<float>(agg), tentative_prolongation<float>(agg));
  }
}

// The phases chained as the hierarchy chains them (amg/hierarchy.cpp), every step on the GPU's output.
TEST(GpuSetup, TheChainedPhasesGiveTheCpusTentativeProlongator) {
  AMGSOLVE_SKIP_WITHOUT_GPU();
  const std::uint64_t level_seed = seeded_hash(AmgParams{}.seed, 0);
  for (const SetupCase& c : setup_cases()) {
    SCOPED_TRACE(c.name);
    const Aggregates cpu = mis2_aggregation(strength_of_connection(c.A, c.theta).graph, level_seed);
    const Aggregates gpu = gpu_mis2_aggregation(gpu_strength_of_connection(c.A, c.theta).graph, level_seed);
    expect_same_aggregates(gpu, cpu);
    expect_same_matrix(gpu_tentative_prolongation<double>(gpu), tentative_prolongation<double>(cpu));
  }
}

// Non-symmetric strength graphs (from non-symmetric matrices): a node may neighbour several roots, and the
// aggregation must pick the first in adjacency order as the CPU does. (Both also share the error for nodes
// left unassigned, which cannot happen here: every OUT node has a root within two out-edges.)
TEST(GpuSetup, NonSymmetricGraphsGiveTheCpusAggregates) {
  AMGSOLVE_SKIP_WITHOUT_GPU();
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const CsrMatrix<double> A = test::random_sparse(300, 300, 0.004 * static_cast<double>(1 + seed % 4), seed);
    const StrengthGraph g = strength_of_connection(A, 0.1).graph;
    EXPECT_EQ(gpu_mis2(g, seed), mis2(g, seed));
    expect_same_aggregates(gpu_mis2_aggregation(g, seed), mis2_aggregation(g, seed));
  }
}

TEST(GpuSetup, MalformedInputsAreRefusedBeforeTheDeviceSeesThem) {
  AMGSOLVE_SKIP_WITHOUT_GPU();
  EXPECT_THROW(gpu_strength_of_connection(test::random_sparse(4, 5, 0.5, 1), 0.02), InputError);
  Aggregates bad;
  bad.count = 2;
  bad.id = {0, 1, 2, kNotAggregated};
  EXPECT_THROW(gpu_tentative_prolongation<double>(bad), InputError);
  StrengthGraph broken;
  broken.nodes = 2;
  broken.row_ptr = {0, 1, 2};
  broken.adj = {1, 7};
  EXPECT_THROW(gpu_mis2(broken, 1), InputError);
  EXPECT_THROW(gpu_mis2_aggregation(broken, 1), InputError);
}

// ---- backend cuda: the whole setup on the device

#ifdef AMGSOLVE_WITH_CUDA
// Every level's matrix and prolongator, copied back from the device, equal to the cpu backend's: the same
// pattern, values to `tolerance` (other summation orders in the SpGEMMs and in Lanczos' sums); the same
// finest aggregates.
template <class Value>
void expect_same_hierarchy(const CudaBackend& cuda, const Hierarchy<CudaBackend, Value>& gpu,
                           const AmgHierarchy<Value>& cpu, double tolerance) {
  ASSERT_EQ(gpu.levels(), cpu.levels());
  for (std::size_t l = 0; l < cpu.levels(); ++l) {
    SCOPED_TRACE("level " + std::to_string(l));
    const bool coarsest = l + 1 == cpu.levels();
    const auto A = cuda.host_view(gpu.matrix(l));
    std::vector<std::pair<const CsrMatrix<Value>*, const CsrMatrix<Value>*>> pairs = {{A.get(), &cpu.matrix(l)}};
    std::shared_ptr<const CsrMatrix<Value>> P;
    if (!coarsest) {
      P = cuda.host_view(gpu.prolongator(l));
      pairs.emplace_back(P.get(), &cpu.prolongator(l));
      EXPECT_EQ(gpu.smoother(l).type, cpu.smoother(l).type);
      EXPECT_NEAR(gpu.smoother(l).upper, cpu.smoother(l).upper, 1e-9 * cpu.smoother(l).upper);
    }
    for (const auto& [a, b] : pairs) {
      ASSERT_EQ(a->row_ptr, b->row_ptr);
      ASSERT_EQ(a->col, b->col);
      // Relative to the matrix's largest entry: Galerkin entries that cancel to ~1e-17 differ absolutely.
      double largest = 0;
      for (const Value v : b->val) largest = std::max(largest, std::abs(double(v)));
      for (std::size_t k = 0; k < b->val.size(); ++k)
        ASSERT_LE(std::abs(double(a->val[k]) - double(b->val[k])), tolerance * largest) << "entry " << k;
    }
  }
  EXPECT_EQ(gpu.finest_aggregates(), cpu.finest_aggregates());
}
#endif

TEST(GpuSetup, CudaBackendBuildsTheCpuHierarchyOfPoissonSmall) {
#ifndef AMGSOLVE_WITH_CUDA
  GTEST_SKIP() << "built without CUDA";
#else
  const Config config = load_config(test::source_dir() + "/configs/poisson-small.yaml");
  const auto A = make_problem(config.problem).A;
  const GpuStatus status = gpu_status();
  if (!status.usable()) {
    EXPECT_THROW(CudaBackend(), Error) << "the cuda backend without a device must say why";
    GTEST_SKIP() << "no GPU: " << status.unavailable_reason;
  }
  const CudaBackend cuda;
  const AmgHierarchy<double> cpu(A, config.amg);
  AmgParams on_gpu = config.amg;
  for (const char* backend : {"cusparse", "esc", "rmerge", "bhsparse"}) {
    SCOPED_TRACE(backend);
    on_gpu.spgemm = backend;
    const auto A_on_device = cuda.csr(A);
    const TransferCounts input = cuda.transfers();
    const Hierarchy<CudaBackend, double> gpu(cuda, A_on_device, on_gpu);
    const TransferCounts setup = cuda.transfers();
    // The setup stays on the device: nothing goes up after the input, and down only the finest aggregates
    // (for the output), the coarsest level (factorised on the host) and O(levels) messages of a few numbers:
    // per level the diagonal check, Gershgorin, the filtered nnz, the products' sizes, the smoothed
    // prolongator's check, the formats' model (7 reads) and up to two Lanczos estimates of 1 + 2
    // lanczos_steps reads each.
    EXPECT_EQ(setup.to_device, input.to_device);
    const std::uint64_t per_level = 17 + 2 * (1 + 2 * static_cast<std::uint64_t>(on_gpu.lanczos_steps));
    const std::uint64_t expected_down = sizeof(Index) * static_cast<std::uint64_t>(A->rows) +
                                        gpu.coarsest_on_host()->bytes() + 8 * per_level * gpu.levels();
    EXPECT_LE(setup.to_host - input.to_host, expected_down);
    EXPECT_LE(setup.messages - input.messages, per_level * gpu.levels());
    expect_same_hierarchy(cuda, gpu, cpu, 1e-12);
  }
#endif
}

// A singular (Neumann) matrix with a threshold that leaves nodes without strong couplings on the coarse
// levels: the left-out nodes as aggregates of their own, the weak entries lumped along B, the weights
// carried: the same hierarchy as the CPU's and the same coarsest nullspace.
TEST(GpuSetup, CudaBackendBuildsTheCpuHierarchyOfASingularMatrix) {
#ifndef AMGSOLVE_WITH_CUDA
  GTEST_SKIP() << "built without CUDA";
#else
  const GpuStatus status = gpu_status();
  if (!status.usable()) GTEST_SKIP() << "no GPU: " << status.unavailable_reason;
  PoissonParams p;
  p.size = {24, 22, 20};
  p.boundary = Boundary::neumann;
  const auto A = std::make_shared<const CsrMatrix<double>>(poisson_matrix(p));
  AmgParams params;
  params.coarse_size = 40;
  params.strength_threshold = 0.1;
  const AmgHierarchy<double> cpu(A, params);
  ASSERT_TRUE(cpu.singular());
  const CudaBackend cuda;
  params.spgemm = "cusparse";
  const Hierarchy<CudaBackend, double> gpu(cuda, cuda.csr(A), params);
  EXPECT_TRUE(gpu.singular());
  expect_same_hierarchy(cuda, gpu, cpu, 1e-12);
  EXPECT_EQ(gpu.coarse_nullspace(), cpu.coarse_nullspace());  // integer weights: exact on both
#endif
}

// The device's filtered matrix (weak entries lumped into the diagonal along the weights, a node without strong
// couplings as IsolatedRows says), transpose and SpMV format costs each on their own against the CPU's, on
// every setup case: a row that differs shows here, not as another pattern several levels down. With them,
// the diagonal's check and the re-setup's pattern comparison.
TEST(GpuSetup, FilteredMatrixTransposeFormatCostsAndChecksEqualTheCpus) {
#ifndef AMGSOLVE_WITH_CUDA
  GTEST_SKIP() << "built without CUDA";
#else
  AMGSOLVE_SKIP_WITHOUT_GPU();
  const CudaBackend cuda;
  const auto numerical_error_of = [](const std::function<void()>& check) {  // its message, "" for none
    try {
      check();
    } catch (const NumericalError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const auto expect_same_costs = [](const std::vector<FormatCost>& gpu, const std::vector<FormatCost>& cpu) {
    ASSERT_EQ(gpu.size(), cpu.size());
    for (std::size_t f = 0; f < cpu.size(); ++f) {
      EXPECT_EQ(gpu[f].format, cpu[f].format);
      EXPECT_EQ(gpu[f].bytes, cpu[f].bytes) << format_name(cpu[f].format);
      EXPECT_EQ(gpu[f].bytes_moved, cpu[f].bytes_moved) << format_name(cpu[f].format);
      EXPECT_DOUBLE_EQ(gpu[f].overhead, cpu[f].overhead) << format_name(cpu[f].format);
    }
  };
  for (const SetupCase& c : setup_cases()) {
    SCOPED_TRACE(c.name);
    const auto A = std::make_shared<const CsrMatrix<double>>(c.A);
    const auto on_device = cuda.csr(A);
    const Strength strength = strength_of_connection(*A, c.theta);
    const CudaStrength device_strength = strength_of_connection(cuda, *on_device, c.theta);
    Vector<double> weights(static_cast<std::size_t>(A->rows));
    for (Index i = 0; i < A->rows; ++i) weights[i] = 1.0 + static_cast<double>(seeded_hash(3, i) % 7);
    for (const bool weighted : {false, true})
      for (const IsolatedRows isolated : {IsolatedRows::keep_weak, IsolatedRows::diagonal_alone}) {
        SCOPED_TRACE(std::string(weighted ? "weights" : "finest level") +
                     (isolated == IsolatedRows::keep_weak ? ", isolated rows keep their weak entries" : ""));
        const Vector<double> w = weighted ? weights : Vector<double>{};
        const CsrMatrix<double> cpu = filtered_matrix(*A, strength, w, nullptr, isolated);
        const DeviceCsrMatrix<double> gpu = filtered_matrix(cuda, *on_device, device_strength, cuda.upload(w), isolated);
        expect_same_matrix(*cuda.host_view(gpu), cpu);
      }
    expect_same_matrix(*cuda.host_view(cuda.transpose(*on_device)), transpose(*A));
    expect_same_costs(cuda.format_costs(*on_device), spmv_format_costs(*A));
    // The diagonal's check (the chain's row 4 has none, so 0), with the CPU's message.
    EXPECT_EQ(numerical_error_of([&] { cuda.require_positive_diagonal(*on_device, 2); }),
              numerical_error_of([&] { CpuBackend{}.require_positive_diagonal(*A, 2); }));
  }
  // A negative diagonal entry amid positive ones; a pattern with one column moved.
  CsrMatrix<double> negative = poisson(Stencil::p5, {20, 15});
  for (Offset k = negative.row_begin(123); k < negative.row_end(123); ++k)
    if (negative.col[k] == 123) negative.val[k] = -4.0;
  const auto negative_on_device = cuda.csr(std::make_shared<const CsrMatrix<double>>(negative));
  const std::string message = numerical_error_of([&] { cuda.require_positive_diagonal(*negative_on_device, 0); });
  EXPECT_EQ(message, numerical_error_of([&] { CpuBackend{}.require_positive_diagonal(negative, 0); }));
  EXPECT_NE(message.find("diagonal entry 124 is -4"), std::string::npos) << message;
  CsrMatrix<double> moved = negative;
  moved.col[moved.row_begin(7)] += moved.col[moved.row_begin(7)] > 0 ? -1 : 1;  // a column no longer the pattern's
  EXPECT_TRUE(cuda.same_pattern(*negative_on_device, *cuda.csr(std::make_shared<const CsrMatrix<double>>(negative))));
  EXPECT_FALSE(cuda.same_pattern(*negative_on_device, *cuda.csr(std::make_shared<const CsrMatrix<double>>(moved))));
  // A rectangular matrix (a prolongator's shape) with empty rows and columns.
  const auto R = std::make_shared<const CsrMatrix<double>>(test::random_sparse(300, 170, 0.02, 5, {0, 17, 299}, {3, 169}));
  const auto R_on_device = cuda.csr(R);
  expect_same_matrix(*cuda.host_view(cuda.transpose(*R_on_device)), transpose(*R));
  expect_same_costs(cuda.format_costs(*R_on_device), spmv_format_costs(*R));
#endif
}

// The row sums of amg.nullspace: auto and Gershgorin's bound sum each row on its own scale on the device
// too: for matrices of 1.5e308 and 1e-300 (Dirichlet and Neumann) and of 2^1021 and 2^-1000, the CPU's row,
// relative sum, nullspace and bound, bit for bit.
TEST(GpuSetup, RowSumsAndGershgorinBoundEqualTheCpusNearDoublesLimits) {
#ifndef AMGSOLVE_WITH_CUDA
  GTEST_SKIP() << "built without CUDA";
#else
  AMGSOLVE_SKIP_WITHOUT_GPU();
  const CudaBackend cuda;
  for (const double scale : {1.0, 1.5e308, 1e-300})
    for (const Boundary boundary : {Boundary::dirichlet, Boundary::neumann}) {
      SCOPED_TRACE(std::to_string(scale) + (boundary == Boundary::neumann ? " neumann" : " dirichlet"));
      PoissonParams p;
      p.stencil = Stencil::p5;
      p.size = {12, 9};
      p.boundary = boundary;
      CsrMatrix<double> A = poisson_matrix(p);
      for (double& v : A.val) v *= scale / 4;  // the diagonal of 4 at scale
      const auto on_device = cuda.csr(std::make_shared<const CsrMatrix<double>>(A));
      const RowSum cpu = largest_relative_row_sum(A), gpu = largest_relative_row_sum(cuda, *on_device);
      EXPECT_EQ(gpu.row, cpu.row);
      EXPECT_EQ(gpu.relative, cpu.relative);
      EXPECT_EQ(resolve_nullspace(cuda, *on_device, NullspaceChoice::automatic),
                resolve_nullspace(A, NullspaceChoice::automatic));
    }
  // A NaN row: taken where it is row 0 (the CPU keeps its first row), passed over elsewhere, whatever the
  // order the GPU's reduction combines the rows in (many rows, so many blocks).
  for (const Index nan_row : {Index{0}, Index{1}, Index{4000}, Index{9999}}) {
    SCOPED_TRACE("NaN in row " + std::to_string(nan_row));
    PoissonParams p;
    p.stencil = Stencil::p5;
    p.size = {100, 100};
    CsrMatrix<double> A = poisson_matrix(p);
    A.val[static_cast<std::size_t>(A.row_ptr[static_cast<std::size_t>(nan_row)])] = std::nan("");
    const auto on_device = cuda.csr(std::make_shared<const CsrMatrix<double>>(A));
    const RowSum cpu = largest_relative_row_sum(A), gpu = largest_relative_row_sum(cuda, *on_device);
    EXPECT_EQ(gpu.row, cpu.row);
    EXPECT_EQ(std::isnan(gpu.relative), std::isnan(cpu.relative));
    if (!std::isnan(cpu.relative)) {
      EXPECT_EQ(gpu.relative, cpu.relative);
    }
    // Gershgorin's bound passes a NaN row over on the CPU (std::max keeps the bound), so on the GPU too.
    EXPECT_EQ(gershgorin_bound_dinv_a(cuda, *on_device), gershgorin_bound_dinv_a(A));
  }
  PoissonParams p;
  p.size = {6, 5, 4};
  const CsrMatrix<double> A = poisson_matrix(p);
  for (const int k : {0, 1021, -1000}) {
    SCOPED_TRACE("A times 2^" + std::to_string(k));
    CsrMatrix<double> scaled = A;
    for (double& v : scaled.val) v = std::ldexp(v, k);
    const auto on_device = cuda.csr(std::make_shared<const CsrMatrix<double>>(scaled));
    EXPECT_EQ(gershgorin_bound_dinv_a(cuda, *on_device), gershgorin_bound_dinv_a(scaled));
    EXPECT_EQ(gershgorin_bound_dinv_a(scaled), gershgorin_bound_dinv_a(A));
  }
#endif
}

// A node coupled weakly to every other one (2D Poisson plus a hub: a_hh = N + 1, couplings -1): its row of
// the filtered matrix is a_hh alone on the device too (amg/filtered_matrix.hpp, IsolatedRows), the same hierarchy as
// the CPU's, as sparse.
TEST(GpuSetup, CudaBackendBuildsTheCpuHierarchyOfAMatrixWithAHubNode) {
#ifndef AMGSOLVE_WITH_CUDA
  GTEST_SKIP() << "built without CUDA";
#else
  PoissonParams grid;
  grid.stencil = Stencil::p5;
  grid.size = {60, 60};
  const auto A = std::make_shared<const CsrMatrix<double>>(test::with_hub(poisson_matrix(grid)));
  AmgParams params;
  params.coarse_size = 50;
  const AmgHierarchy<double> cpu(A, params);
  ASSERT_LT(cpu.operator_complexity(), 1.6);
  if (const GpuStatus status = gpu_status(); !status.usable()) GTEST_SKIP() << "no GPU: " << status.unavailable_reason;
  const CudaBackend cuda;
  params.spgemm = "cusparse";
  const Hierarchy<CudaBackend, double> gpu(cuda, cuda.csr(A), params);
  expect_same_hierarchy(cuda, gpu, cpu, 1e-12);
#endif
}

#ifdef AMGSOLVE_WITH_CUDA
// Two hierarchies on the device, bit for bit: every level's operator and prolongator, and the smoothers.
void expect_identical_on_device(const CudaBackend& cuda, const Hierarchy<CudaBackend, double>& a,
                                const Hierarchy<CudaBackend, double>& b) {
  ASSERT_EQ(a.levels(), b.levels());
  for (std::size_t l = 0; l < a.levels(); ++l) {
    SCOPED_TRACE("level " + std::to_string(l));
    expect_same_matrix(*cuda.host_view(a.matrix(l)), *cuda.host_view(b.matrix(l)));
    if (l + 1 == a.levels()) break;
    expect_same_matrix(*cuda.host_view(a.prolongator(l)), *cuda.host_view(b.prolongator(l)));
    EXPECT_EQ(a.smoother(l).upper, b.smoother(l).upper);
    EXPECT_EQ(a.smoother(l).lower, b.smoother(l).lower);
  }
  EXPECT_EQ(a.finest_aggregates(), b.finest_aggregates());
}
#endif

// The re-setup on the device (amg.keep_structure, Hierarchy::rebuild): an anisotropic operator, so that levels
// lump weak entries, re-set-up with values that make other rows lump theirs (the products from there on have
// other patterns), with those doubled (the same patterns), then with its own values again. Each time it
// keeps the aggregates, equals a fresh setup on the device with the kept structure bit for bit and the cpu
// re-setup to rounding, and sends nothing up but the new matrix.
TEST(GpuSetup, CudaReSetupKeepsTheAggregatesAndEqualsTheCpuReSetup) {
#ifndef AMGSOLVE_WITH_CUDA
  GTEST_SKIP() << "built without CUDA";
#else
  const GpuStatus status = gpu_status();
  if (!status.usable()) GTEST_SKIP() << "no GPU: " << status.unavailable_reason;
  PoissonParams aniso;
  aniso.stencil = Stencil::p5;
  aniso.size = {100, 90};
  aniso.anisotropy = {1.0, 0.05};
  const CsrMatrix<double> A = poisson_matrix(aniso);
  AmgParams params;
  params.keep_structure = true;
  params.coarse_size = 100;
  params.spgemm = "gustavson";
  AmgHierarchy<double> cpu(std::make_shared<const CsrMatrix<double>>(A), params);
  const CudaBackend cuda;
  params.spgemm = "esc";
  Hierarchy<CudaBackend, double> gpu(cuda, cuda.csr(std::make_shared<const CsrMatrix<double>>(A)), params);
  const Array<Index> aggregates = gpu.finest_aggregates();
  ASSERT_EQ(aggregates, cpu.finest_aggregates());
  const CsrMatrix<double> moved = test::relumped(A);
  const CsrMatrix<double> doubled = test::scaled(moved, 2.0);  // the same rows lumped as `moved`
  const std::pair<const CsrMatrix<double>*, bool> steps[] = {{&moved, true}, {&doubled, false}, {&A, true}};
  for (const auto& [values, renews] : steps) {
    const auto changed = std::make_shared<const CsrMatrix<double>>(*values);
    cpu.rebuild(changed);
    ASSERT_EQ(cpu.products_renewed_from() >= 0, renews);  // so the device saw other patterns too
    const auto on_device = cuda.csr(changed);
    const TransferCounts before = cuda.transfers();
    gpu.rebuild(cuda, on_device);
    const TransferCounts after = cuda.transfers();
    EXPECT_EQ(after.to_device, before.to_device);
    // As a full setup's (CudaBackendBuildsTheCpuHierarchyOfPoissonSmall), plus two pattern checks a level.
    const std::uint64_t per_level = 19 + 2 * (1 + 2 * static_cast<std::uint64_t>(params.lanczos_steps));
    EXPECT_LE(after.messages - before.messages, per_level * gpu.levels());
    EXPECT_EQ(gpu.finest_aggregates(), aggregates);
    expect_same_hierarchy(cuda, gpu, cpu, 1e-12);
    expect_identical_on_device(cuda, gpu, Hierarchy<CudaBackend, double>(cuda, on_device, params, gpu));
  }
  // Another pattern is refused, and the hierarchy stays as it was.
  PoissonParams other = aniso;
  other.size = {100, 89};
  EXPECT_THROW(gpu.rebuild(cuda, cuda.csr(std::make_shared<const CsrMatrix<double>>(poisson_matrix(other)))),
               InputError);
  expect_same_hierarchy(cuda, gpu, cpu, 1e-12);
#endif
}

}  // namespace
}  // namespace amgsolve
