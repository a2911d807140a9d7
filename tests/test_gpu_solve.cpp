// The algorithms written once (PCG, the stationary iteration, the V-cycle, the smoothers, mixed precision) on
// the cuda backend against the same algorithms on the cpu backend, with the same hierarchy.
//
// Without a CUDA build or a device every test first checks that asking for the cuda backend fails with an
// amgsolve::Error naming the reason, then skips with that reason.
//
// On a device, for csr (cuSPARSE), ellpack-r and pjds and for double and mixed precision: one V-cycle
// equals the cpu backend's to rounding; PCG and the stationary iteration reach the tolerance within one
// iteration of the cpu backend, with the history and callbacks of their own iterations, on the problem of
// configs/poisson-small.yaml and on an anisotropic one with the Jacobi smoother; the solutions differ from
// the CPU's by no more than two converged residuals allow, 2 tol ||b|| / lambda_min(A).
#include <cmath>
#include <numbers>
#include <tuple>

#include "amg/hierarchy.hpp"
#include "amg/vcycle.hpp"
#include "amgsolve/solver.hpp"
#include "common/device.hpp"
#include "problems/problem.hpp"
#include "test_support.hpp"
#ifdef AMGSOLVE_WITH_CUDA
#include "backend/cuda/cuda_backend.hpp"
#endif

namespace amgsolve {
namespace {

constexpr SpmvFormat kFormats[] = {SpmvFormat::csr, SpmvFormat::ellpack_r, SpmvFormat::pjds};

// ---- problems

struct GridProblem {
  std::shared_ptr<const CsrMatrix<double>> A;
  Vector<double> b;
  double lambda_min = 0;  // smallest eigenvalue of A (constant coefficients: known in closed form)
};

// -div(diag(eps) grad u) on a 7-point grid with k = 1: A = sum_d eps_d T_d (T_d the 1D [-1 2 -1] in
// direction d), so lambda_min = sum_d eps_d 2 (1 - cos(pi / (n_d + 1))).
GridProblem grid_problem(const PoissonParams& p) {
  ProblemSpec spec;
  spec.type = ProblemType::poisson;
  spec.poisson = p;
  LinearProblem problem = make_problem(spec);
  GridProblem g{problem.A, std::move(problem.b), 0.0};
  // Neumann (1D eigenvalues 2 (1 - cos(pi k / n_d)), k = 0..n_d - 1): the smallest nonzero eigenvalue,
  // the smallest of the directions' first, which bounds the difference of two solutions of zero mean.
  const bool neumann = p.boundary == Boundary::neumann;
  g.lambda_min = neumann ? INFINITY : 0.0;
  for (std::size_t d = 0; d < p.size.size(); ++d) {
    const double eps = p.anisotropy.empty() ? 1.0 : p.anisotropy[d];
    const double n = static_cast<double>(p.size[d] + (neumann ? 0 : 1));
    const double first = eps * 2.0 * (1.0 - std::cos(std::numbers::pi / n));
    g.lambda_min = neumann ? std::min(g.lambda_min, first) : g.lambda_min + first;
  }
  return g;
}

// configs/poisson-small.yaml: 7pt, 32^3, manufactured right-hand side; coarse_size 200; pcg to 1e-8.
PoissonParams poisson_small() {
  PoissonParams p;
  p.size = {32, 32, 32};
  p.rhs = PoissonRhs::manufactured;
  return p;
}

// Anisotropic diffusion (eps_z = 1e-3, as configs/poisson-aniso.yaml, smaller and not a power of two) with
// the Jacobi smoother, two sweeps, so that both smoothers are covered.
PoissonParams anisotropic() {
  PoissonParams p;
  p.size = {27, 25, 23};
  p.anisotropy = {1.0, 1.0, 1e-3};
  return p;
}

Parameters parameters(BackendChoice backend, SpmvFormat format, Precision precision, SolverType type,
                       bool jacobi = false) {
  Parameters p;
  p.backend = backend;
  p.amg.coarse_size = jacobi ? 150 : 200;
  if (jacobi) {
    p.amg.smoother.type = SmootherType::jacobi;
    p.amg.smoother.sweeps = 2;
  }
  p.solver.type = type;
  p.solver.tolerance = 1e-8;
  p.solver.max_iterations = 200;
  p.solver.precision = precision;
  p.solver.spmv_format = format;
  return p;
}

double norm(const Vector<double>& v) {
  double s = 0;
  for (double e : v) s += e * e;
  return std::sqrt(s);
}

double relative_residual(const CsrMatrix<double>& A, const Vector<double>& b, const Vector<double>& x) {
  Vector<double> r;
  residual(A, x, b, r);
  return norm(r) / norm(b);
}

// The cuda backend's Solver, or nullptr without a usable device; then asking for it must have failed with
// an amgsolve::Error that names the reason, which `reason` receives for GTEST_SKIP.
std::unique_ptr<Solver> cuda_solver(const GridProblem& problem, const Parameters& params, std::string& reason) {
  const GpuStatus status = gpu_status();
  if (status.usable()) return std::make_unique<Solver>(problem.A, params);
  try {
    Solver unexpected(problem.A, params);
    ADD_FAILURE() << "a cuda Solver was built without a usable device";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(status.unavailable_reason), std::string::npos) << e.what();
  }
  reason = "no GPU: " + status.unavailable_reason;
  return nullptr;
}

using FormatAndPrecision = std::tuple<SpmvFormat, Precision>;

class GpuSolve : public ::testing::TestWithParam<FormatAndPrecision> {
 protected:
  void expect_matches_cpu(const GridProblem& problem, SolverType type, bool jacobi = false) {
    const auto [format, precision] = GetParam();
    std::string reason;
    const auto gpu = cuda_solver(problem, parameters(BackendChoice::cuda, format, precision, type, jacobi), reason);
    if (!gpu) GTEST_SKIP() << reason;
    EXPECT_EQ(gpu->setup().backend, BackendKind::cuda);
    EXPECT_EQ(gpu->setup().spmv_format, format_name(format));
    EXPECT_GT(gpu->setup().backend_bytes, 0u);

    const Solver cpu_solver(problem.A, parameters(BackendChoice::cpu, format, precision, type, jacobi));
    // The device builds the same hierarchy as the host: the same levels.
    ASSERT_EQ(gpu->setup().levels.size(), cpu_solver.setup().levels.size());
    for (std::size_t l = 0; l < cpu_solver.setup().levels.size(); ++l)
      EXPECT_EQ(gpu->setup().levels[l].nnz, cpu_solver.setup().levels[l].nnz) << l;

    Vector<double> x_cpu, x_gpu;
    const SolveResult cpu = cpu_solver.solve(problem.b, x_cpu);
    ASSERT_TRUE(cpu.converged);
    std::vector<std::pair<int, double>> calls;
    const SolveResult result = gpu->solve(problem.b, x_gpu, [&](int k, double r) { calls.emplace_back(k, r); });

    const double tolerance = 1e-8;
    EXPECT_TRUE(result.converged);
    EXPECT_NEAR(result.iterations, cpu.iterations, 1) << "CPU " << cpu.iterations << ", GPU " << result.iterations;
    EXPECT_LE(result.relative_residual, tolerance);
    EXPECT_LE(relative_residual(*problem.A, problem.b, x_gpu), tolerance * (1 + 1e-6));
    ASSERT_EQ(result.history.size(), static_cast<std::size_t>(result.iterations) + 1);
    EXPECT_NEAR(result.history.front(), cpu.history.front(), 1e-12 * cpu.history.front());
    ASSERT_EQ(calls.size(), static_cast<std::size_t>(result.iterations));
    for (std::size_t k = 0; k < calls.size(); ++k) {
      EXPECT_EQ(calls[k].first, static_cast<int>(k) + 1);
      EXPECT_EQ(calls[k].second, result.history[k + 1]);
    }
    // Both residuals are at most tol ||b||, so ||x_gpu - x_cpu|| <= 2 tol ||b|| / lambda_min.
    Vector<double> difference(x_cpu.size());
    for (std::size_t i = 0; i < x_cpu.size(); ++i) difference[i] = x_gpu[i] - x_cpu[i];
    EXPECT_LE(norm(difference), 1.01 * 2 * tolerance * norm(problem.b) / problem.lambda_min);
  }
};

TEST_P(GpuSolve, PcgOnPoissonSmallMatchesTheCpu) { expect_matches_cpu(grid_problem(poisson_small()), SolverType::pcg); }

// A singular system: the nullspace carried through the device setup, the dense pseudo-inverse on the device,
// the projections of the solve.
TEST_P(GpuSolve, PcgOnNeumannPoissonMatchesTheCpu) {
  PoissonParams p = poisson_small();
  p.boundary = Boundary::neumann;
  expect_matches_cpu(grid_problem(p), SolverType::pcg);
}

TEST_P(GpuSolve, StationaryAmgOnPoissonSmallMatchesTheCpu) {
  expect_matches_cpu(grid_problem(poisson_small()), SolverType::amg);
}

TEST_P(GpuSolve, PcgOnAnisotropicDiffusionWithJacobiMatchesTheCpu) {
  expect_matches_cpu(grid_problem(anisotropic()), SolverType::pcg, /*jacobi=*/true);
}

TEST_P(GpuSolve, OneLevelHierarchyIsTheDirectSolve) {
  PoissonParams p;
  p.size = {9, 8, 7};
  const GridProblem problem = grid_problem(p);
  const auto [format, precision] = GetParam();
  Parameters params = parameters(BackendChoice::cuda, format, precision, SolverType::pcg);
  params.amg.coarse_size = 1000;
  std::string reason;
  const auto gpu = cuda_solver(problem, params, reason);
  if (!gpu) GTEST_SKIP() << reason;
  ASSERT_EQ(gpu->setup().levels.size(), 1u);
  Vector<double> x;
  const SolveResult result = gpu->solve(problem.b, x);
  EXPECT_TRUE(result.converged);
  if (precision == Precision::double_precision) {
    EXPECT_EQ(result.iterations, 1) << "the V-cycle is the exact inverse";
  }
}

TEST_P(GpuSolve, ZeroAndNonFiniteRightHandSides) {
  PoissonParams p;
  p.size = {12, 11, 10};
  const GridProblem problem = grid_problem(p);
  const auto [format, precision] = GetParam();
  Parameters params = parameters(BackendChoice::cuda, format, precision, SolverType::pcg);
  params.amg.coarse_size = 100;
  std::string reason;
  const auto gpu = cuda_solver(problem, params, reason);
  if (!gpu) GTEST_SKIP() << reason;
  Vector<double> b(problem.b.size(), 0.0), x(problem.b.size(), 1.0);
  const SolveResult zero = gpu->solve(b, x);
  EXPECT_TRUE(zero.converged);
  EXPECT_EQ(zero.iterations, 0);
  EXPECT_EQ(zero.history, std::vector<double>{0.0});
  EXPECT_EQ(x, Vector<double>(b.size(), 0.0));

  b = problem.b;
  b[7] = NAN;
  EXPECT_THROW(gpu->solve(b, x), NumericalError);
  // The solver is still usable afterwards.
  EXPECT_TRUE(gpu->solve(problem.b, x).converged);
}

std::string test_name(const ::testing::TestParamInfo<FormatAndPrecision>& info) {
  std::string name = format_name(std::get<0>(info.param)) + "_" +
                     (std::get<1>(info.param) == Precision::mixed ? "mixed" : "double");
  for (char& c : name)
    if (c == '-') c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(FormatsAndPrecisions, GpuSolve,
                         ::testing::Combine(::testing::ValuesIn(kFormats),
                                            ::testing::Values(Precision::double_precision, Precision::mixed)),
                         test_name);

#ifdef AMGSOLVE_WITH_CUDA
// One V-cycle (every level's smoothing, restriction, prolongation and the coarse solve) of the hierarchy built
// on the device, in every format, equals the cpu backend's cycle of its own hierarchy, to the rounding of
// other summation orders.
template <class V>
void expect_vcycle_matches(const std::shared_ptr<const CsrMatrix<V>>& A, const AmgParams& params, double tolerance) {
  const CpuBackend cpu;
  const CudaBackend cuda;
  const AmgHierarchy<V> cpu_amg(A, params);
  const Hierarchy<CudaBackend, V> gpu_amg(cuda, cuda.csr(A), params);
  ASSERT_GE(cpu_amg.levels(), 3u);
  ASSERT_EQ(gpu_amg.levels(), cpu_amg.levels());
  const Vcycle<CpuBackend, V> cpu_cycle(cpu, cpu_amg);
  Vector<V> b(static_cast<std::size_t>(A->rows)), x_cpu, x_gpu;
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<V>(seeded_uniform(9, i) - 0.5);
  cpu_cycle.apply(b, x_cpu);
  for (SpmvFormat format : kFormats) {
    SCOPED_TRACE(format_name(format) + (params.smoother.type == SmootherType::jacobi ? " jacobi" : " chebyshev"));
    const Vcycle<CudaBackend, V> gpu_cycle(cuda, gpu_amg, format);
    DeviceVector<V> z;
    gpu_cycle.apply(cuda.upload(b), z);
    cuda.download(z, x_gpu);
    ASSERT_EQ(x_gpu.size(), x_cpu.size());
    double scale = 0, difference = 0;
    for (std::size_t i = 0; i < x_cpu.size(); ++i) {
      scale = std::max(scale, std::abs(double(x_cpu[i])));
      difference = std::max(difference, std::abs(double(x_gpu[i]) - double(x_cpu[i])));
    }
    EXPECT_LE(difference, tolerance * scale);
  }
}

TEST(GpuVcycle, EqualsTheCpuBackendsCycleInEveryFormat) {
  const GpuStatus status = gpu_status();
  if (!status.usable()) GTEST_SKIP() << "no GPU: " << status.unavailable_reason;
  const GridProblem problem = grid_problem(anisotropic());
  for (SmootherType type : {SmootherType::chebyshev, SmootherType::jacobi}) {
    AmgParams params;
    params.coarse_size = 150;
    params.smoother.type = type;
    expect_vcycle_matches<double>(problem.A, params, 1e-9);
    expect_vcycle_matches<float>(std::make_shared<const CsrMatrix<float>>(cast_values<float>(*problem.A)), params, 1e-4);
  }
}
#endif

}  // namespace
}  // namespace amgsolve
