// GPU kernels against their CPU references: every kernel of the cuda backend against the cpu backend's loop
// on the same input, and the GPU SpGEMM backends against gustavson. Every test skips, saying why, without a
// CUDA device; the checks that need no device (a clear error instead of a crash) run everywhere.
#include <limits>

#include "backend/cpu/cpu_backend.hpp"
#include "common/device.hpp"
#include "problems/poisson.hpp"
#include "spgemm/comparison.hpp"
#include "spgemm/registry.hpp"
#include "test_support.hpp"
#include "textbook_gustavson.hpp"
#ifdef AMGSOLVE_WITH_CUDA
#include <dlfcn.h>

#include "backend/cuda/cuda_backend.hpp"
#include "spgemm/cuda/rmerge.hpp"
#endif

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

#ifdef AMGSOLVE_WITH_CUDA
// A machine without the NVIDIA driver is told so, not that its (absent) driver is too old.
TEST(Gpu, MissingDriverIsNamedAsMissing) {
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (driver) {
    dlclose(driver);
    GTEST_SKIP() << "an NVIDIA driver is installed here";
  }
  const GpuStatus status = gpu_status();
  EXPECT_FALSE(status.usable());
  EXPECT_NE(status.unavailable_reason.find("no NVIDIA GPU driver was found"), std::string::npos)
      << status.unavailable_reason;
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

// ---- every kernel of the cuda backend against the cpu backend's loop, on the same input

template <class V>
Vector<V> random_vector(std::size_t n, std::uint64_t seed) {
  Vector<V> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<V>(seeded_uniform(seed, i) - 0.5);
  return v;
}

// |gpu - cpu| <= tolerance (1 + |cpu|) entry by entry.
template <class V>
void expect_close(const CudaBackend& cuda, const DeviceVector<V>& on_device, const Vector<V>& reference,
                  double tolerance) {
  Vector<V> back;
  cuda.download(on_device, back);
  ASSERT_EQ(back.size(), reference.size());
  for (std::size_t i = 0; i < back.size(); ++i)
    EXPECT_NEAR(double(back[i]), double(reference[i]), tolerance * (1 + std::abs(double(reference[i])))) << i;
}

// Every product kernel (y = A x, y += A x, r = b - A x, q = A p with p^T q, a Jacobi sweep, Chebyshev steps
// with and without the old direction) in every format.
template <class V>
void expect_products_match(const CudaBackend& cuda, const CsrMatrix<V>& A, double tolerance) {
  const CpuBackend cpu;
  const auto host = std::make_shared<const CsrMatrix<V>>(A);
  const auto on_cpu = cpu.matrix(host, SpmvFormat::automatic);  // sliced ELLPACK where it pays: the same bits
  const CpuBackend::Matrix<V>& C = *on_cpu;
  const auto rows = static_cast<std::size_t>(A.rows), cols = static_cast<std::size_t>(A.cols);
  const Vector<V> x = random_vector<V>(cols, 1), b = random_vector<V>(rows, 2), dinv = random_vector<V>(rows, 3),
                  d0 = random_vector<V>(rows, 4);
  for (SpmvFormat format : {SpmvFormat::csr, SpmvFormat::ellpack_r, SpmvFormat::pjds}) {
    SCOPED_TRACE(format_name(format));
    const auto M = cuda.matrix(host, format);
    EXPECT_EQ(M->rows, A.rows);
    EXPECT_GT(cuda.bytes(*M), 0u);
    const DeviceVector<V> x_d = cuda.upload(x), b_d = cuda.upload(b), dinv_d = cuda.upload(dinv);
    Vector<V> y, r, q, next, d;
    // The outputs start as NaN, not as fresh (often zeroed) device memory: a kernel that reads its output
    // before writing it (cuSPARSE with beta = 0, a fused epilogue) shows here.
    const Vector<V> nans(rows, std::numeric_limits<V>::quiet_NaN());
    DeviceVector<V> y_d = cuda.upload(nans), r_d = cuda.upload(nans), q_d = cuda.upload(nans),
                    next_d = cuda.upload(nans), d_d;

    cpu.spmv(C, x, y);
    cuda.spmv(*M, x_d, y_d);
    expect_close(cuda, y_d, y, tolerance);
    cpu.spmv_add(C, x, y);
    cuda.spmv_add(*M, x_d, y_d);
    expect_close(cuda, y_d, y, tolerance);
    if (A.rows != A.cols) continue;  // the rest are square operators' passes

    cpu.residual(C, x, b, r);
    cuda.residual(*M, x_d, b_d, r_d);
    expect_close(cuda, r_d, r, tolerance);
    const double pq = cpu.spmv_dot(C, x, q);
    EXPECT_NEAR(cuda.spmv_dot(*M, x_d, q_d), pq, tolerance * (1 + std::abs(pq)));
    expect_close(cuda, q_d, q, tolerance);
    cpu.jacobi_sweep(C, dinv, b, x, next);
    cuda.jacobi_sweep(*M, dinv_d, b_d, x_d, next_d);
    expect_close(cuda, next_d, next, tolerance);
    for (const V a : {V(0), V(0.75)}) {
      d = d0;
      d_d = cuda.upload(d0);
      cpu.chebyshev_step(C, dinv, b, a, V(1.5), d, x, next);
      cuda.chebyshev_step(*M, dinv_d, b_d, a, V(1.5), d_d, x_d, next_d);
      expect_close(cuda, next_d, next, tolerance);
      expect_close(cuda, d_d, d, tolerance);
    }
  }
}

TEST(CudaBackend, ProductKernelsMatchTheCpuBackendInEveryFormat) {
  const GpuStatus status = gpu_status();
  if (!status.usable()) {
    EXPECT_THROW(CudaBackend(), Error) << "without a device the backend must say why";
    GTEST_SKIP() << "no GPU: " << status.unavailable_reason;
  }
  const CudaBackend cuda;
  std::vector<CsrMatrix<double>> inputs = spmv_inputs();
  inputs.push_back(test::random_sparse(300, 170, 0.03, 12, {0, 299}, {5}));  // rectangular, as P and R are
  for (const CsrMatrix<double>& A : inputs) {
    SCOPED_TRACE(std::to_string(A.rows) + "x" + std::to_string(A.cols));
    expect_products_match(cuda, A, 1e-13);
    expect_products_match(cuda, cast_values<float>(A), 1e-5);
  }
}

// Vector kernels and reductions: empty, one entry, under one block, and many blocks (the reductions' last-
// block sum); deterministic: the same input gives the same bits twice.
TEST(CudaBackend, VectorKernelsAndReductionsMatchTheCpuBackend) {
  const GpuStatus status = gpu_status();
  if (!status.usable()) GTEST_SKIP() << "no GPU: " << status.unavailable_reason;
  const CpuBackend cpu;
  const CudaBackend cuda;
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{1000}, std::size_t{700001}}) {
    SCOPED_TRACE(n);
    const Vector<double> a = random_vector<double>(n, 5), b = random_vector<double>(n, 6);
    const DeviceVector<double> a_d = cuda.upload(a), b_d = cuda.upload(b);
    const double dot = cpu.dot(a, b);
    EXPECT_NEAR(cuda.dot(a_d, b_d), dot, 1e-12 * (1 + std::abs(dot)) * std::sqrt(double(n) + 1));
    EXPECT_EQ(cuda.dot(a_d, b_d), cuda.dot(a_d, b_d)) << "reductions repeat bit for bit";
    EXPECT_NEAR(cuda.norm2(a_d), cpu.norm2(a), 1e-12 * (1 + cpu.norm2(a)));

    Vector<double> x = a, p = b;
    DeviceVector<double> x_d = cuda.upload(a), p_d = cuda.upload(b), z_d;
    cpu.add(b, x);
    cuda.add(b_d, x_d);
    expect_close(cuda, x_d, x, 1e-15);
    cpu.xpby(a, 0.5, p);
    cuda.xpby(a_d, 0.5, p_d);
    expect_close(cuda, p_d, p, 1e-15);
    Vector<double> r = b, x2 = a;
    DeviceVector<double> r_d = cuda.upload(b), x2_d = cuda.upload(a);
    const double rr = cpu.cg_update(0.25, a, b, x2, r);
    EXPECT_NEAR(cuda.cg_update(0.25, a_d, b_d, x2_d, r_d), rr, 1e-12 * (1 + rr));
    expect_close(cuda, x2_d, x2, 1e-15);
    expect_close(cuda, r_d, r, 1e-15);

    Vector<float> f;
    DeviceVector<float> f_d;
    cpu.convert(a, f);
    cuda.convert(a_d, f_d);
    expect_close(cuda, f_d, f, 0.0);
    cuda.copy(a_d, z_d);
    expect_close(cuda, z_d, a, 0.0);
    cuda.zero(z_d, static_cast<Index>(n));
    expect_close(cuda, z_d, Vector<double>(n, 0.0), 0.0);

    Vector<double> xj(n), dc(n), xc(n);
    DeviceVector<double> xj_d(n), dc_d(n), xc_d(n);
    cpu.jacobi_from_zero(a, b, xj);
    cuda.jacobi_from_zero(a_d, b_d, xj_d);
    expect_close(cuda, xj_d, xj, 1e-15);
    cpu.chebyshev_from_zero(a, b, 0.75, dc, xc);
    cuda.chebyshev_from_zero(a_d, b_d, 0.75, dc_d, xc_d);
    expect_close(cuda, dc_d, dc, 1e-15);
    expect_close(cuda, xc_d, xc, 1e-15);
  }
  const TransferCounts moved = cuda.transfers();
  EXPECT_GT(moved.to_device, 0u);
  EXPECT_GT(moved.to_host, 0u);
}

// The coarse solve: the dense inverse on the device (up to kMaxDenseCoarseRows rows) and the host's LDL^T
// above, both equal to the host solve; for a nonsingular matrix and for a singular one (the pseudo-inverse).
TEST(CudaBackend, CoarseSolveMatchesTheHostFactorisation) {
  const GpuStatus status = gpu_status();
  if (!status.usable()) GTEST_SKIP() << "no GPU: " << status.unavailable_reason;
  const CudaBackend cuda;
  for (const bool singular : {false, true})
    for (const Index n : {Index{2}, Index{500}, CudaBackend::kMaxDenseCoarseRows + 700}) {
      SCOPED_TRACE(std::to_string(n) + (singular ? " singular" : ""));
      PoissonParams p;
      p.stencil = Stencil::p5;
      p.size = {n, 1};
      p.boundary = singular ? Boundary::neumann : Boundary::dirichlet;
      const CsrMatrix<double> A = poisson_matrix(p);
      const Vector<double> nullspace = singular ? Vector<double>(static_cast<std::size_t>(n), 1.0) : Vector<double>{};
      const auto factor = std::make_shared<const SparseLdlt<double>>(A, nullspace);
      const Vector<double> b = random_vector<double>(static_cast<std::size_t>(n), 8);
      Vector<double> x;
      factor->solve(b, x);
      const CudaBackend::CoarseSolve<double> coarse(cuda, A, factor, nullspace);
      DeviceVector<double> x_d;
      coarse.solve(cuda.upload(b), x_d);
      expect_close(cuda, x_d, x, 1e-9);
    }
}
#endif

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
  const CsrMatrix<Value> reference = test::textbook_gustavson(A, B);
  SpgemmStats stats;
  const CsrMatrix<Value> C = gpu.multiply(A, B, &stats);
  ASSERT_TRUE(is_valid_csr(C));
  EXPECT_EQ(C.rows, reference.rows);
  EXPECT_EQ(C.cols, reference.cols);
  EXPECT_EQ(C.row_ptr, reference.row_ptr);
  EXPECT_EQ(C.col, reference.col);
  double difference = 0;
  EXPECT_TRUE(spgemm_results_agree(C, reference, product_magnitudes(A, B, reference),
                                   spgemm_agreement_tolerance<Value>(), difference))
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

// More rows than 65,535 blocks of 256 threads cover (CUDA's limit on a grid's y and z, and the old limit
// on x): 2^24 + 12,345 rows, each of A with its diagonal and one cyclic neighbour, so A*A has three
// entries a row. Every kernel that sizes its grid from the row count must stride over the rest.
CsrMatrix<double> cyclic_bidiagonal(Index n) {
  CsrMatrix<double> A(n, n);
  A.col.resize(2 * static_cast<std::size_t>(n));
  A.val.resize(A.col.size());
  for (Index i = 0; i < n; ++i) {
    const Index next = i + 1 == n ? 0 : i + 1;
    const std::size_t at = 2 * static_cast<std::size_t>(i);
    A.row_ptr[static_cast<std::size_t>(i) + 1] = static_cast<Offset>(at + 2);
    A.col[at] = std::min(i, next);  // sorted columns (the last row's neighbour is column 0)
    A.col[at + 1] = std::max(i, next);
    A.val[at] = i < next ? 1.0 + i % 7 : 0.5;
    A.val[at + 1] = i < next ? 0.5 : 1.0 + i % 7;
  }
  return A;
}

TEST_P(GpuSpgemm, GridsBeyond65535BlocksCoverEveryRow) {
  const SpgemmBackend* gpu = SpgemmRegistry::instance().find(GetParam());
  if (!gpu) GTEST_SKIP() << "backend " << GetParam() << " not built (configure with -DAMGSOLVE_CUDA=ON)";
  if (!gpu->available()) GTEST_SKIP() << GetParam() << " unavailable: " << gpu->unavailable_reason();
  const CsrMatrix<double> A = cyclic_bidiagonal((Index{1} << 24) + 12345);
  ASSERT_GT(A.rows / 256, 65535);
  expect_gpu_spgemm_matches_cpu(*gpu, A, A);
}

#ifdef AMGSOLVE_WITH_CUDA
// The registered rmerge splits with sub-warps of W = 16; every other width, W = 32 (full-warp shuffle
// masks) among them, on the same products. W = 2 merges the 1100-entry row in eleven rounds.
TEST(GpuRMerge, EverySubWarpSizeMatchesGustavson) {
  for (const int W : {2, 4, 8, 16, 32}) {
    const auto rmerge = make_rmerge_gpu(W);
    if (!rmerge->available()) GTEST_SKIP() << "rmerge unavailable: " << rmerge->unavailable_reason();
    for (const auto& [A, B] : spgemm_inputs()) {
      SCOPED_TRACE("W = " + std::to_string(W) + ", " + std::to_string(A.rows) + "x" + std::to_string(A.cols) +
                   " times " + std::to_string(B.rows) + "x" + std::to_string(B.cols));
      expect_gpu_spgemm_matches_cpu(*rmerge, A, B);
      expect_gpu_spgemm_matches_cpu(*rmerge, cast_values<float>(A), cast_values<float>(B));
    }
  }
}

TEST(GpuRMerge, ASubWarpSizeThatIsNoPowerOfTwoUpTo32IsRefused) {
  for (const int W : {0, 1, 3, 12, 64}) EXPECT_THROW(make_rmerge_gpu(W), Error) << "W = " << W;
}
#endif

INSTANTIATE_TEST_SUITE_P(GpuBackends, GpuSpgemm, ::testing::Values("cusparse", "esc", "rmerge", "bhsparse"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace amgsolve
