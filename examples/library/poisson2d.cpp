// amgsolve as a library: the 5-point Laplacian on an n x n grid (n from the command line, default 200),
// b = 1, solved by AMG-preconditioned conjugate gradients; prints the levels and the convergence.
#include <amgsolve/solver.hpp>
#include <sparse/csr_ops.hpp>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <new>
#include <vector>

namespace {

std::shared_ptr<const amgsolve::CsrMatrix<double>> laplacian_2d(amgsolve::Index n) {
  std::vector<amgsolve::Triplet<double>> entries;
  const auto at = [n](amgsolve::Index i, amgsolve::Index j) { return i + n * j; };
  for (amgsolve::Index j = 0; j < n; ++j)
    for (amgsolve::Index i = 0; i < n; ++i) {
      entries.push_back({at(i, j), at(i, j), 4.0});
      if (i > 0) entries.push_back({at(i, j), at(i - 1, j), -1.0});
      if (i + 1 < n) entries.push_back({at(i, j), at(i + 1, j), -1.0});
      if (j > 0) entries.push_back({at(i, j), at(i, j - 1), -1.0});
      if (j + 1 < n) entries.push_back({at(i, j), at(i, j + 1), -1.0});
    }
  return std::make_shared<const amgsolve::CsrMatrix<double>>(amgsolve::csr_from_triplets(n * n, n * n, entries));
}

}  // namespace

int main(int argc, char** argv) {
  // n^2 rows must fit amgsolve::Index (32 bits): n up to 46340.
  char* rest = nullptr;
  const long long requested = argc > 1 ? std::strtoll(argv[1], &rest, 10) : 200;
  if (argc > 2 || (rest && *rest != '\0') || requested < 2 || requested > 46340) {
    std::fprintf(stderr, "usage: poisson2d [n], 2 <= n <= 46340\n");
    return 2;
  }
  const auto n = static_cast<amgsolve::Index>(requested);
  try {
    amgsolve::Parameters params;  // the defaults of docs/CONFIG.md; named as the YAML keys (amgsolve/solver.hpp)
    params.solver.tolerance = 1e-10;
    amgsolve::SetupCallbacks progress;
    progress.on_level = [](const amgsolve::LevelInfo& l) {
      std::printf("level %d: %d rows, %lld nonzeros\n", l.level, l.rows, static_cast<long long>(l.nnz));
    };
    const amgsolve::Solver solver(laplacian_2d(n), params, progress);

    const amgsolve::Vector<double> b(static_cast<std::size_t>(n) * n, 1.0);
    amgsolve::Vector<double> x;
    const amgsolve::SolveResult result = solver.solve(b, x);
    std::printf("%s after %d iterations, relative residual %.3e (operator complexity %.3f, backend %s)\n",
                result.converged ? "converged" : "NOT converged", result.iterations, result.relative_residual,
                solver.setup().operator_complexity, amgsolve::to_string(solver.setup().backend));
    return result.converged ? 0 : 1;
  } catch (const amgsolve::Error& e) {
    std::fprintf(stderr, "poisson2d: %s\n", e.what());
    return 1;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "poisson2d: out of memory for n = %d\n", n);
    return 1;
  }
}
