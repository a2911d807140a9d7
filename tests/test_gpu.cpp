// GPU kernels against their CPU references. Every test skips, saying why, without a CUDA device; the
// checks that need no device (a clear error instead of a crash) run everywhere.
#include "common/device.hpp"
#include "problems/poisson.hpp"
#include "solver/gpu_spmv.hpp"
#include "spgemm/comparison.hpp"
#include "spgemm/registry.hpp"
#include "test_support.hpp"

namespace amgsolve {
namespace {

TEST(Gpu, DeviceQueryReportsADeviceOrWhyNot) {
  const GpuStatus status = gpu_status();
  if (!status.usable()) {
    EXPECT_FALSE(status.unavailable_reason.empty());
    GTEST_SKIP() << "no GPU: " << status.unavailable_reason;
  }
  EXPECT_TRUE(status.built_with_cuda);
  EXPECT_GT(status.device_count, 0);
  EXPECT_FALSE(status.name.empty());
}

// Matrices with empty rows, one full row, a Poisson operator; x random.
std::vector<CsrMatrix<double>> spmv_inputs() {
  PoissonParams p;
  p.size = {20, 19, 18};
  CsrMatrix<double> irregular = test::random_sparse(333, 333, 0.02, 5, {0, 100});
  std::vector<Triplet<double>> t;
  for (Index i = 0; i < irregular.rows; ++i)
    for (Offset k = irregular.row_begin(i); k < irregular.row_end(i); ++k) t.push_back({i, irregular.col[k], irregular.val[k]});
  for (Index j = 0; j < 333; ++j) t.push_back({7, j, 0.5});
  return {poisson_matrix(p), csr_from_triplets(333, 333, t), CsrMatrix<double>(3, 3)};
}

template <class Value>
void expect_gpu_matches_cpu(const CsrMatrix<Value>& A, double tolerance) {
  Vector<Value> x(static_cast<std::size_t>(A.cols)), y_cpu, y_gpu;
  for (Index i = 0; i < A.cols; ++i) x[i] = static_cast<Value>(seeded_uniform(3, i) - 0.5);
  const EllpackR<Value> E = ellpack_r_from_csr(A);
  spmv(E, x, y_cpu);
  gpu_spmv(E, x, y_gpu);
  ASSERT_EQ(y_gpu.size(), y_cpu.size());
  for (std::size_t i = 0; i < y_cpu.size(); ++i) EXPECT_NEAR(y_gpu[i], y_cpu[i], tolerance * (1 + std::abs(y_cpu[i])));
  const Pjds<Value> P = pjds_from_csr(A);
  Vector<Value> xp;
  permute_to(P, x, xp);
  spmv(P, xp, y_cpu);
  gpu_spmv(P, xp, y_gpu);
  ASSERT_EQ(y_gpu.size(), y_cpu.size());
  for (std::size_t i = 0; i < y_cpu.size(); ++i) EXPECT_NEAR(y_gpu[i], y_cpu[i], tolerance * (1 + std::abs(y_cpu[i])));
}

TEST(Gpu, EllpackRAndPjdsSpmvMatchTheCpuReference) {
  const GpuStatus status = gpu_status();
  if (!status.usable()) {
    const CsrMatrix<double> A = spmv_inputs().front();
    Vector<double> x(static_cast<std::size_t>(A.cols), 1.0), y;
    EXPECT_THROW(gpu_spmv(ellpack_r_from_csr(A), x, y), Error) << "without a device the kernels must say why";
    GTEST_SKIP() << "no GPU: " << status.unavailable_reason;
  }
  for (const CsrMatrix<double>& A : spmv_inputs()) {
    expect_gpu_matches_cpu(A, 1e-13);
    expect_gpu_matches_cpu(cast_values<float>(A), 1e-5);
  }
}

// ---- GPU SpGEMM backends against the CPU reference (gustavson)

// A 50x1200 matrix with an empty row and one row of 1100 nonzeros among rows of about 24: longer than
// 32^2, so rmerge (sub-warps of W = 32) splits A twice, i.e. merges in three rounds.
CsrMatrix<double> matrix_with_a_long_row() {
  const CsrMatrix<double> sparse = test::random_sparse(50, 1200, 0.02, 5, {3, 17});
  std::vector<Triplet<double>> t;
  for (Index i = 0; i < sparse.rows; ++i)
    for (Offset k = sparse.row_begin(i); k < sparse.row_end(i); ++k) t.push_back({i, sparse.col[k], sparse.val[k]});
  for (Index j = 0; j < 1100; ++j) t.push_back({17, j, 2.0 * seeded_uniform(7, j) - 1.0});
  return csr_from_triplets(50, 1200, std::move(t));
}

// A 40x300 matrix with an empty row, rows of about 9 and two dense rows (row 5 full, row 6 every fifth
// column); times a 300x5000 matrix with rows of about 50 (the pair built in spgemm_inputs). Rows of C then
// have 129..512 products (bhsparse's larger bitonic ESC bins) or more: 500..770 distinct columns (bhsparse's
// long rows outgrow their first 256 entries of shared memory), about 2500 (row 6) and 4750 (row 5: 15000
// products), which outgrow shared memory and are merged in global memory over several 2x re-allocations.
CsrMatrix<double> matrix_with_dense_rows() {
  const CsrMatrix<double> sparse = test::random_sparse(40, 300, 0.03, 8, {2});
  std::vector<Triplet<double>> t;
  for (Index i = 0; i < sparse.rows; ++i)
    for (Offset k = sparse.row_begin(i); k < sparse.row_end(i); ++k) t.push_back({i, sparse.col[k], sparse.val[k]});
  for (Index j = 0; j < 300; ++j) t.push_back({5, j, 2.0 * seeded_uniform(13, j) - 1.0});
  for (Index j = 0; j < 300; j += 5) t.push_back({6, j, 2.0 * seeded_uniform(14, j) - 1.0});
  return csr_from_triplets(40, 300, std::move(t));
}

// The products every GPU backend must reproduce: rectangular with empty rows and columns (in both operands
// and in the result), a product with more than one thread block of work, the 7-point Poisson A*A, a row of
// A far longer than a warp, output rows of thousands of products and columns, 1x1, 0x0.
std::vector<std::pair<CsrMatrix<double>, CsrMatrix<double>>> spgemm_inputs() {
  PoissonParams p;
  p.size = {12, 11, 10};
  const CsrMatrix<double> poisson = poisson_matrix(p);
  return {
      {test::random_sparse(70, 45, 0.08, 1, {0, 13, 69}, {2, 44}),
       test::random_sparse(45, 90, 0.06, 2, {7, 8}, {0, 89})},
      {test::random_sparse(900, 700, 0.01, 3, {5}), test::random_sparse(700, 800, 0.01, 4, {}, {9})},
      {poisson, poisson},
      {matrix_with_a_long_row(), test::random_sparse(1200, 70, 0.05, 6, {11}, {4})},
      {matrix_with_dense_rows(), test::random_sparse(300, 5000, 0.01, 11)},
      {csr_from_triplets<double>(1, 1, {{0, 0, 3.0}}), csr_from_triplets<double>(1, 1, {{0, 0, -2.0}})},
      {CsrMatrix<double>(0, 0), CsrMatrix<double>(0, 0)},
  };
}

// Same pattern as gustavson (row_ptr and col equal) and values within the comparison's tolerance
// (1e-12 relative in double, 1e-5 in float), with the statistics every backend must fill.
template <class Value>
void expect_gpu_spgemm_matches_cpu(const SpgemmBackend& gpu, const CsrMatrix<Value>& A, const CsrMatrix<Value>& B) {
  const CsrMatrix<Value> reference = SpgemmRegistry::instance().get("gustavson").multiply(A, B);
  SpgemmStats stats;
  const CsrMatrix<Value> C = gpu.multiply(A, B, &stats);
  ASSERT_TRUE(is_valid_csr(C));
  EXPECT_EQ(C.rows, reference.rows);
  EXPECT_EQ(C.cols, reference.cols);
  EXPECT_EQ(C.row_ptr, reference.row_ptr);
  EXPECT_EQ(C.col, reference.col);
  double difference = 0;
  EXPECT_TRUE(spgemm_results_agree(C, reference, spgemm_agreement_tolerance<Value>(), difference))
      << "max relative difference " << difference;
  EXPECT_EQ(stats.nnz, C.nnz());
  EXPECT_EQ(stats.multiplications, spgemm_multiplications(A, B));
  EXPECT_GE(stats.symbolic_seconds, 0.0);
  EXPECT_GE(stats.numeric_seconds, 0.0);
}

class GpuSpgemm : public ::testing::TestWithParam<std::string> {};

TEST_P(GpuSpgemm, MatchesGustavsonInDoubleAndFloat) {
  const SpgemmBackend* gpu = SpgemmRegistry::instance().find(GetParam());
  if (!gpu) GTEST_SKIP() << "backend " << GetParam() << " not built (configure with -DAMGSOLVE_CUDA=ON)";
  if (!gpu->available()) GTEST_SKIP() << GetParam() << " unavailable: " << gpu->unavailable_reason();
  EXPECT_EQ(gpu->runs_on(), BackendKind::cuda);
  for (const auto& [A, B] : spgemm_inputs()) {
    SCOPED_TRACE(std::to_string(A.rows) + "x" + std::to_string(A.cols) + " times " + std::to_string(B.rows) + "x" +
                 std::to_string(B.cols));
    expect_gpu_spgemm_matches_cpu(*gpu, A, B);
    expect_gpu_spgemm_matches_cpu(*gpu, cast_values<float>(A), cast_values<float>(B));
  }
}

INSTANTIATE_TEST_SUITE_P(GpuBackends, GpuSpgemm, ::testing::Values("cusparse", "esc", "rmerge", "bhsparse"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace amgsolve
