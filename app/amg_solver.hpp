#pragma once
// The library's Solver (amgsolve/solver.hpp) as the program runs it: built from the whole Config, with the
// level table, the SpGEMM comparison and the summary printed during the setup and a line per iteration
// during each solve. One setup serves any number of right-hand sides: the many-sources workflow of diffuse
// optical tomography sets up once per wavelength and then pays only a solve per source.
#include <memory>
#include <vector>

#include "amgsolve/solver.hpp"
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
  // From this rank's rows of a distributed matrix (collective).
  static std::unique_ptr<AmgSolver> create(const Config& config, RowBlock block, bool compare_spgemm,
                                           SetupRecord& setup, std::vector<SpgemmComparisonRow>& comparison);
  virtual ~AmgSolver() = default;

  // Solves A x = b from x = 0, or from x with from_x (solver.initial_guess); with show_iterations a line is
  // printed every solver.print_every iterations (if enabled).
  virtual SolveResult solve(const Vector<double>& b, Vector<double>& x, bool show_iterations, bool from_x = false) = 0;
  // The same with b and x this rank's rows of the vectors (a solver created from a RowBlock: Solver::solve_rows).
  virtual SolveResult solve_rows(const Vector<double>& b, Vector<double>& x, bool show_iterations, bool from_x = false) = 0;
  // Solver::finest_aggregates: each rank's rows of them over ranks (aggregates_to_write puts them together).
  virtual Array<Index> finest_aggregates() const = 0;
  // New values of A on its pattern (problem.steps): Solver::rebuild, with a line saying what it did; `setup`
  // is refilled.
  virtual void rebuild(std::shared_ptr<const CsrMatrix<double>> A, SetupRecord& setup) = 0;
  // The same from this rank's rows (a solver created from a RowBlock; collective).
  virtual void rebuild(RowBlock block, SetupRecord& setup) = 0;
};

}  // namespace amgsolve
