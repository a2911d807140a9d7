// The solve on the GPU (solver/device_solve.hpp) against the CPU solve with the same hierarchy.
//
// Without a device only the first part runs: the plan the device solve uploads (solver/device_solve_plan.hpp:
// operators in their working bases, smoothers as values, the dense coarse inverse) is run as a V-cycle on
// the CPU here and must be AmgHierarchy::apply() in the permuted basis; and constructing a DeviceSolve must
// fail with an amgsolve::Error that says why, after which the device tests skip with that reason.
//
// On a device, for csr (cuSPARSE), ellpack-r and pjds and for double and mixed precision: PCG and the
// stationary iteration reach the tolerance within one iteration of the CPU, with the same history and
// callbacks, on the problem of configs/poisson-small.yaml and on an anisotropic one; the solutions differ
// from the CPU's by no more than two converged residuals allow, 2 tol ||b|| / lambda_min(A).
#include <cmath>
#include <numbers>
#include <tuple>

#include "amg/hierarchy.hpp"
#include "common/device.hpp"
#include "problems/problem.hpp"
#include "solver/device_solve.hpp"
#include "solver/device_solve_plan.hpp"
#include "solver/pcg.hpp"
#include "test_support.hpp"

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
  for (std::size_t d = 0; d < p.size.size(); ++d) {
    const double eps = p.anisotropy.empty() ? 1.0 : p.anisotropy[d];
    g.lambda_min += eps * 2.0 * (1.0 - std::cos(std::numbers::pi / static_cast<double>(p.size[d] + 1)));
  }
  return g;
}

// configs/poisson-small.yaml: problem (7pt, 32^3, manufactured right-hand side), amg (gustavson,
// coarse_size 200, the rest default), solver (pcg, 1e-8, 200 iterations).
PoissonParams poisson_small() {
  PoissonParams p;
  p.stencil = Stencil::p7;
  p.size = {32, 32, 32};
  p.rhs = PoissonRhs::manufactured;
  return p;
}
AmgParams poisson_small_amg() {
  AmgParams a;
  a.spgemm = "gustavson";
  a.coarse_size = 200;
  return a;
}
SolverParams poisson_small_solver(SolverType type, Precision precision) {
  SolverParams s;
  s.type = type;
  s.tolerance = 1e-8;
  s.max_iterations = 200;
  s.precision = precision;
  return s;
}

// Anisotropic diffusion (eps_z = 1e-3, as configs/poisson-aniso.yaml, smaller and not a power of two) with
// the Jacobi smoother, two sweeps, so that both device smoothers are covered.
PoissonParams anisotropic() {
  PoissonParams p;
  p.stencil = Stencil::p7;
  p.size = {27, 25, 23};
  p.anisotropy = {1.0, 1.0, 1e-3};
  return p;
}
AmgParams anisotropic_amg() {
  AmgParams a;
  a.coarse_size = 150;
  a.smoother.type = SmootherType::jacobi;
  a.smoother.sweeps = 2;
  return a;
}

// ---- the hierarchy and the CPU solve, as app/run.cpp builds and runs them

template <class CV>
std::unique_ptr<AmgHierarchy<CV>> hierarchy(const std::shared_ptr<const CsrMatrix<double>>& A, const AmgParams& p) {
  if constexpr (std::is_same_v<CV, double>)
    return std::make_unique<AmgHierarchy<double>>(A, p);
  else
    return std::make_unique<AmgHierarchy<float>>(std::make_shared<const CsrMatrix<float>>(cast_values<float>(*A)), p);
}

template <class CV>
SolveResult cpu_solve(const CsrMatrix<double>& A, const AmgHierarchy<CV>& amg, const Vector<double>& b,
                      Vector<double>& x, const SolverParams& params) {
  Vector<CV> r_cycle, z_cycle;
  const Preconditioner<double> vcycle = [&](const Vector<double>& r, Vector<double>& z) {
    if constexpr (std::is_same_v<CV, double>) {
      amg.apply(r, z);
    } else {
      r_cycle.assign(r.begin(), r.end());
      amg.apply(r_cycle, z_cycle);
      z.assign(z_cycle.begin(), z_cycle.end());
    }
  };
  x.assign(b.size(), 0.0);
  return params.type == SolverType::pcg ? pcg(A, b, x, vcycle, params) : stationary_iteration(A, b, x, vcycle, params);
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

// ---- the plan's V-cycle on the CPU: an independent reading of what the device runs

template <class V>
class CycleFromPlan {
 public:
  explicit CycleFromPlan(const DeviceSolvePlan<V>& plan) : plan_(plan) {}
  Vector<V> apply(const Vector<V>& b) const { return cycle(0, b); }

 private:
  using Level = typename DeviceSolvePlan<V>::Level;

  Vector<V> cycle(std::size_t l, const Vector<V>& b) const {
    if (l == plan_.levels.size()) return coarse(b);
    const Level& level = plan_.levels[l];
    Vector<V> x(b.size(), V(0)), r, coarse_b, correction;
    for (int s = 0; s < plan_.pre_smooth; ++s) smooth(level, b, x, s == 0);
    residual(*level.A, x, b, r);
    spmv(*level.R, r, coarse_b);
    spmv(*level.P, cycle(l + 1, coarse_b), correction);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] += correction[i];
    for (int s = 0; s < plan_.post_smooth; ++s) smooth(level, b, x, false);
    return x;
  }

  // x <- x + D (b - A x) sweeps times (D = omega diag^-1); Chebyshev: d = a d + c D (b - A x), x += d.
  void smooth(const Level& level, const Vector<V>& b, Vector<V>& x, bool x_is_zero) const {
    const SmootherSpec& s = level.smoother;
    const Vector<V>& D = level.smoother_diagonal;
    Vector<V> ax;
    if (s.type == SmootherType::jacobi) {
      for (int sweep = 0; sweep < s.sweeps; ++sweep) {
        if (sweep == 0 && x_is_zero) {
          for (std::size_t i = 0; i < x.size(); ++i) x[i] = D[i] * b[i];
          continue;
        }
        spmv(*level.A, x, ax);
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = x[i] + D[i] * (b[i] - ax[i]);
      }
      return;
    }
    const double theta = 0.5 * (s.upper + s.lower), delta = 0.5 * (s.upper - s.lower), sigma = theta / delta;
    Vector<V> d(x.size(), V(0));
    auto step = [&](V a, V c) {
      spmv(*level.A, x, ax);
      for (std::size_t i = 0; i < x.size(); ++i) {
        d[i] = (a != V(0) ? a * d[i] : V(0)) + c * D[i] * (b[i] - ax[i]);
        x[i] += d[i];
      }
    };
    const V inv_theta = static_cast<V>(1.0 / theta);
    if (x_is_zero)
      for (std::size_t i = 0; i < x.size(); ++i) x[i] = d[i] = inv_theta * D[i] * b[i];
    else
      step(V(0), inv_theta);
    double rho_old = 1.0 / sigma;
    for (int k = 1; k < s.degree; ++k) {
      const double rho_new = 1.0 / (2.0 * sigma - rho_old);
      step(static_cast<V>(rho_new * rho_old), static_cast<V>(2.0 * rho_new / delta));
      rho_old = rho_new;
    }
  }

  Vector<V> coarse(const Vector<V>& b) const {
    Vector<V> x;
    if (plan_.coarse_solver) {
      plan_.coarse_solver->solve(b, x);
      return x;
    }
    const auto n = static_cast<std::size_t>(plan_.coarse_rows);
    x.assign(n, V(0));
    for (std::size_t i = 0; i < n; ++i) {
      double s = 0;
      for (std::size_t j = 0; j < n; ++j) s += plan_.coarse_inverse[i + j * n] * static_cast<double>(b[j]);
      x[i] = static_cast<V>(s);
    }
    return x;
  }

  const DeviceSolvePlan<V>& plan_;
};

template <class V>
Vector<V> to_working_basis(const Array<Index>& permutation, const Vector<V>& v) {
  if (permutation.empty()) return v;
  Vector<V> w(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) w[i] = v[static_cast<std::size_t>(permutation[i])];
  return w;
}

template <class CV>
void expect_plan_reproduces_the_cycle(const std::shared_ptr<const CsrMatrix<double>>& A, const AmgParams& params,
                                      double tolerance) {
  const auto amg = hierarchy<CV>(A, params);
  Vector<CV> b(static_cast<std::size_t>(A->rows)), z;
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<CV>(seeded_uniform(11, i) - 0.3);
  amg->apply(b, z);
  double scale = 0;
  for (CV v : z) scale = std::max(scale, std::abs(static_cast<double>(v)));
  for (SpmvFormat format : kFormats) {
    SCOPED_TRACE(format_name(format) + ", " + std::to_string(amg->levels()) + " levels");
    const DeviceSolvePlan<CV> plan = make_device_solve_plan(*A, *amg, format);
    ASSERT_EQ(plan.levels.size() + 1, amg->levels());
    EXPECT_EQ(plan.permutation.empty(), format != SpmvFormat::pjds);  // the 7-point rows differ in length
    EXPECT_EQ(plan.cycle_uses_fine_matrix, (std::is_same_v<CV, double>));
    EXPECT_EQ(plan.coarse_inverse.size(),
              static_cast<std::size_t>(plan.coarse_rows) * static_cast<std::size_t>(plan.coarse_rows));
    for (const auto& level : plan.levels) {
      EXPECT_TRUE(is_valid_csr(*level.A) && is_valid_csr(*level.P) && is_valid_csr(*level.R));
      const CsrMatrix<CV> P_transposed = transpose(*level.P);
      EXPECT_TRUE(level.R->row_ptr == P_transposed.row_ptr && level.R->col == P_transposed.col &&
                  level.R->val == P_transposed.val)
          << "R' = P'^T";
    }
    const Vector<CV> z_working = CycleFromPlan<CV>(plan).apply(to_working_basis(plan.permutation, b));
    const Vector<CV> z_expected = to_working_basis(plan.permutation, z);
    ASSERT_EQ(z_working.size(), z_expected.size());
    double difference = 0;
    for (std::size_t i = 0; i < z_working.size(); ++i)
      difference = std::max(difference, std::abs(static_cast<double>(z_working[i]) - static_cast<double>(z_expected[i])));
    EXPECT_LE(difference, tolerance * scale);
  }
}

std::shared_ptr<const CsrMatrix<double>> poisson_7pt(std::vector<std::int64_t> size) {
  PoissonParams p;
  p.size = std::move(size);
  return std::make_shared<const CsrMatrix<double>>(poisson_matrix(p));
}

TEST(DeviceSolvePlan, ItsCycleIsTheHierarchysCycleInTheWorkingBasis) {
  const auto A = poisson_7pt({14, 13, 12});
  AmgParams chebyshev;
  chebyshev.coarse_size = 40;
  AmgParams jacobi = chebyshev;
  jacobi.smoother.type = SmootherType::jacobi;
  jacobi.smoother.sweeps = 2;
  jacobi.pre_smooth = jacobi.post_smooth = 2;
  AmgParams no_presmoothing = chebyshev;
  no_presmoothing.pre_smooth = 0;
  for (const AmgParams& params : {chebyshev, jacobi, no_presmoothing}) {
    expect_plan_reproduces_the_cycle<double>(A, params, 1e-11);
    expect_plan_reproduces_the_cycle<float>(A, params, 1e-4);
  }
}

TEST(DeviceSolvePlan, OneLevelIsTheCoarseSolveInTheWorkingBasis) {
  const auto A = poisson_7pt({9, 8, 7});
  AmgParams params;  // coarse_size 1000 > 504 rows: level 0 is the coarsest
  expect_plan_reproduces_the_cycle<double>(A, params, 1e-11);
  expect_plan_reproduces_the_cycle<float>(A, params, 1e-4);
}

TEST(DeviceSolvePlan, PermutedMatrixIsTheConjugatedOne) {
  const CsrMatrix<double> M = test::random_sparse(30, 20, 0.2, 5, {3});
  Array<Index> rows(30), cols(20);
  for (Index i = 0; i < 30; ++i) rows[i] = (7 * i + 3) % 30;
  for (Index j = 0; j < 20; ++j) cols[j] = (3 * j + 1) % 20;
  const CsrMatrix<double> P = permuted(M, rows, cols);
  ASSERT_TRUE(is_valid_csr(P));
  const Eigen::MatrixXd dense = test::to_dense(M), permuted_dense = test::to_dense(P);
  for (Index i = 0; i < 30; ++i)
    for (Index j = 0; j < 20; ++j) EXPECT_EQ(permuted_dense(i, j), dense(rows[i], cols[j]));
  const Array<Index> order = pjds_row_order(M);
  for (Index i = 1; i < 30; ++i) {
    EXPECT_GE(M.row_length(order[i - 1]), M.row_length(order[i]));
    if (M.row_length(order[i - 1]) == M.row_length(order[i])) {
      EXPECT_LT(order[i - 1], order[i]) << "stable";
    }
  }
}

// ---- the device

// The device solve, or nullptr when there is no usable device; then constructing it must have failed with
// an amgsolve::Error that names the reason, which `reason` receives for GTEST_SKIP.
template <class CV>
std::unique_ptr<DeviceSolve<CV>> device_solve(const CsrMatrix<double>& A, const AmgHierarchy<CV>& amg,
                                              SpmvFormat format, std::string& reason) {
  const GpuStatus status = gpu_status();
  if (status.usable()) return std::make_unique<DeviceSolve<CV>>(A, amg, format);
  try {
    DeviceSolve<CV> unexpected(A, amg, format);
    ADD_FAILURE() << "DeviceSolve was constructed without a usable device";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(status.unavailable_reason), std::string::npos) << e.what();
  }
  reason = "no GPU: " + status.unavailable_reason;
  return nullptr;
}

using FormatAndPrecision = std::tuple<SpmvFormat, Precision>;

class GpuSolve : public ::testing::TestWithParam<FormatAndPrecision> {
 protected:
  template <class CV>
  void expect_matches_cpu(const GridProblem& problem, const AmgParams& amg_params, SolverType type) {
    const auto [format, precision] = GetParam();
    const auto amg = hierarchy<CV>(problem.A, amg_params);
    std::string reason;
    const auto gpu = device_solve<CV>(*problem.A, *amg, format, reason);
    if (!gpu) GTEST_SKIP() << reason;
    EXPECT_EQ(gpu->format(), format);
    EXPECT_GT(gpu->device_bytes(), 0u);

    const SolverParams params = poisson_small_solver(type, precision);
    Vector<double> x_cpu, x_gpu;
    const SolveResult cpu = cpu_solve(*problem.A, *amg, problem.b, x_cpu, params);
    ASSERT_TRUE(cpu.converged);
    std::vector<std::pair<int, double>> calls;
    const SolveResult result = gpu->solve(problem.b, x_gpu, params, [&](int k, double r) { calls.emplace_back(k, r); });

    EXPECT_TRUE(result.converged);
    EXPECT_NEAR(result.iterations, cpu.iterations, 1) << "CPU " << cpu.iterations << ", GPU " << result.iterations;
    EXPECT_LE(result.relative_residual, params.tolerance);
    EXPECT_LE(relative_residual(*problem.A, problem.b, x_gpu), params.tolerance * (1 + 1e-6));
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
    EXPECT_LE(norm(difference), 1.01 * 2 * params.tolerance * norm(problem.b) / problem.lambda_min);

    // Again from the converged solution: nothing to do, and x comes back as it went in.
    Vector<double> x_again = x_gpu;
    const SolveResult again = gpu->solve(problem.b, x_again, params);
    EXPECT_EQ(again.iterations, 0);
    EXPECT_TRUE(again.converged);
    EXPECT_EQ(x_again, x_gpu);
  }

  template <class Run>
  void in_cycle_precision(Run&& run) {
    if (std::get<1>(GetParam()) == Precision::mixed)
      run(float{});
    else
      run(double{});
  }
};

TEST_P(GpuSolve, PcgOnPoissonSmallMatchesTheCpu) {
  const GridProblem problem = grid_problem(poisson_small());
  in_cycle_precision([&](auto cv) {
    expect_matches_cpu<decltype(cv)>(problem, poisson_small_amg(), SolverType::pcg);
  });
}

TEST_P(GpuSolve, StationaryAmgOnPoissonSmallMatchesTheCpu) {
  const GridProblem problem = grid_problem(poisson_small());
  in_cycle_precision([&](auto cv) {
    expect_matches_cpu<decltype(cv)>(problem, poisson_small_amg(), SolverType::amg);
  });
}

TEST_P(GpuSolve, PcgOnAnisotropicDiffusionWithJacobiMatchesTheCpu) {
  const GridProblem problem = grid_problem(anisotropic());
  in_cycle_precision([&](auto cv) {
    expect_matches_cpu<decltype(cv)>(problem, anisotropic_amg(), SolverType::pcg);
  });
}

TEST_P(GpuSolve, OneLevelHierarchyIsTheDirectSolve) {
  PoissonParams p;
  p.size = {9, 8, 7};
  const GridProblem problem = grid_problem(p);
  in_cycle_precision([&](auto cv) {
    using CV = decltype(cv);
    const auto amg = hierarchy<CV>(problem.A, AmgParams{});
    ASSERT_EQ(amg->levels(), 1u);
    std::string reason;
    const auto gpu = device_solve<CV>(*problem.A, *amg, std::get<0>(GetParam()), reason);
    if (!gpu) GTEST_SKIP() << reason;
    const SolverParams params = poisson_small_solver(SolverType::pcg, std::get<1>(GetParam()));
    Vector<double> x_cpu, x_gpu;
    const SolveResult cpu = cpu_solve(*problem.A, *amg, problem.b, x_cpu, params);
    const SolveResult result = gpu->solve(problem.b, x_gpu, params);
    EXPECT_TRUE(result.converged);
    EXPECT_NEAR(result.iterations, cpu.iterations, 1);
    if constexpr (std::is_same_v<CV, double>) {
      EXPECT_EQ(result.iterations, 1) << "the V-cycle is the exact inverse";
    }
  });
}

TEST_P(GpuSolve, ZeroAndNonFiniteRightHandSides) {
  PoissonParams p;
  p.size = {12, 11, 10};
  const GridProblem problem = grid_problem(p);
  in_cycle_precision([&](auto cv) {
    using CV = decltype(cv);
    AmgParams amg_params;
    amg_params.coarse_size = 100;
    const auto amg = hierarchy<CV>(problem.A, amg_params);
    std::string reason;
    const auto gpu = device_solve<CV>(*problem.A, *amg, std::get<0>(GetParam()), reason);
    if (!gpu) GTEST_SKIP() << reason;
    const SolverParams params = poisson_small_solver(SolverType::pcg, std::get<1>(GetParam()));
    Vector<double> b(problem.b.size(), 0.0), x(problem.b.size(), 1.0);
    const SolveResult zero = gpu->solve(b, x, params);
    EXPECT_TRUE(zero.converged);
    EXPECT_EQ(zero.iterations, 0);
    EXPECT_EQ(zero.history, std::vector<double>{0.0});
    EXPECT_EQ(x, Vector<double>(b.size(), 0.0));

    b = problem.b;
    b[7] = NAN;
    EXPECT_THROW(gpu->solve(b, x, params), NumericalError);
    // The device solve is still usable afterwards.
    const SolveResult after = gpu->solve(problem.b, x, params);
    EXPECT_TRUE(after.converged);

    SolverParams wrong = params;
    wrong.precision = std::is_same_v<CV, float> ? Precision::double_precision : Precision::mixed;
    EXPECT_THROW(gpu->solve(problem.b, x, wrong), Error) << "the precision is fixed by the hierarchy";
  });
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

}  // namespace
}  // namespace amgsolve
