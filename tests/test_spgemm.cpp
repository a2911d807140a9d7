// Every registered SpGEMM backend against a dense product (and Eigen for the shared matrices).
#include <omp.h>

#include <set>
#include <utility>

#include "common/device.hpp"
#include "common/memory.hpp"
#include "problems/poisson.hpp"
#include "sparse/matrix_market.hpp"
#include "spgemm/comparison.hpp"
#include "spgemm/heap.hpp"
#include "spgemm/numeric_product.hpp"
#include "spgemm/registry.hpp"
#include "spgemm/rmerge_cpu.hpp"
#include "test_support.hpp"
#include "textbook_gustavson.hpp"

namespace amgsolve {
namespace {

using test::random_sparse;
using test::to_dense;

std::vector<std::string> backend_names() {
  std::vector<std::string> names;
  for (const SpgemmBackend* b : SpgemmRegistry::instance().all())
    if (b->available()) names.push_back(b->name());
  return names;
}

// C = A B by `backend` checked against the dense product: valid sorted CSR, values within `tol`
// relative, the exact structural pattern, and the stats' counts.
template <class Value>
void expect_product_matches_dense(const SpgemmBackend& backend, const CsrMatrix<Value>& A, const CsrMatrix<Value>& B,
                                  double tol) {
  SpgemmStats stats;
  const CsrMatrix<Value> C = backend.multiply(A, B, &stats);
  ASSERT_TRUE(is_valid_csr(C));
  ASSERT_EQ(C.rows, A.rows);
  ASSERT_EQ(C.cols, B.cols);
  const Eigen::MatrixXd expected = to_dense(A) * to_dense(B);
  if (expected.size() > 0) {  // Eigen's maxCoeff is undefined on empty matrices
    const double scale = std::max(1.0, expected.cwiseAbs().maxCoeff());
    EXPECT_LE((to_dense(C) - expected).cwiseAbs().maxCoeff(), tol * scale);
  }
  EXPECT_EQ(stats.nnz, C.nnz());
  EXPECT_EQ(stats.multiplications, spgemm_multiplications(A, B));
  // Pattern: every structurally nonzero product appears, nothing else.
  Offset structural = 0;
  const Eigen::MatrixXd pattern = to_dense(A).cwiseAbs().cwiseSign() * to_dense(B).cwiseAbs().cwiseSign();
  for (Eigen::Index i = 0; i < pattern.size(); ++i) structural += pattern.data()[i] > 0 ? 1 : 0;
  EXPECT_EQ(C.nnz(), structural);
}

class SpgemmBackendTest : public ::testing::TestWithParam<std::string> {
 protected:
  const SpgemmBackend& backend() const { return SpgemmRegistry::instance().get(GetParam()); }

  template <class Value>
  void expect_matches_dense(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, double tol) {
    expect_product_matches_dense(backend(), A, B, tol);
  }
};

// The oracle itself, against Eigen's product: the pattern of the symbolic product (explicit zeros kept) and
// the values.
TEST(TextbookGustavson, EqualsEigensProductWithEveryStructuralEntry) {
  for (std::uint64_t seed : {31, 32, 33}) {
    const CsrMatrix<double> A = test::random_sparse(60, 45, 0.08, seed, {0, 59}, {3});
    const CsrMatrix<double> B = test::random_sparse(45, 70, 0.08, seed + 10, {7}, {0, 69});
    const CsrMatrix<double> C = test::textbook_gustavson(A, B);
    ASSERT_TRUE(is_valid_csr(C));
    const Eigen::SparseMatrix<double> E = (test::to_eigen(A) * test::to_eigen(B)).pruned(0.0);
    EXPECT_LE((test::to_eigen(C) - E).norm(), 1e-14 * E.norm());
    for (Index i = 0; i < C.rows; ++i) {  // each row's columns: exactly those its products touch
      std::set<Index> produced;
      for (Offset ka = A.row_begin(i); ka < A.row_end(i); ++ka)
        for (Offset kb = B.row_begin(A.col[ka]); kb < B.row_end(A.col[ka]); ++kb) produced.insert(B.col[kb]);
      EXPECT_EQ(std::vector<Index>(C.col.begin() + C.row_begin(i), C.col.begin() + C.row_end(i)),
                std::vector<Index>(produced.begin(), produced.end()))
          << "row " << i;
    }
  }
}

TEST_P(SpgemmBackendTest, RandomRectangularWithEmptyRowsAndColumns) {
  const CsrMatrix<double> A = random_sparse(70, 45, 0.08, 1, {0, 13, 69}, {2, 44});
  const CsrMatrix<double> B = random_sparse(45, 90, 0.06, 2, {7, 8}, {0, 89});
  expect_matches_dense(A, B, 1e-14);
}

TEST_P(SpgemmBackendTest, FloatValues) {
  const CsrMatrix<float> A = random_sparse<float>(50, 60, 0.1, 3);
  const CsrMatrix<float> B = random_sparse<float>(60, 40, 0.1, 4);
  expect_matches_dense(A, B, 1e-5);
}

TEST_P(SpgemmBackendTest, DenseRowsAndTallSkinny) {
  // A row with every column set (wider than any small accumulator), times a tall-skinny B.
  CsrMatrix<double> A = random_sparse(20, 300, 0.02, 5);
  std::vector<Triplet<double>> t;
  for (Index i = 0; i < A.rows; ++i)
    for (Offset k = A.row_begin(i); k < A.row_end(i); ++k) t.push_back({i, A.col[k], A.val[k]});
  for (Index j = 0; j < 300; ++j) t.push_back({7, j, 0.5 + j});
  A = csr_from_triplets(20, 300, t);
  expect_matches_dense(A, random_sparse(300, 3, 0.5, 6), 1e-13);
  expect_matches_dense(random_sparse(300, 20, 0.05, 7), A, 1e-13);
}

TEST_P(SpgemmBackendTest, RowLongerThanTwoMergeRounds) {
  // 2500 entries in one row: more than 32^2, so row merging needs three rounds of splitting.
  std::vector<Triplet<double>> t;
  for (Index j = 0; j < 2500; ++j) t.push_back({1, j, std::sin(0.1 * j)});
  t.push_back({0, 7, 2.0});
  const CsrMatrix<double> A = csr_from_triplets(3, 2500, t);
  expect_matches_dense(A, random_sparse(2500, 40, 0.05, 31), 1e-13);
}

TEST_P(SpgemmBackendTest, DegenerateShapes) {
  expect_matches_dense(CsrMatrix<double>(0, 0), CsrMatrix<double>(0, 0), 0);
  expect_matches_dense(CsrMatrix<double>(0, 5), random_sparse(5, 4, 0.5, 1), 0);
  expect_matches_dense(random_sparse(4, 5, 0.5, 2), CsrMatrix<double>(5, 0), 0);
  expect_matches_dense(CsrMatrix<double>(6, 4), CsrMatrix<double>(4, 3), 0);  // all empty
  expect_matches_dense(csr_from_triplets<double>(1, 1, {{0, 0, 3.0}}), csr_from_triplets<double>(1, 1, {{0, 0, -2.0}}),
                       0);
}

// Smoothed aggregation's products on stencil matrices: A^2 of 5- and 7-point Poisson, A^2 of a 27-point
// one, A_f T with an aggregation-like T, and the Galerkin product T^T (A T).
TEST_P(SpgemmBackendTest, PoissonAndGalerkinProducts) {
  PoissonParams square_grid, cube, cube27;
  square_grid.stencil = Stencil::p5;
  square_grid.size = {13, 11, 1};
  cube.size = {7, 6, 5};
  cube27.stencil = Stencil::p27;
  cube27.size = {5, 5, 5};
  for (const PoissonParams& p : {square_grid, cube, cube27}) {
    const CsrMatrix<double> A = poisson_matrix(p);
    expect_matches_dense(A, A, 1e-14);
    std::vector<Triplet<double>> t;  // aggregates of four consecutive unknowns, as MIS-2 would make
    for (Index k = 0; k < A.rows; ++k) t.push_back({k, k / 4, 0.5});
    const CsrMatrix<double> T = csr_from_triplets(A.rows, (A.rows + 3) / 4, t);
    const CsrMatrix<double> AT = backend().multiply(A, T);
    expect_matches_dense(A, T, 1e-14);
    expect_matches_dense(transpose(T), AT, 1e-14);
  }
}

TEST_P(SpgemmBackendTest, ShapeMismatchIsAnError) {
  EXPECT_THROW(backend().multiply(CsrMatrix<double>(3, 4), CsrMatrix<double>(5, 3)), Error);
}

TEST_P(SpgemmBackendTest, IdenticalForAnyThreadCount) {
  const CsrMatrix<double> A = random_sparse(400, 300, 0.03, 8);
  const CsrMatrix<double> B = random_sparse(300, 350, 0.03, 9);
  omp_set_num_threads(1);
  const CsrMatrix<double> C1 = backend().multiply(A, B);
  for (int threads : {2, 3}) {
    omp_set_num_threads(threads);
    const CsrMatrix<double> C = backend().multiply(A, B);
    EXPECT_EQ(C.row_ptr, C1.row_ptr);
    EXPECT_EQ(C.col, C1.col);
    EXPECT_EQ(C.val, C1.val);  // bitwise: each row is summed in the same order
  }
  omp_set_num_threads(2);
}

TEST_P(SpgemmBackendTest, SquareOfSharedMatricesMatchesEigen) {
  const auto found = test::shared_matrices({"bcsstk13", "s3rmt3m3", "CSky3d30", "af23560"});
  if (found.empty()) GTEST_SKIP() << test::no_shared_matrices();
  for (const auto& [name, path] : found) {
    const CsrMatrix<double> A = read_matrix_market(path);
    const CsrMatrix<double> C = backend().multiply(A, A);
    ASSERT_TRUE(is_valid_csr(C));
    const Eigen::SparseMatrix<double> E = test::to_eigen(A) * test::to_eigen(A);
    const Eigen::SparseMatrix<double> diff = test::to_eigen(C) - E;
    EXPECT_LE(diff.norm(), 1e-12 * E.norm()) << name;
  }
}

INSTANTIATE_TEST_SUITE_P(AllBackends, SpgemmBackendTest, ::testing::ValuesIn(backend_names()),
                         [](const auto& info) {
                           std::string n = info.param;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

// A stored zero of A times negative entries of B: every product is -0.0, and so is their sum in the textbook
// order (the first product stored, the others added). The backends that sum in row order, and the
// numeric-only phase, give it on every path: gustavson's unchecked accumulation of narrow windows (a
// stencil's rows), which adds every product into the accumulator, gave +0.0 while that started at +0.0.
template <class Value>
void expect_sums_of_negative_zeros_are_negative_zero() {
  PoissonParams p;
  p.stencil = Stencil::p5;
  p.size = {40, 40, 1};
  const CsrMatrix<Value> A = cast_values<Value>(poisson_matrix(p));
  CsrMatrix<Value> zeros = A, negative = A;
  std::fill(zeros.val.begin(), zeros.val.end(), Value(0));
  for (Value& v : negative.val) v = -std::abs(v) - 1;
  for (const char* name : {"gustavson", "auto", "magnus", "hash"}) {
    const SpgemmBackend& backend = SpgemmRegistry::instance().get(name);
    ASSERT_TRUE(backend.sums_in_row_order()) << name;
    const CsrMatrix<Value> C = backend.multiply(zeros, negative);
    ASSERT_GT(C.nnz(), 0);
    for (Offset k = 0; k < C.nnz(); ++k) ASSERT_TRUE(std::signbit(C.val[k])) << name << ", entry " << k;
    const CsrMatrix<Value> refilled = numeric_product(zeros, negative, C);
    for (Offset k = 0; k < C.nnz(); ++k) ASSERT_TRUE(std::signbit(refilled.val[k])) << "numeric phase, entry " << k;
  }
}

TEST(SpgemmSignedZeros, ASumOfNegativeZerosIsNegativeZero) {
  expect_sums_of_negative_zeros_are_negative_zero<double>();
  expect_sums_of_negative_zeros_are_negative_zero<float>();
}

// A product that cannot fit is refused with the one-line error before it is allocated: an allocation that
// failed inside a parallel region ended the process, whatever the caller caught (the Python package, the
// library). With 256 MiB of address space left: 25,000 rows times 1,000 columns of ones (300 MB of product)
// for every cpu backend; and gustavson's dense accumulators, one per thread of 2^27 columns (1.5 GiB each),
// for a product of 100,000 entries, and the numeric phase's into that product's pattern.
TEST(SpgemmMemory, AProductThatCannotFitIsRefusedBeforeItIsAllocated) {
  if (available_memory_bytes() < (std::uint64_t{1} << 30)) GTEST_SKIP() << "under 1 GiB free: proves nothing";
  std::vector<Triplet<double>> column, row;
  for (Index i = 0; i < 25000; ++i) column.push_back({i, 0, 1.0});
  for (Index j = 0; j < 1000; ++j) row.push_back({0, j, 1.0});
  const CsrMatrix<double> tall = csr_from_triplets(25000, 1, column), wide = csr_from_triplets(1, 1000, row);
  std::vector<Triplet<double>> spread;
  for (Index j = 0; j < 100; ++j) spread.push_back({0, j << 20, 1.0});
  const CsrMatrix<double> ones =
      csr_from_triplets(1000, 1, std::vector<Triplet<double>>(column.begin(), column.begin() + 1000));
  const CsrMatrix<double> far_columns = csr_from_triplets(1, Index{1} << 27, spread);
  std::vector<std::string> refusals;
  const auto refusal = [&](const char* name, const CsrMatrix<double>& A, const CsrMatrix<double>& B) {
    try {
      SpgemmRegistry::instance().get(name).multiply(A, B);
      refusals.push_back(std::string(name) + ": not refused");
    } catch (const InputError& e) {
      refusals.push_back(e.what());
    }
  };
  const std::vector<std::string> cpu_backends = {"gustavson", "hash", "heap", "rmerge-cpu", "magnus", "auto"};
  // The re-setup's numeric phase into a kept pattern (hash's, which needs no dense accumulator): its dense
  // accumulators span B's columns too.
  const CsrMatrix<double> kept = SpgemmRegistry::instance().get("hash").multiply(ones, far_columns);
  const bool limited = test::with_address_space_headroom(std::uint64_t{256} << 20, [&] {
    for (const std::string& name : cpu_backends) refusal(name.c_str(), tall, wide);
    refusal("gustavson", ones, far_columns);
    try {
      numeric_product(ones, far_columns, kept);
      refusals.push_back("numeric phase: not refused");
    } catch (const InputError& e) {
      refusals.push_back(e.what());
    }
  });
  if (!limited) GTEST_SKIP() << "a hard address-space limit is set";
  ASSERT_EQ(refusals.size(), cpu_backends.size() + 2);
  for (std::size_t b = 0; b < cpu_backends.size(); ++b) {
    const std::string& message = refusals[b];
    EXPECT_NE(message.find("product (25000 x 1000, 25000000 nonzeros) needs about"), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  EXPECT_NE(refusals[cpu_backends.size()].find("gustavson's dense accumulators"), std::string::npos)
      << refusals[cpu_backends.size()];
  EXPECT_NE(refusals.back().find("the numeric phase's dense accumulators"), std::string::npos) << refusals.back();
}

// Hash's table per thread is sized by the fewer of a row's products and B's columns, each a bound on the
// row's nonzeros (Nagasaka et al.): rows of 2,048 products into 4 columns need a table of 16 slots, rows of
// 64 products into 10,000 columns one of 128, and the stats count exactly that.
TEST(Hash, TheTableIsSizedByTheFewerOfTheRowsProductsAndBsColumns) {
  const SpgemmBackend& hash = SpgemmRegistry::instance().get("hash");
  const auto table_bytes = [](std::uint64_t slots) {
    return static_cast<std::uint64_t>(max_threads()) * slots * (sizeof(Index) + sizeof(double));
  };
  const auto ones = [](Index rows, Index cols, Index per_row, Index stride) {
    std::vector<Triplet<double>> t;
    for (Index i = 0; i < rows; ++i)
      for (Index k = 0; k < per_row; ++k) t.push_back({i, (i + k * stride) % cols, 1.0});
    return csr_from_triplets(rows, cols, t);
  };
  SpgemmStats few_columns;
  expect_product_matches_dense(hash, ones(64, 512, 512, 1), ones(512, 4, 4, 1), 0.0);
  hash.multiply(ones(64, 512, 512, 1), ones(512, 4, 4, 1), &few_columns);
  EXPECT_EQ(few_columns.multiplications, 64 * 512 * 4);
  EXPECT_EQ(few_columns.extra_bytes, table_bytes(16));
  SpgemmStats few_products;
  expect_product_matches_dense(hash, ones(64, 64, 8, 8), ones(64, 10000, 8, 1250), 0.0);
  hash.multiply(ones(64, 64, 8, 8), ones(64, 10000, 8, 1250), &few_products);
  EXPECT_EQ(few_products.multiplications, 64 * 8 * 8);
  EXPECT_EQ(few_products.extra_bytes, table_bytes(128));
}

// rmerge-cpu's merge width W: any W from 2 on gives the dense product, through none (W = 4096) to eleven
// (W = 2) rounds of splitting of a row of 2500 entries; the rounds' factors count as extra memory (the
// first G holds A's entries); widths outside the range are refused.
TEST(RMergeCpu, EveryMergeWidthMatchesTheDenseProduct) {
  std::vector<Triplet<double>> t;
  for (Index j = 0; j < 2500; ++j) t.push_back({1, j, std::sin(0.1 * j)});
  for (Index j = 0; j < 2500; j += 7) t.push_back({4, j, 1.0 + j % 5});
  t.push_back({0, 7, 2.0});
  const CsrMatrix<double> long_rows = csr_from_triplets(6, 2500, t);
  const CsrMatrix<double> B = random_sparse(2500, 40, 0.05, 61);
  for (const Index W : {2, 3, 5, 16, 32, 100, 4096}) {
    const auto backend = make_rmerge_cpu(W);
    SCOPED_TRACE(backend->description());
    EXPECT_NE(backend->description().find("W = " + std::to_string(W)), std::string::npos);
    expect_product_matches_dense(*backend, long_rows, B, 1e-13);
    expect_product_matches_dense(*backend, random_sparse(70, 45, 0.2, 62), random_sparse(45, 90, 0.1, 63), 1e-14);
    expect_product_matches_dense(*backend, cast_values<float>(long_rows), cast_values<float>(B), 1e-5);
    SpgemmStats stats;
    backend->multiply(long_rows, B, &stats);
    if (W >= 2500) {
      EXPECT_EQ(stats.extra_bytes, 0u);  // no round: A * B directly
    } else {
      EXPECT_GE(stats.extra_bytes, static_cast<std::uint64_t>(long_rows.nnz()) * (sizeof(Index) + sizeof(double)));
    }
  }
  EXPECT_THROW(make_rmerge_cpu(1), InputError);
  EXPECT_THROW(make_rmerge_cpu(kMostRMergeCpuWidth + 1), InputError);
}

// The registered rmerge-cpu reads AMGSOLVE_RMERGE_CPU_WIDTH; the registry was filled before this test
// could set it, so the test checks the variable through a new registry of the same backends.
TEST(RMergeCpu, TheRegisteredInstanceTakesItsWidthFromTheEnvironment) {
  const char* users = std::getenv(kRMergeCpuWidthVariable);
  const std::string saved = users ? users : "";
  const auto registered_with = [&](const char* value) {
    ::setenv(kRMergeCpuWidthVariable, value, 1);
    SpgemmRegistry registry;
    register_all_spgemm_backends(registry);
    if (users) {
      ::setenv(kRMergeCpuWidthVariable, saved.c_str(), 1);
    } else {
      ::unsetenv(kRMergeCpuWidthVariable);
    }
    const SpgemmBackend* rmerge = registry.find("rmerge-cpu");
    return std::make_pair(rmerge->description(), rmerge->unavailable_reason());
  };
  for (const auto& [value, width] : {std::pair{"", "W = 32"}, std::pair{"8", "W = 8"}}) {
    const auto [description, reason] = registered_with(value);
    EXPECT_NE(description.find(width), std::string::npos) << value << ": " << description;
    EXPECT_EQ(reason, "") << value;
  }
  for (const char* bad : {"1", "eight", "8x", "70000"}) {
    const std::string reason = registered_with(bad).second;
    EXPECT_NE(reason.find(kRMergeCpuWidthVariable), std::string::npos) << bad << ": " << reason;
    EXPECT_NE(reason.find(bad), std::string::npos) << reason;
  }
}

// The heap kernel without the registry, as the distributed algorithms call it on their blocks: a wide,
// hypersparse B (most columns empty) in double and float, and the shape check.
TEST(HeapMultiply, MatchesTheDenseProductOnHypersparseBlocks) {
  const CsrMatrix<double> A = random_sparse(30, 40, 0.2, 71, {3, 17});
  const CsrMatrix<double> B = random_sparse(40, 5000, 0.001, 72, {0, 9});
  SpgemmStats stats;
  const CsrMatrix<double> C = heap_multiply(A, B, &stats);
  ASSERT_TRUE(is_valid_csr(C));
  const Eigen::MatrixXd expected = to_dense(A) * to_dense(B);
  EXPECT_LE((to_dense(C) - expected).cwiseAbs().maxCoeff(), 1e-14 * std::max(1.0, expected.cwiseAbs().maxCoeff()));
  EXPECT_EQ(stats.multiplications, spgemm_multiplications(A, B));
  EXPECT_EQ(stats.nnz, C.nnz());
  const CsrMatrix<float> Af = cast_values<float>(A), Bf = cast_values<float>(B);
  const CsrMatrix<float> Cf = heap_multiply(Af, Bf), reference = test::textbook_gustavson(Af, Bf);
  EXPECT_EQ(Cf.col, C.col);
  double difference = -1;
  EXPECT_TRUE(spgemm_results_agree(Cf, reference, product_magnitudes(Af, Bf, reference),
                                   spgemm_agreement_tolerance<float>(), difference))
      << difference;
  EXPECT_THROW(heap_multiply(A, A), Error);
}

TEST(SpgemmRegistry, UnknownNameListsTheRegisteredOnes) {
  try {
    SpgemmRegistry::instance().get("no-such-backend");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("gustavson"), std::string::npos) << e.what();
  }
}

// The CUDA backends exist in CUDA builds only. Without a device they must say so, naming the device, and
// refuse a product with an Error carrying that reason instead of crashing in the CUDA runtime.
TEST(SpgemmRegistry, GpuBackendsWithoutADeviceAreUnavailableAndSayWhy) {
  const bool gpu = gpu_status().usable();
  for (const char* name : {"cusparse", "esc"}) {
    const SpgemmBackend* backend = SpgemmRegistry::instance().find(name);
    if (!backend) GTEST_SKIP() << name << " not built (a build without CUDA)";
    EXPECT_EQ(backend->runs_on(), BackendKind::cuda) << name;
    if (gpu) {
      EXPECT_TRUE(backend->available()) << name << ": " << backend->unavailable_reason();
      continue;
    }
    const std::string reason = backend->unavailable_reason();
    EXPECT_NE(reason.find("CUDA"), std::string::npos) << name << ": " << reason;
    const CsrMatrix<double> A = random_sparse(20, 20, 0.2, 51);
    try {
      backend->multiply(A, A);
      ADD_FAILURE() << name << " multiplied without a device";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
    }
    EXPECT_THROW(backend->multiply(cast_values<float>(A), cast_values<float>(A)), Error) << name;
    EXPECT_THROW(SpgemmRegistry::instance().get(name), InputError) << name;
  }
}

TEST(SpgemmRegistry, NamesAreUniqueAndDescribed) {
  const auto all = SpgemmRegistry::instance().all();
  ASSERT_FALSE(all.empty());
  for (const SpgemmBackend* b : all) {
    EXPECT_FALSE(b->description().empty());
    EXPECT_EQ(SpgemmRegistry::instance().find(b->name()), b);
  }
}

}  // namespace
}  // namespace amgsolve


namespace amgsolve {
namespace {

// A matrix with `dofs` unknowns per node of `nodes`' pattern: each entry (I, J) becomes a dense
// dofs x dofs block with distinct values, so the rows of a node share their columns (as in elasticity
// finite elements), which gustavson computes together. Every `broken`-th node (0: none) loses the last
// entry of its last row, so that its rows no longer all share their columns. `extra_rows` rows with
// the first node's pattern are appended (a short last group).
CsrMatrix<double> node_blocks(const CsrMatrix<double>& nodes, Index dofs, Index broken = 0, Index extra_rows = 0) {
  std::vector<Triplet<double>> entries;
  for (Index I = 0; I < nodes.rows; ++I)
    for (Offset e = nodes.row_begin(I); e < nodes.row_end(I); ++e)
      for (Index a = 0; a < dofs; ++a)
        for (Index b = 0; b < dofs; ++b) {
          const bool dropped =
              broken > 0 && I % broken == 0 && a + 1 == dofs && e + 1 == nodes.row_end(I) && b + 1 == dofs;
          if (!dropped)
            entries.push_back({I * dofs + a, nodes.col[e] * dofs + b, nodes.val[e] * (1.0 + a) - 0.25 * b});
        }
  for (Index r = 0; r < extra_rows; ++r)
    for (Offset e = nodes.row_begin(0); e < nodes.row_end(0); ++e)
      entries.push_back({nodes.rows * dofs + r, nodes.col[e] * dofs, nodes.val[e] + r});
  return csr_from_triplets(nodes.rows * dofs + extra_rows, nodes.cols * dofs + extra_rows, std::move(entries));
}

// An aggregation: row k of B has its one entry in column (k / 4) mod columns (every tenth row none), as
// smoothed aggregation's tentative prolongator, which gustavson multiplies without its window pass.
CsrMatrix<double> aggregation(Index rows, Index columns) {
  std::vector<Triplet<double>> entries;
  for (Index k = 0; k < rows; ++k)
    if (k % 10 != 3) entries.push_back({k, (k / 4) % columns, 1.0 + k % 3});
  return csr_from_triplets(rows, columns, std::move(entries));
}

// gustavson takes one of three paths by the product's size and compression: one pass on one thread,
// blocks of rows in one pass in parallel (up to 2^22 multiplications, and up to 2^26 when they merge at
// least 4 products per entry), or symbolic + numeric passes (larger products that merge less); node
// blocks go in groups of 2 or 3 rows (groups whose rows differ row by row; a short last group as far as
// its rows share columns),
// with the marker test or without it (narrow windows: the stencils and the node blocks of a 2-D grid).
// Each case against Eigen and bitwise the same on 1 and 2 threads; the symbolic time says which path ran.
TEST(Gustavson, EveryPathMatchesEigenOnAnyThreadCount) {
  struct Case {
    const char* name;
    CsrMatrix<double> A, B;
    std::string path;  // SpgemmStats::path
  };
  PoissonParams seven, twenty_seven;
  seven.size = {48, 48, 48};  // 5.4 M multiplications, 2 per entry: two passes
  twenty_seven.stencil = Stencil::p27;
  twenty_seven.size = {24, 24, 24};  // 9.3 M multiplications, 5.6 per entry: still one pass in blocks
  std::vector<Case> cases;
  const std::string one_thread = "one pass, one thread", blocks = "one pass in blocks", two = "two passes";
  auto square = [&](const char* name, CsrMatrix<double> A, const std::string& path) {
    CsrMatrix<double> B = A;
    cases.push_back({name, std::move(A), std::move(B), path});
  };
  square("one thread", random_sparse(60, 60, 0.1, 31), one_thread);
  square("blocks", random_sparse(3000, 3000, 0.01, 32), blocks);
  square("7-point A^2", poisson_matrix(seven), two);
  square("27-point A^2", poisson_matrix(twenty_seven), blocks);
  PoissonParams grid;
  grid.stencil = Stencil::p5;
  grid.size = {41, 41, 1};
  {
    PoissonParams cube;
    cube.size = {20, 20, 20};  // 56 K multiplications: blocks
    CsrMatrix<double> A = poisson_matrix(grid), A3 = poisson_matrix(cube);
    CsrMatrix<double> P = aggregation(A.cols, 300), P3 = aggregation(A3.cols, 1500);
    cases.push_back({"aggregation, one thread", std::move(A), std::move(P), one_thread});
    cases.push_back({"aggregation, blocks", std::move(A3), std::move(P3), blocks});
  }
  square("node triples, one thread", node_blocks(random_sparse(21, 21, 0.15, 33), 3), one_thread);
  square("node pairs, one thread", node_blocks(random_sparse(21, 21, 0.15, 33), 2, 0, 1), one_thread);
  square("node triples, blocks", node_blocks(random_sparse(701, 701, 0.01, 34), 3, 4, 2), blocks);
  // 9 M multiplications, 11.5 per entry: one pass in blocks
  square("node triples of 6, 2-D grid", node_blocks(poisson_matrix(grid), 6), blocks);
  PoissonParams big_grid = grid;
  big_grid.size = {301, 301, 1};  // 18 M multiplications, 3.8 per entry, narrow windows: two passes
  square("node pairs, 2-D grid, two passes", node_blocks(poisson_matrix(big_grid), 2, 7, 1), two);
  // Node pairs (every seventh broken, one row left over) times 150 random columns per row of B: 4.8 M
  // multiplications that hardly merge, two passes.
  {
    PoissonParams nodes = grid;
    nodes.size = {40, 40, 1};
    CsrMatrix<double> A = node_blocks(poisson_matrix(nodes), 2, 7, 1);
    CsrMatrix<double> B = random_sparse(A.cols, 200000, 0.00075, 36);
    cases.push_back({"node pairs, two passes", std::move(A), std::move(B), two});
  }
  const SpgemmBackend& gustavson = SpgemmRegistry::instance().get("gustavson");
  const int threads = omp_get_max_threads();
  for (const Case& c : cases) {
    SpgemmStats stats;
    omp_set_num_threads(1);
    const CsrMatrix<double> C1 = gustavson.multiply(c.A, c.B, &stats);
    omp_set_num_threads(2);
    const CsrMatrix<double> C2 = gustavson.multiply(c.A, c.B, &stats);
    EXPECT_EQ(std::string(stats.path), c.path) << c.name;
    EXPECT_EQ(stats.symbolic_seconds > 0, c.path == two) << c.name;
    ASSERT_TRUE(is_valid_csr(C2)) << c.name;
    EXPECT_TRUE(C1.row_ptr == C2.row_ptr && C1.col == C2.col && C1.val == C2.val) << c.name;
    const Eigen::SparseMatrix<double> E = test::to_eigen(c.A) * test::to_eigen(c.B);
    EXPECT_EQ(C2.nnz(), E.nonZeros()) << c.name;
    EXPECT_LE((test::to_eigen(C2) - E).norm(), 1e-12 * E.norm()) << c.name;
  }
  omp_set_num_threads(threads);
}

TEST(SpgemmComparison, AgreementDetectsPatternAndValueDifferences) {
  const CsrMatrix<double> A = test::random_sparse(40, 30, 0.1, 21);
  const CsrMatrix<double> B = test::random_sparse(30, 35, 0.1, 22);
  const CsrMatrix<double> C = test::textbook_gustavson(A, B);
  const std::vector<double> magnitude = product_magnitudes(A, B, C);
  double difference = -1;
  EXPECT_TRUE(spgemm_results_agree(C, C, magnitude, 1e-12, difference));
  EXPECT_EQ(difference, 0.0);
  CsrMatrix<double> perturbed = C;
  perturbed.val[perturbed.val.size() / 2] *= 1.0 + 1e-9;
  EXPECT_FALSE(spgemm_results_agree(perturbed, C, magnitude, 1e-12, difference));
  EXPECT_GT(difference, 1e-12);
  CsrMatrix<double> moved = C;
  moved.col[0] = moved.col[0] == 0 ? 1 : 0;  // same values, different pattern
  EXPECT_FALSE(spgemm_results_agree(moved, C, magnitude, 1e-12, difference));
}

TEST(SpgemmComparison, MagnitudesAreTheProductOfTheAbsoluteValues) {
  const CsrMatrix<double> A = test::random_sparse(40, 30, 0.1, 25);
  const CsrMatrix<double> B = test::random_sparse(30, 35, 0.1, 26);
  const CsrMatrix<double> C = test::textbook_gustavson(A, B);
  const Eigen::MatrixXd expected = test::to_dense(A).cwiseAbs() * test::to_dense(B).cwiseAbs();
  const std::vector<double> magnitude = product_magnitudes(A, B, C);
  ASSERT_EQ(magnitude.size(), static_cast<std::size_t>(C.nnz()));
  for (Index i = 0; i < C.rows; ++i)
    for (Offset k = C.row_begin(i); k < C.row_end(i); ++k)
      EXPECT_NEAR(magnitude[static_cast<std::size_t>(k)], expected(i, C.col[k]), 1e-14 * expected(i, C.col[k]));
  EXPECT_THROW(product_magnitudes(B, A, C), Error);  // 35 columns against 40 rows
}

// C = A B with A = [1 1 1] and B's columns (1e16, -1e16, 1), (1e-6, 0, 0) and (0, 0, 1e3): c_00 sums to 1 in
// row order and to 0 from the last product backwards (-1e16 + 1 rounds to -1e16), both correct roundings of
// products of size 1e16; c_01 = 1e-6 has one product and nothing to round away.
TEST(SpgemmComparison, EachEntryIsJudgedOnTheScaleOfItsProducts) {
  Eigen::MatrixXd a(1, 3), b(3, 3);
  a << 1, 1, 1;
  b << 1e16, 1e-6, 0, -1e16, 0, 0, 1, 0, 1e3;
  const CsrMatrix<double> A = test::from_eigen(a.sparseView());
  const CsrMatrix<double> B = test::from_eigen(b.sparseView());
  const CsrMatrix<double> C = test::textbook_gustavson(A, B);
  ASSERT_EQ(C.nnz(), 3);
  ASSERT_EQ(C.val[0], 1.0);
  const std::vector<double> magnitude = product_magnitudes(A, B, C);
  double difference = -1;
  CsrMatrix<double> summed_backwards = C;
  summed_backwards.val[0] = 1e16 + (-1e16 + 1.0);
  ASSERT_EQ(summed_backwards.val[0], 0.0);
  // Off by 1 where max |C| is 1e3: a tolerance on max |C| called it wrong.
  EXPECT_TRUE(spgemm_results_agree(summed_backwards, C, magnitude, 1e-12, difference));
  EXPECT_LE(difference, 1e-16);
  CsrMatrix<double> wrong_small_entry = C;
  wrong_small_entry.val[1] *= 1.0 + 1e-6;
  // Off by 1e-12: within 1e-12 of max |C|, so a tolerance on max |C| let it pass.
  EXPECT_FALSE(spgemm_results_agree(wrong_small_entry, C, magnitude, 1e-12, difference));
  EXPECT_NEAR(difference, 1e-6, 1e-9);
  CsrMatrix<double> not_a_number = C;
  not_a_number.val[2] = NAN;
  EXPECT_FALSE(spgemm_results_agree(not_a_number, C, magnitude, 1e-12, difference));
}

// Float products of subnormal size round in absolute steps of the smallest subnormal (1.4e-45): c = 3e-23 *
// 3e-23 + 3e-23 * 3e-23 = 1.8e-45 rounds to one step (1.4e-45) or two (2.8e-45) depending on whether each
// product rounds first, a difference of 0.8 of c's own size. Both are right to the precision floats have
// there; a wrong value of normal size still is wrong.
TEST(SpgemmComparison, SubnormalProductsAreJudgedOnTheSmallestNormalNumber) {
  const CsrMatrix<float> A = csr_from_triplets<float>(1, 2, {{0, 0, 3e-23f}, {0, 1, 3e-23f}});
  const CsrMatrix<float> B = csr_from_triplets<float>(2, 1, {{0, 0, 3e-23f}, {1, 0, 3e-23f}});
  const CsrMatrix<float> C = test::textbook_gustavson(A, B);
  const std::vector<double> magnitude = product_magnitudes(A, B, C);
  ASSERT_LT(magnitude[0], std::numeric_limits<float>::min());
  const float step = std::numeric_limits<float>::denorm_min();
  CsrMatrix<float> one_step_off = C;
  one_step_off.val[0] = C.val[0] == step ? 2 * step : step;
  double difference = -1;
  EXPECT_TRUE(spgemm_results_agree(one_step_off, C, magnitude, spgemm_agreement_tolerance<float>(), difference));
  EXPECT_LE(difference, 1e-5);
  CsrMatrix<float> wrong = C;
  wrong.val[0] = 1e-30f;
  EXPECT_FALSE(spgemm_results_agree(wrong, C, magnitude, spgemm_agreement_tolerance<float>(), difference));
}

// The numeric phase alone, into the pattern of an earlier product: gustavson's values bit for bit on new
// values, and an error when a product falls outside the pattern.
TEST(NumericProduct, RefillsAKeptPatternWithGustavsonsValues) {
  const CsrMatrix<double> A = test::random_sparse(180, 140, 0.05, 31);
  const CsrMatrix<double> B = test::random_sparse(140, 160, 0.05, 32);
  CsrMatrix<double> pattern = SpgemmRegistry::instance().get("gustavson").multiply(A, B);
  CsrMatrix<double> A2 = A, B2 = B;
  for (double& v : A2.val) v = std::cos(v * 7.0);
  for (double& v : B2.val) v = 1.0 / (1.5 + v);
  const CsrMatrix<double> expected = SpgemmRegistry::instance().get("gustavson").multiply(A2, B2);
  Offset multiplications = 0;
  const CsrMatrix<double> C = numeric_product(A2, B2, pattern, &multiplications);
  EXPECT_EQ(C.row_ptr, expected.row_ptr);
  EXPECT_EQ(C.col, expected.col);
  for (std::size_t k = 0; k < expected.val.size(); ++k) ASSERT_EQ(C.val[k], expected.val[k]) << k;
  Offset products = 0;  // every (i, k, j) with A(i,k) and B(k,j) stored
  for (Offset ka = 0; ka < A.nnz(); ++ka) products += B.row_length(A.col[ka]);
  EXPECT_EQ(multiplications, products);
  const CsrMatrix<double> other = test::random_sparse(180, 140, 0.05, 33);  // another pattern of A
  EXPECT_THROW(numeric_product(other, B2, pattern), Error);
}

TEST(SpgemmComparison, EveryAvailableBackendAgreesOnARealProduct) {
  const CsrMatrix<double> A = test::random_sparse(200, 150, 0.05, 23);
  const CsrMatrix<double> B = test::random_sparse(150, 170, 0.05, 24);
  const CsrMatrix<double> C = test::textbook_gustavson(A, B);
  const auto rows = compare_spgemm_backends(3, "ap", A, B, C);
  EXPECT_EQ(rows.size(), backend_names().size());
  for (const SpgemmComparisonRow& r : rows) {
    EXPECT_TRUE(r.agrees) << r.backend << " differs by " << r.max_relative_difference;
    EXPECT_EQ(r.level, 3);
    EXPECT_EQ(r.product, "ap");
    EXPECT_EQ(r.stats.nnz, C.nnz());
    EXPECT_EQ(r.runs, ComparisonTiming{}.runs);
    EXPECT_LE(r.min_seconds, r.stats.seconds());
    EXPECT_LE(r.stats.seconds(), r.max_seconds);
  }
  // The result checked is the warm-up's: a wrong reference is found whatever the timed runs do.
  CsrMatrix<double> wrong = C;
  wrong.val[0] += 1.0;
  for (const SpgemmComparisonRow& r : compare_spgemm_backends(0, "rap", A, B, wrong, ComparisonTiming{1, 1}))
    EXPECT_FALSE(r.agrees) << r.backend;
}

}  // namespace
}  // namespace amgsolve

#include "common/cpu_info.hpp"
#include "common/environment.hpp"

namespace amgsolve {
namespace {

// Run only by the SmallCaches. entries of ctest (tests/CMakeLists.txt), which set a tiny L2 in the
// environment: it must reach the code, or that suite would only repeat the plain one.
TEST(CacheGeometry, SmallCachesRunSeesItsL2) {
  const auto l2 = integer_from_environment("AMGSOLVE_L2_BYTES", 1, 1LL << 40);
  ASSERT_TRUE(l2.has_value()) << "AMGSOLVE_L2_BYTES is not set: the SmallCaches. ctest entries set it";
  EXPECT_EQ(l2_cache_bytes(), static_cast<std::size_t>(*l2));
  EXPECT_LT(l2_cache_bytes(), std::size_t{4096});
}

TEST(SpgemmAuto, PicksByTheWindowTheRowsTouchAndTheirProductsAndSaysWhy) {
  const SpgemmBackend& automatic = SpgemmRegistry::instance().get("auto");
  const Index in_l2 = static_cast<Index>(l2_cache_bytes() / (sizeof(Index) + sizeof(double)));
  struct Case {
    Index cols;
    Index spacing;   // between the columns of consecutive rows of B
    bool few_products;  // A with 2 per row (else random 15 x 20 at density 0.6: about 12)
    const char* expected;
  };
  // A narrow accumulator; a wide one whose rows stay in a narrow window (stencil-like); a wide one whose
  // rows scatter over all of it, with many products per row and with very few.
  for (const Case c : {Case{1000, 37, false, "gustavson"}, Case{4 * in_l2, 3, false, "gustavson"},
                       Case{4 * in_l2, in_l2 / 5, false, "magnus"}, Case{4 * in_l2, in_l2 / 5, true, "hash"}}) {
    SCOPED_TRACE(std::to_string(c.cols) + " columns, spacing " + std::to_string(c.spacing) +
                 (c.few_products ? ", 2 products per row" : ""));
    std::vector<Triplet<double>> t;
    for (Index i = 0; i < 20; ++i) t.push_back({i, static_cast<Index>((i * c.spacing) % c.cols), 1.0 + i});
    // Few products: columns 0 and 19 of every row, whose rows of B lie 19 spacings apart.
    const CsrMatrix<double> A =
        c.few_products ? csr_from_triplets<double>(2, 20, {{0, 0, 1.0}, {0, 19, 2.0}, {1, 0, -1.0}, {1, 19, 0.5}})
                       : test::random_sparse(15, 20, 0.6, 41);
    const CsrMatrix<double> B = csr_from_triplets(20, c.cols, t);
    SpgemmStats stats;
    const CsrMatrix<double> C = automatic.multiply(A, B, &stats);
    const CsrMatrix<double> reference = test::textbook_gustavson(A, B);
    EXPECT_EQ(C.col, reference.col);
    EXPECT_EQ(C.val, reference.val);
    EXPECT_EQ(stats.choice.rfind(c.expected, 0), 0u) << stats.choice;
    EXPECT_NE(stats.choice.find("L2"), std::string::npos) << stats.choice;
    if (std::string(c.expected) != "gustavson") {
      EXPECT_NE(stats.choice.find("products per row"), std::string::npos) << stats.choice;
    }
  }
}

// A 10 x 10 diagonal A and a B of one entry a row, scattered over `cols` columns: a product of 10 entries
// whose dense accumulator spans all the columns.
std::pair<CsrMatrix<double>, CsrMatrix<double>> diagonal_times_scattered_row(Index cols) {
  std::vector<Triplet<double>> a, b;
  for (Index i = 0; i < 10; ++i) {
    a.push_back({i, i, 1.0 + i});
    b.push_back({i, static_cast<Index>((i * 1234567) % cols), 2.0 - i});
  }
  return {csr_from_triplets(10, 10, a), csr_from_triplets(10, cols, b)};
}

// A product of a few entries into a B of 2^24 columns: gustavson's accumulator would be 192 MiB a thread for
// 10 products (at 2^28 columns 4.6 GB and 7 s, against milliseconds for the others).
TEST(SpgemmAuto, LeavesOutGustavsonWhereItsAccumulatorDwarfsTheOperands) {
  const auto [A, B] = diagonal_times_scattered_row(Index{1} << 24);
  SpgemmStats stats;
  const CsrMatrix<double> C = SpgemmRegistry::instance().get("auto").multiply(A, B, &stats);
  const CsrMatrix<double> reference = test::textbook_gustavson(A, B);
  EXPECT_EQ(C.col, reference.col);
  EXPECT_EQ(C.val, reference.val);
  EXPECT_EQ(stats.choice.rfind("gustavson", 0), std::string::npos) << stats.choice;
  EXPECT_NE(stats.choice.find("16 times the operands"), std::string::npos) << stats.choice;
}

// Gustavson allocates its accumulator on every thread: B of 2^22 columns (48 MiB of accumulator each, under
// the 64 MiB limit) stays with gustavson on one thread, and leaves it on four, whose accumulators together
// are 192 MiB and many times the operands.
TEST(SpgemmAuto, CountsTheAccumulatorOfEveryThread) {
  const auto [A, B] = diagonal_times_scattered_row(Index{1} << 22);
  const int threads = omp_get_max_threads();
  const auto choice_on = [&](int team) {
    omp_set_num_threads(team);
    SpgemmStats stats;
    const CsrMatrix<double> C = SpgemmRegistry::instance().get("auto").multiply(A, B, &stats);
    EXPECT_EQ(C.val, test::textbook_gustavson(A, B).val);
    return stats.choice;
  };
  const std::string one = choice_on(1), four = choice_on(4);
  omp_set_num_threads(threads);
  EXPECT_EQ(one.rfind("gustavson", 0), 0u) << one;
  EXPECT_EQ(four.rfind("gustavson", 0), std::string::npos) << four;
  EXPECT_NE(four.find("the threads' accumulators are over 64 MiB"), std::string::npos) << four;
}

}  // namespace
}  // namespace amgsolve

#include "common/hash.hpp"
#include "spgemm/streamed_output.hpp"

namespace amgsolve {
namespace {

// Rows written through StreamedArray, streamed or not, in writes of 1..most entries, starting at every
// alignment within a cache line, land exactly in place: entries in order, nothing outside the rows
// touched (the gaps and neighbours may belong to other threads). Rows follow each other directly (the
// staging goes on across them) or after a gap (what is staged is written first), and some are written
// directly between streamed ones; finish() ends it all.
template <class T>
void check_streamed_rows_land_in_place() {
  constexpr std::size_t kMost = 128, kGuard = 40;  // magnus writes up to 128 entries at once
  const std::vector<std::size_t> lengths = {0, 1, 15, 1023, 1024, 1100, 5000, 3, 7, 0, 2000};
  for (const bool streaming : {false, true})
    for (std::size_t start = 0; start < 2 * StreamedArray<T>::kPerLine; ++start)
      for (const std::size_t gap_every : {std::size_t{0}, std::size_t{2}, std::size_t{3}}) {
        std::vector<T> out(kGuard + start + 20000, T(-7)), expected = out;
        StreamedArray<T> rows(streaming, kMost);
        std::size_t position = kGuard + start;
        for (std::size_t r = 0; r < lengths.size(); ++r) {
          if (gap_every > 0 && r % gap_every == 1) position += 1 + r;  // not continuing the previous row
          rows.start(out.data() + position, r % 5 != 4);  // some rows written directly
          for (std::size_t written = 0, w = 0; written < lengths[r]; ++w) {
            const std::size_t count = std::min<std::size_t>(lengths[r] - written, 1 + seeded_hash(r, w) % kMost);
            T* room = rows.room();
            for (std::size_t t = 0; t < count; ++t)
              room[t] = expected[position + written + t] = static_cast<T>(r * 10000 + written + t);
            rows.commit(count);
            written += count;
          }
          position += lengths[r];
        }
        rows.finish();
        ASSERT_TRUE(out == expected) << (streaming ? "streamed" : "direct") << ", start " << start << ", gap every "
                                     << gap_every;
      }
}

TEST(StreamedOutput, RowsLandInPlaceAtEveryAlignment) {
  check_streamed_rows_land_in_place<std::int32_t>();
  check_streamed_rows_land_in_place<double>();
}

}  // namespace
}  // namespace amgsolve

#include "bench/median.hpp"

namespace amgsolve {
namespace {

// The benchmarks' median (spgemm-bench, mpi-spgemm-bench, mpi-spmv-bench): the middle run of an odd count,
// the mean of the two middle runs of an even one, whatever the order the runs came in; 0 for none.
TEST(BenchMedian, IsTheMiddleRunOrTheMeanOfTheTwoMiddleRuns) {
  EXPECT_EQ(median({}), 0.0);
  EXPECT_EQ(median({7.0}), 7.0);
  EXPECT_EQ(median({3.0, 1.0, 2.0}), 2.0);
  EXPECT_EQ(median({4.0, 1.0, 3.0, 2.0}), 2.5);
  EXPECT_EQ(median({9.0, 1.0}), 5.0);
  // Against the count of runs on either side: as many at or below as at or above.
  for (std::size_t n = 1; n <= 12; ++n) {
    std::vector<double> runs(n);
    for (std::size_t i = 0; i < n; ++i) runs[i] = static_cast<double>(seeded_hash(17, i) % 1000);
    const double m = median(runs);
    const auto below = std::count_if(runs.begin(), runs.end(), [&](double r) { return r < m; });
    const auto above = std::count_if(runs.begin(), runs.end(), [&](double r) { return r > m; });
    EXPECT_LE(below, static_cast<std::ptrdiff_t>(n / 2)) << n;
    EXPECT_LE(above, static_cast<std::ptrdiff_t>(n / 2)) << n;
    EXPECT_GE(m, *std::min_element(runs.begin(), runs.end()));
    EXPECT_LE(m, *std::max_element(runs.begin(), runs.end()));
  }
}

}  // namespace
}  // namespace amgsolve
