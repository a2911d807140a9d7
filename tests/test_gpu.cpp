// GPU kernels against their CPU references. Every test skips, saying why, without a CUDA device; the
// checks that need no device (a clear error instead of a crash) run everywhere.
#include "common/device.hpp"
#include "problems/poisson.hpp"
#include "solver/gpu_spmv.hpp"
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

}  // namespace
}  // namespace amgsolve
