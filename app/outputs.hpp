#pragma once
// The program's output files: checked before any work (writable, not an input, the right extension) and
// written together at the end, so that a run leaves all of them or none.
#include <string>
#include <vector>

#include "app/amg_solver.hpp"
#include "common/atomic_file.hpp"
#include "config/config.hpp"
#include "output/report.hpp"
#include "problems/problem.hpp"

namespace amgsolve {

// Fails fast, before any long computation, on output paths that cannot be written. `vtk_key` names where
// output.vtk came from (--vtk on the command line).
void check_outputs(const Config& config, const std::string& vtk_key);

// A grid or Matrix Market problem's outputs (output.solution, output.vtk with the finest `aggregates`,
// output.spgemm_csv, output.report), committed together: if one cannot be written, none is left behind.
// solutions: x, then those of problem.rhs's further columns.
void write_outputs(const Config& config, const RunRecord& record, const LinearProblem& problem,
                   const Array<Index>& aggregates, const std::vector<const Vector<double>*>& solutions);

// The end every run's outputs share: output.spgemm_csv where the backends were compared, and the report,
// into `batch`; then the batch committed and each of the `written` lines printed.
void commit_with_report(const OutputParams& out, const RunRecord& record, OutputBatch& batch,
                        std::vector<std::string> written);

// The solver's finest aggregates whole on rank 0 for the VTK file: gathered there where the solver is
// distributed over the ranks (`setup` its summary), each rank holding its rows. Collective.
Array<Index> aggregates_to_write(const AmgSolver& solver, const SetupRecord& setup);

// What rank 0 writes where the ranks hold their rows of the vectors: the solutions (for the VTK file or
// output.solution) and b and the exact solution (the VTK file's), gathered there whole, with the grid.
// Collective.
struct GatheredOutputs {
  LinearProblem problem;
  std::vector<Vector<double>> solutions;

  GatheredOutputs(const Config& config, const LinearProblem& mine, const std::vector<const Vector<double>*>& rows);
  std::vector<const Vector<double>*> written() const;
};

}  // namespace amgsolve
