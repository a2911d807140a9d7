#pragma once
// Shared test fixtures: seeded random sparse matrices, dense references, and the shared matrix folder.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <Eigen/SparseCore>
#include <cxxabi.h>
#include <omp.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "amg/hierarchy.hpp"
#include "amg/mis2_aggregation.hpp"
#include "amg/rigid_body_modes.hpp"
#include "amg/vcycle.hpp"
#include "amgsolve/solver.hpp"
#include "backend/cpu/cpu_backend.hpp"
#include "common/error.hpp"
#include "common/hash.hpp"
#include "solver/pcg.hpp"
#include "solver/stationary_iteration.hpp"
#include "sparse/csr.hpp"
#include "sparse/csr_ops.hpp"
#include "eigen_references.hpp"

namespace amgsolve {

// PCG and the stationary iteration on host CSR matrices and vectors (the cpu backend), as the tests call them.
template <class V>
SolveResult pcg(const CsrMatrix<V>& A, const Vector<V>& b, Vector<V>& x,
                const std::type_identity_t<Preconditioner<V>>& M, const SolverParams& params,
                const IterationCallback& on_iteration = {}) {
  return pcg<CpuBackend, V>(CpuBackend{}, CpuMatrix<V>::view(A), b, x, M, params, on_iteration);
}

template <class V>
SolveResult stationary_iteration(const CsrMatrix<V>& A, const Vector<V>& b, Vector<V>& x,
                                 const std::type_identity_t<Preconditioner<V>>& M, const SolverParams& params,
                                 const IterationCallback& on_iteration = {}) {
  return stationary_iteration<CpuBackend, V>(CpuBackend{}, CpuMatrix<V>::view(A), b, x, M, params, on_iteration);
}

}  // namespace amgsolve

namespace amgsolve::test {

// T's name as the source writes it ("amgsolve::InputError"), the mangled one where the ABI cannot say it.
template <class T>
std::string type_name() {
  int status = 0;
  const auto release = [](char* text) { std::free(text); };
  const std::unique_ptr<char, decltype(release)> name(
      abi::__cxa_demangle(typeid(T).name(), nullptr, nullptr, &status), release);
  return status == 0 && name ? std::string(name.get()) : std::string(typeid(T).name());
}

// The what() of the ExpectedError thrown by f; fails the test when f throws nothing or something else.
template <class ExpectedError, class F>
std::string error_of(F&& f) {
  const std::string expected = type_name<ExpectedError>();
  try {
    f();
  } catch (const ExpectedError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected " << expected << ", got another exception: " << e.what();
    return std::string("(wrong exception type) ") + e.what();
  }
  ADD_FAILURE() << "expected " << expected << ", but nothing was thrown";
  return "(no error)";
}

// One V-cycle of a hierarchy on the cpu backend, as a preconditioner: vcycle.apply(r, z).
template <class V>
class CpuVcycle {
 public:
  explicit CpuVcycle(const AmgHierarchy<V>& amg) : cycle_(backend_, amg) {}
  void apply(const Vector<V>& b, Vector<V>& x) const { cycle_.apply(b, x); }

 private:
  CpuBackend backend_;  // before the cycle, which refers to it
  Vcycle<CpuBackend, V> cycle_;
};

// u^T M v = v^T M u and u^T M u > 0 for two seeded vectors u, v of n entries, M the V-cycle: a symmetric
// positive definite preconditioner, as PCG needs.
inline void expect_symmetric_positive_definite(const CpuVcycle<double>& vcycle, Index n) {
  Vector<double> u(static_cast<std::size_t>(n)), v(static_cast<std::size_t>(n)), Mu, Mv;
  for (Index i = 0; i < n; ++i) {
    u[i] = seeded_uniform(1, static_cast<std::uint64_t>(i)) - 0.5;
    v[i] = seeded_uniform(2, static_cast<std::uint64_t>(i)) - 0.5;
  }
  vcycle.apply(u, Mu);
  vcycle.apply(v, Mv);
  double vMu = 0, uMv = 0, uMu = 0;
  for (Index i = 0; i < n; ++i) {
    vMu += v[i] * Mu[i];
    uMv += u[i] * Mv[i];
    uMu += u[i] * Mu[i];
  }
  EXPECT_NEAR(vMu, uMv, 1e-10 * std::abs(uMu));
  EXPECT_GT(uMu, 0.0);
}

// A Solver's solve from x = 0 and its setup summary.
struct Solved {
  Vector<double> x;
  SolveResult result;
  SetupSummary setup;
};
inline Solved solve_with(std::shared_ptr<const CsrMatrix<double>> A, const Parameters& params, const Vector<double>& b) {
  Solver solver(std::move(A), params);
  Solved s;
  s.result = solver.solve(b, s.x);
  s.setup = solver.setup();
  return s;
}

// x with A x = b by PCG with one V-cycle of a default hierarchy, x0 = 0; expects convergence.
inline Vector<double> amg_pcg_solve(const CsrMatrix<double>& A, const Vector<double>& b, double tolerance = 1e-10) {
  const AmgHierarchy<double> amg(std::make_shared<const CsrMatrix<double>>(A), AmgParams{});
  const CpuVcycle<double> vcycle(amg);
  SolverParams sp;
  sp.tolerance = tolerance;
  Vector<double> x;
  const SolveResult r = pcg(A, b, x, [&](const Vector<double>& rr, Vector<double>& z) { vcycle.apply(rr, z); }, sp);
  EXPECT_TRUE(r.converged) << r.relative_residual;
  return x;
}

// Random rows x cols matrix with about `density` of the entries set (values in [-1, 1)); rows listed in
// empty_rows and columns in empty_cols are left empty.
// Both solvers (anything with solve(b, x)) solve rhs: they converge with the same residual history and
// the same solution, bit for bit.
template <class First, class Second>
void expect_identical_solves(const First& first, const Second& second, const Vector<double>& rhs) {
  Vector<double> x, y;
  const auto one = first.solve(rhs, x);
  const auto two = second.solve(rhs, y);
  EXPECT_TRUE(one.converged);
  EXPECT_EQ(one.history, two.history);
  EXPECT_EQ(x, y);
}

template <class Value = double>
CsrMatrix<Value> random_sparse(Index rows, Index cols, double density, std::uint64_t seed,
                               const std::vector<Index>& empty_rows = {}, const std::vector<Index>& empty_cols = {}) {
  std::vector<Triplet<Value>> t;
  for (Index i = 0; i < rows; ++i) {
    if (std::find(empty_rows.begin(), empty_rows.end(), i) != empty_rows.end()) continue;
    for (Index j = 0; j < cols; ++j) {
      if (std::find(empty_cols.begin(), empty_cols.end(), j) != empty_cols.end()) continue;
      const std::uint64_t key = static_cast<std::uint64_t>(i) * 1000003ULL + static_cast<std::uint64_t>(j);
      if (seeded_uniform(seed, key) < density)
        t.push_back({i, j, static_cast<Value>(2.0 * seeded_uniform(seed + 1, key) - 1.0)});
    }
  }
  return csr_from_triplets(rows, cols, std::move(t));
}

template <class Value>
Eigen::MatrixXd to_dense(const CsrMatrix<Value>& A) {
  Eigen::MatrixXd D = Eigen::MatrixXd::Zero(A.rows, A.cols);
  for (Index i = 0; i < A.rows; ++i)
    for (Offset k = A.row_begin(i); k < A.row_end(i); ++k) D(i, A.col[k]) += static_cast<double>(A.val[k]);
  return D;
}

// Nodes of 1, 2, 3, 4, 1, 2, ... rows over n rows (the last one shorter where they do not fit), as a coarse
// level of a system has nodes of several sizes.
inline std::shared_ptr<const Array<Index>> uneven_nodes(Index n) {
  auto nodes = std::make_shared<Array<Index>>(Array<Index>{0});
  for (Index size = 1; nodes->back() < n; size = size % 4 + 1) nodes->push_back(std::min(n, nodes->back() + size));
  return nodes;
}

// D_b as a dense matrix: A's entries inside the nodes' diagonal blocks.
inline Eigen::MatrixXd dense_block_diagonal(const Eigen::MatrixXd& A, const Array<Index>& nodes) {
  Eigen::MatrixXd D = Eigen::MatrixXd::Zero(A.rows(), A.cols());
  for (std::size_t n = 0; n + 1 < nodes.size(); ++n) {
    const Index first = nodes[n], size = nodes[n + 1] - nodes[n];
    D.block(first, first, size, size) = A.block(first, first, size, size);
  }
  return D;
}

template <class Value>
Eigen::SparseMatrix<double> to_eigen(const CsrMatrix<Value>& A) {
  std::vector<Eigen::Triplet<double>> t;
  for (Index i = 0; i < A.rows; ++i)
    for (Offset k = A.row_begin(i); k < A.row_end(i); ++k) t.emplace_back(i, A.col[k], static_cast<double>(A.val[k]));
  Eigen::SparseMatrix<double> M(A.rows, A.cols);
  M.setFromTriplets(t.begin(), t.end());
  return M;
}

// ||b - A x|| / ||b|| computed with Eigen, independently of the solver's own bookkeeping.
inline double true_relative_residual(const CsrMatrix<double>& A, const Vector<double>& b, const Vector<double>& x) {
  const Eigen::Map<const Eigen::VectorXd> bd(b.data(), static_cast<Eigen::Index>(b.size()));
  const Eigen::Map<const Eigen::VectorXd> xd(x.data(), static_cast<Eigen::Index>(x.size()));
  return (bd - to_eigen(A) * xd).norm() / bd.norm();
}

// c A: every stored value times c (exact for a power of two: D^-1 A and the strength stay as they were).
inline CsrMatrix<double> scaled(CsrMatrix<double> A, double c) {
  for (double& v : A.val) v *= c;
  return A;
}

// New values that change which rows lump their weak entries (amg/filtered_matrix.cpp): the small couplings (below
// `small` in magnitude) among the upper half's rows 25 times larger, the diagonal raised by as much, so that
// lumping them would take more than half of it and those rows keep them instead.
inline CsrMatrix<double> relumped(const CsrMatrix<double>& A, double small = 0.1) {
  CsrMatrix<double> B = A;
  const Index half = A.rows / 2;
  std::vector<double> raise(static_cast<std::size_t>(A.rows), 0.0);
  for (Index i = half; i < B.rows; ++i)
    for (Offset k = B.row_begin(i); k < B.row_end(i); ++k)
      if (B.col[k] != i && B.col[k] >= half && std::abs(B.val[k]) < small) {
        raise[i] += 24 * std::abs(B.val[k]);
        B.val[k] *= 25;
      }
  for (Index i = 0; i < B.rows; ++i)
    for (Offset k = B.row_begin(i); k < B.row_end(i); ++k)
      if (B.col[k] == i) B.val[k] += raise[i];
  return B;
}

// A plus one node coupled by -c to each of its N rows (a ground or hub node, as in a circuit, or a graph
// vertex joined to all others), each diagonal raised by c and the hub's a_hh = c N + 1: a diagonally
// dominant M-matrix stays one. On a grid of more than a few hundred points every coupling of the hub is weak
// at the default threshold, and lumping them would leave a_hh at 1.
inline CsrMatrix<double> with_hub(const CsrMatrix<double>& A, double c = 1.0) {
  const Index N = A.rows;
  std::vector<Triplet<double>> t;
  for (Index i = 0; i < N; ++i) {
    for (Offset k = A.row_begin(i); k < A.row_end(i); ++k)
      t.push_back({i, A.col[k], A.val[k] + (A.col[k] == i ? c : 0.0)});
    t.push_back({i, N, -c});
    t.push_back({N, i, -c});
  }
  t.push_back({N, N, c * N + 1.0});
  return csr_from_triplets(N + 1, N + 1, t);
}

// The matrices side by side, coupled nowhere (a block diagonal).
inline std::shared_ptr<const CsrMatrix<double>> side_by_side(const std::vector<CsrMatrix<double>>& parts) {
  std::vector<Triplet<double>> t;
  Index first = 0;
  for (const CsrMatrix<double>& part : parts) {
    for (Index i = 0; i < part.rows; ++i)
      for (Offset k = part.row_begin(i); k < part.row_end(i); ++k) t.push_back({first + i, first + part.col[k], part.val[k]});
    first += part.rows;
  }
  return std::make_shared<const CsrMatrix<double>>(csr_from_triplets(first, first, std::move(t)));
}

inline CsrMatrix<double> from_eigen(const Eigen::SparseMatrix<double>& M) {
  std::vector<Triplet<double>> t;
  for (int k = 0; k < M.outerSize(); ++k)
    for (Eigen::SparseMatrix<double>::InnerIterator it(M, k); it; ++it)
      t.push_back({static_cast<Index>(it.row()), static_cast<Index>(it.col()), it.value()});
  return csr_from_triplets(static_cast<Index>(M.rows()), static_cast<Index>(M.cols()), std::move(t));
}

// How the 2D body below is held: clamped on its left edge (those nodes left out), not at all (free to
// translate and rotate: its stiffness matrix is singular, with the three rigid-body modes as nullspace), or
// by a spring of stiffness 1 in x and y at its corner (0, 0) (free to rotate about that corner alone).
enum class Support { clamped, floating, pinned_corner };

// Plane-strain linear elasticity (E = 1, Poisson ratio nu, 0.3 unless given) with linear triangles on an nx x ny grid of the
// rectangle [0, nx / ny] x [0, 1], held as `support` says: unknowns (ux, uy) of each free node, interleaved;
// `coordinates` receives the free nodes' (x, y).
inline CsrMatrix<double> elasticity_2d(Index nx, Index ny, Vector<double>& coordinates,
                                       Support support = Support::clamped, double nu = 0.3) {
  const double E = 1.0, lambda = E * nu / ((1 + nu) * (1 - 2 * nu)), mu = E / (2 * (1 + nu));
  const double h = 1.0 / ny;
  const Index first = support == Support::clamped ? 1 : 0;  // the first column of free nodes
  const auto free_node = [&](Index i, Index j) { return (i - first) * (ny + 1) + j; };
  std::vector<Triplet<double>> t;
  const auto add_triangle = [&](const std::array<std::array<Index, 2>, 3>& corners) {
    double x[3], y[3];
    for (int c = 0; c < 3; ++c) x[c] = corners[c][0] * h, y[c] = corners[c][1] * h;
    const double det = (x[1] - x[0]) * (y[2] - y[0]) - (x[2] - x[0]) * (y[1] - y[0]);
    const double area = std::abs(det) / 2;
    // Gradients of the three linear shape functions.
    const double gx[3] = {(y[1] - y[2]) / det, (y[2] - y[0]) / det, (y[0] - y[1]) / det};
    const double gy[3] = {(x[2] - x[1]) / det, (x[0] - x[2]) / det, (x[1] - x[0]) / det};
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b) {
        if (corners[a][0] < first || corners[b][0] < first) continue;  // clamped
        const Index p = free_node(corners[a][0], corners[a][1]), q = free_node(corners[b][0], corners[b][1]);
        // The 2 x 2 block of B_a^T D B_b for strains (exx, eyy, 2 exy).
        const double xx = (lambda + 2 * mu) * gx[a] * gx[b] + mu * gy[a] * gy[b];
        const double xy = lambda * gx[a] * gy[b] + mu * gy[a] * gx[b];
        const double yx = lambda * gy[a] * gx[b] + mu * gx[a] * gy[b];
        const double yy = (lambda + 2 * mu) * gy[a] * gy[b] + mu * gx[a] * gx[b];
        t.push_back({2 * p, 2 * q, area * xx});
        t.push_back({2 * p, 2 * q + 1, area * xy});
        t.push_back({2 * p + 1, 2 * q, area * yx});
        t.push_back({2 * p + 1, 2 * q + 1, area * yy});
      }
  };
  for (Index i = 0; i < nx; ++i)
    for (Index j = 0; j < ny; ++j) {
      add_triangle({{{i, j}, {i + 1, j}, {i + 1, j + 1}}});
      add_triangle({{{i, j}, {i + 1, j + 1}, {i, j + 1}}});
    }
  if (support == Support::pinned_corner) t.insert(t.end(), {{0, 0, 1.0}, {1, 1, 1.0}});
  coordinates.clear();
  for (Index i = first; i <= nx; ++i)
    for (Index j = 0; j <= ny; ++j) coordinates.insert(coordinates.end(), {i * h, j * h});
  const Index rows = 2 * (nx + 1 - first) * (ny + 1);
  return csr_from_triplets(rows, rows, std::move(t));
}

// Linear elasticity (E = 1, nu = 0.3) with linear tetrahedra (each cube of an nx x ny x nz grid of cubes of
// side 1 / ny cut into Kuhn's six) clamped on the face x = 0 (those nodes left out): unknowns (ux, uy, uz) of
// each free node, interleaved; `coordinates` receives the free nodes' (x, y, z).
inline CsrMatrix<double> elasticity_3d(Index nx, Index ny, Index nz, Vector<double>& coordinates) {
  const double E = 1.0, nu = 0.3, lambda = E * nu / ((1 + nu) * (1 - 2 * nu)), mu = E / (2 * (1 + nu));
  const double h = 1.0 / ny;
  Eigen::Matrix<double, 6, 6> D = Eigen::Matrix<double, 6, 6>::Zero();
  D.topLeftCorner<3, 3>().setConstant(lambda);
  D.topLeftCorner<3, 3>().diagonal().array() += 2 * mu;
  D.bottomRightCorner<3, 3>().diagonal().setConstant(mu);
  const auto free_node = [&](const std::array<Index, 3>& p) { return ((p[0] - 1) * (ny + 1) + p[1]) * (nz + 1) + p[2]; };
  std::vector<Triplet<double>> t;
  const auto add_tetrahedron = [&](const std::array<std::array<Index, 3>, 4>& corners) {
    Eigen::Matrix4d M;
    for (int c = 0; c < 4; ++c) M.row(c) << 1, corners[c][0] * h, corners[c][1] * h, corners[c][2] * h;
    const Eigen::Matrix<double, 3, 4> g = M.inverse().bottomRows<3>();  // the shape functions' gradients
    Eigen::Matrix<double, 6, 12> B = Eigen::Matrix<double, 6, 12>::Zero();  // strains (xx, yy, zz, 2xy, 2yz, 2xz)
    for (int c = 0; c < 4; ++c) {
      B(0, 3 * c) = g(0, c), B(1, 3 * c + 1) = g(1, c), B(2, 3 * c + 2) = g(2, c);
      B(3, 3 * c) = g(1, c), B(3, 3 * c + 1) = g(0, c);
      B(4, 3 * c + 1) = g(2, c), B(4, 3 * c + 2) = g(1, c);
      B(5, 3 * c) = g(2, c), B(5, 3 * c + 2) = g(0, c);
    }
    const Eigen::Matrix<double, 12, 12> K = std::abs(M.determinant()) / 6 * B.transpose() * D * B;
    for (int a = 0; a < 4; ++a)
      for (int b = 0; b < 4; ++b) {
        if (corners[a][0] == 0 || corners[b][0] == 0) continue;  // clamped
        const Index p = free_node(corners[a]), q = free_node(corners[b]);
        for (int r = 0; r < 3; ++r)
          for (int s = 0; s < 3; ++s) t.push_back({3 * p + r, 3 * q + s, K(3 * a + r, 3 * b + s)});
      }
  };
  const int axes[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  for (Index i = 0; i < nx; ++i)
    for (Index j = 0; j < ny; ++j)
      for (Index k = 0; k < nz; ++k)
        for (const auto& order : axes) {  // the path from corner (i, j, k) to the opposite one along `order`
          std::array<std::array<Index, 3>, 4> corners;
          corners[0] = {i, j, k};
          for (int step = 0; step < 3; ++step) {
            corners[step + 1] = corners[step];
            ++corners[step + 1][order[step]];
          }
          add_tetrahedron(corners);
        }
  coordinates.clear();
  for (Index i = 1; i <= nx; ++i)
    for (Index j = 0; j <= ny; ++j)
      for (Index k = 0; k <= nz; ++k) coordinates.insert(coordinates.end(), {i * h, j * h, k * h});
  const Index rows = 3 * nx * (ny + 1) * (nz + 1);
  return csr_from_triplets(rows, rows, std::move(t));
}
// The unit cube's: n x n x n cubes.
inline CsrMatrix<double> elasticity_3d(Index n, Vector<double>& coordinates) { return elasticity_3d(n, n, n, coordinates); }

// A plane-strain body clamped at one end beside one held nowhere (elasticity_2d's, side by side, coupled
// nowhere), with the rigid-body modes of both: a system with a floating part, rows [held_rows, A->rows).
struct HeldAndFreeBodies {
  std::shared_ptr<const CsrMatrix<double>> A;
  NearNullspaceVectors modes;
  Index held_rows = 0;
  // What floating_part names it by.
  std::string part() const {
    return "row " + std::to_string(held_rows + 1) + " and the " + std::to_string(A->rows - held_rows - 1) +
           " rows coupled to it";
  }
};
inline HeldAndFreeBodies held_and_free_bodies(Index held_nx, Index held_ny, Index free_nx, Index free_ny) {
  Vector<double> points, free_points;
  const CsrMatrix<double> held = elasticity_2d(held_nx, held_ny, points, Support::clamped);
  const CsrMatrix<double> free = elasticity_2d(free_nx, free_ny, free_points, Support::floating);
  points.insert(points.end(), free_points.begin(), free_points.end());
  return {side_by_side({held, free}), rigid_body_modes(points, 2), held.rows};
}

// The source tree (configs/, docs/): where the build found it, or $AMGSOLVE_SOURCE where the binaries run in
// another copy of it (the GPU machine's prebuilt binaries, scripts/device-prebuild). For the test programs
// that amgsolve_test builds (they are told AMGSOLVE_SOURCE_DIR).
#ifdef AMGSOLVE_SOURCE_DIR
inline std::string source_dir() {
  if (const char* env = std::getenv("AMGSOLVE_SOURCE")) return env;
  return AMGSOLVE_SOURCE_DIR;
}
#endif

// The folder of the shared matrices: $AMGSOLVE_MATRICES where set and not empty, else ../shared/matrices.
inline std::string matrices_folder() {
  const char* env = std::getenv("AMGSOLVE_MATRICES");
  return env && *env ? env : AMGSOLVE_MATRICES_DIR;
}

// That folder, or "" when it is absent.
inline std::string matrices_dir() {
  const std::string dir = matrices_folder();
  return std::filesystem::is_directory(dir) ? dir : "";
}

// Full path of a shared matrix, or "" when the folder or the file is missing.
inline std::string shared_matrix(const std::string& name) {
  const std::string dir = matrices_dir();
  if (dir.empty()) return "";
  const std::string path = dir + "/" + name + ".mtx";
  return std::filesystem::exists(path) ? path : "";
}

// (name, path) of those of `names` that the folder holds: a test over them skips, saying why, where it
// holds none, rather than passing having checked nothing.
inline std::vector<std::pair<std::string, std::string>> shared_matrices(std::initializer_list<const char*> names) {
  std::vector<std::pair<std::string, std::string>> found;
  for (const char* name : names)
    if (std::string path = shared_matrix(name); !path.empty()) found.emplace_back(name, std::move(path));
  return found;
}
inline std::string no_shared_matrices() {
  return matrices_dir().empty() ? matrices_folder() + " absent (the shared matrices; AMGSOLVE_MATRICES names another folder)"
                                : "none of this test's matrices in " + matrices_folder();
}

#define AMGSOLVE_REQUIRE_SHARED_MATRIX(var, name)                                                      \
  const std::string var = ::amgsolve::test::shared_matrix(name);                                      \
  if (var.empty()) GTEST_SKIP() << "shared matrix " << name << " not found: " << ::amgsolve::test::no_shared_matrices()

// A unique scratch directory under the system temp folder, removed at destruction.
class ScratchDir {
 public:
  ScratchDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            ("amgsolve-" + std::string(info ? info->name() : "test") + "-" + std::to_string(::getpid()));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() { std::filesystem::remove_all(path_); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Runs `check` with the soft address-space limit (ulimit -v) set to what the process maps, plus what its
// OpenMP threads not started yet will map (72 MiB each: a malloc arena and a stack), plus `headroom`, then
// puts the limit back (a soft limit may rise again to the hard one). False where a hard limit is in the way.
inline bool with_address_space_headroom(std::uint64_t headroom, const std::function<void()>& check) {
  rlimit before{};
  if (getrlimit(RLIMIT_AS, &before) != 0) return false;
  std::uint64_t mapped_kb = 0, running = 1;  // the OpenMP threads that run already are in VmSize
  std::ifstream status("/proc/self/status");
  for (std::string key; status >> key;) {
    if (key == "VmSize:") status >> mapped_kb;
    if (key == "Threads:") status >> running;
  }
  const std::uint64_t wanted = static_cast<std::uint64_t>(omp_get_max_threads());
  const std::uint64_t threads_kb = std::uint64_t{72 << 10} * (wanted > running ? wanted - running : 0);
  rlimit limited = before;
  limited.rlim_cur = (mapped_kb + threads_kb) * 1024 + headroom;
  if (before.rlim_max != RLIM_INFINITY && limited.rlim_cur > before.rlim_max) return false;
  if (setrlimit(RLIMIT_AS, &limited) != 0) return false;
  check();
  setrlimit(RLIMIT_AS, &before);
  return true;
}

}  // namespace amgsolve::test
