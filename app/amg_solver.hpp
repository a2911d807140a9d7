#pragma once
// One AMG hierarchy, set up once, and the configured outer iteration (PCG or stand-alone V-cycles) for
// any number of right-hand sides: the many-sources workflow of diffuse optical tomography sets up once
// per wavelength and then pays only a solve per source.
#include <memory>

#include "config/config.hpp"
#include "output/report.hpp"
#include "solver/solve_result.hpp"

namespace amgsolve {

class AmgSolver {
 public:
  // Builds the hierarchy (double, or float for solver.precision: mixed), prints the level table and
  // fills `setup`; with compare_spgemm every SpGEMM backend also runs on every product into
  // `comparison`.
  static std::unique_ptr<AmgSolver> create(const Config& config, std::shared_ptr<const CsrMatrix<double>> A,
                                           bool compare_spgemm, SetupRecord& setup,
                                           std::vector<SpgemmComparisonRow>& comparison);
  virtual ~AmgSolver() = default;

  // Solves A x = b from x = 0; `show` prints a line every config print_every iterations (if enabled).
  virtual SolveResult solve(const Vector<double>& b, Vector<double>& x, bool show_iterations) = 0;
  virtual Array<Index> finest_aggregates() const = 0;
};

}  // namespace amgsolve
