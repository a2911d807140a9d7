#include "app/outputs.hpp"

#include <cmath>
#include <filesystem>

#include "app/ranks.hpp"
#include "common/error.hpp"
#include "common/log.hpp"
#include "output/vtk_writer.hpp"
#include "sparse/matrix_market.hpp"

namespace amgsolve {
namespace {

// Refuses an output path without the extension its writer needs; ".vti" alone is a hidden file's name
// without one, said as such.
void require_extension(const std::string& key, const std::string& path, const char* extension, const std::string& why) {
  const std::filesystem::path file(path);
  if (file.extension() == extension) return;
  std::error_code ec;  // a folder given where its file goes: said as such, whatever its name
  if (std::filesystem::is_directory(file, ec))
    throw InputError(key + ": " + printable(path) + " is a directory; give a " + extension + " file's name");
  if (file.filename() == extension)
    throw InputError(key + ": " + printable(path) + " has no name before its " + extension + " extension");
  throw InputError(key + ": " + why + "use a " + extension + " file name, not " + printable(path));
}

// The mouse's views of the skin (output.skin, output.camera): VTK files of a given kind.
void check_mouse_view(const Config& config, const std::string& key, const std::string& path, const char* extension,
                      const char* what) {
  if (path.empty()) return;
  if (config.problem.type != ProblemType::mouse)
    throw InputError(key + ": only a mouse problem has a " + std::string(what) + " to write (" + key +
                     " is the mouse's)");
  if (!vtk_available())
    throw InputError(key + ": built without VTK, so no " + extension + " file can be written (install libvtk9-dev "
                     "and rebuild, or leave " + key + " empty)");
  require_extension(key, path, extension, "");
  require_writable(path, what, kVtkMark);
}

// Every point's first value of v, whose unknowns come `per_point` at a point (a system's aggregates, one per node).
template <class T>
Array<T> first_of_each_point(const Array<T>& v, int per_point) {
  if (per_point == 1) return v;
  Array<T> first(v.size() / static_cast<std::size_t>(per_point));
  for (std::size_t p = 0; p < first.size(); ++p) first[p] = v[p * static_cast<std::size_t>(per_point)];
  return first;
}

// The VTK point fields of a grid problem's solution x: x and b, and the exact solution and the error where
// it is known; a system's (elasticity's) each component of x, named by its axis, and their magnitude.
std::vector<ScalarField> point_fields(const LinearProblem& problem, const Vector<double>& x) {
  const int d = problem.unknowns_per_point;
  if (d > 1) {
    const std::size_t points = x.size() / static_cast<std::size_t>(d);
    std::vector<ScalarField> fields;
    Vector<double> magnitude(points, 0.0);
    for (int c = 0; c < d; ++c) {
      Vector<double> component(points);
      for (std::size_t p = 0; p < points; ++p) {
        component[p] = x[p * d + c];
        magnitude[p] += component[p] * component[p];
      }
      fields.push_back({std::string("displacement_") + "xyz"[c], std::move(component)});
    }
    for (double& m : magnitude) m = std::sqrt(m);
    fields.push_back({"displacement_magnitude", std::move(magnitude)});
    return fields;
  }
  std::vector<ScalarField> scalars = {{"solution", x}, {"rhs", problem.b}};
  if (problem.exact) {
    scalars.push_back({"exact", *problem.exact});
    Vector<double> error(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) error[i] = x[i] - (*problem.exact)[i];
    scalars.push_back({"error", std::move(error)});
  }
  return scalars;
}

}  // namespace

void check_outputs(const Config& config, const std::string& vtk_key) {
  const OutputParams& out = config.output;
  // No output may overwrite an input or another output (said first: more to the point than "not ours").
  std::vector<std::pair<std::string, std::string>> outputs;
  for (const auto& [what, path] :
       {std::pair{"report file", out.report}, std::pair{"solution file", out.solution},
        std::pair{"SpGEMM comparison file", out.spgemm_csv}, std::pair{"VTK file", out.vtk},
        std::pair{"skin surface file", out.skin}, std::pair{"camera image file", out.camera}})
    if (!path.empty()) outputs.emplace_back(what, path);
  std::vector<std::string> inputs = {config.source};
  if (config.problem.type == ProblemType::matrix_market) {
    const MatrixMarketParams& p = config.problem.matrix_market;
    inputs.insert(inputs.end(), {p.matrix, p.rhs, p.x0, p.near_nullspace, p.coordinates});
  }
  require_distinct_outputs(outputs, inputs);
  if (!out.report.empty()) require_writable(out.report, "report file", kReportMark);
  if (!out.solution.empty()) {
    if (config.problem.type == ProblemType::mouse)
      throw InputError("output.solution: a mouse problem has one fluence per source; use output.vtk");
    if (std::filesystem::path(out.solution).extension() == ".gz")
      throw InputError("output.solution: " + out.solution + " would not be compressed: the solution is written as "
                       "plain Matrix Market text (name it .mtx)");
    require_writable(out.solution, "solution file", kSolutionMark);
  }
  if (!out.spgemm_csv.empty()) require_writable(out.spgemm_csv, "SpGEMM comparison file", kSpgemmCsvMark);
  if (!out.vtk.empty()) {
    if (!vtk_available())
      throw InputError(vtk_key + ": built without VTK, so no .vti file can be written (install libvtk9-dev and "
                       "rebuild, or leave output.vtk and --vtk empty)");
    if (config.problem.type == ProblemType::matrix_market)
      throw InputError(vtk_key + ": VTK output needs a grid, and a matrix_market problem has none "
                       "(use output.solution to save the solution vector)");
    require_extension(vtk_key, out.vtk, ".vti", "grid problems are written as VTK image data; ");
    require_writable(out.vtk, "VTK file", kVtkMark);
  }
  check_mouse_view(config, "output.skin", out.skin, ".vtp", "skin surface file");
  check_mouse_view(config, "output.camera", out.camera, ".vti", "camera image file");
}

void write_outputs(const Config& config, const RunRecord& record, const LinearProblem& problem,
                   const Array<Index>& aggregates, const std::vector<const Vector<double>*>& solutions) {
  const OutputParams& out = config.output;
  const Vector<double>& x = *solutions.front();
  OutputBatch batch;
  std::vector<std::string> written;
  if (!out.solution.empty()) {
    write_matrix_market_columns(out.solution, solutions);
    written.push_back(solutions.size() > 1 ? "solutions (" + std::to_string(solutions.size()) + " columns) written to " + out.solution
                                           : "solution written to " + out.solution);
  }
  if (!out.vtk.empty()) {
    std::vector<ScalarField> scalars = point_fields(problem, x);
    std::vector<IntegerField> integers;
    if (!aggregates.empty()) integers.push_back({"aggregate", first_of_each_point(aggregates, problem.unknowns_per_point)});
    write_vti(out.vtk, *problem.grid, scalars, integers);
    written.push_back("VTK image data written to " + out.vtk);
  }
  commit_with_report(out, record, batch, std::move(written));
}

Array<Index> aggregates_to_write(const AmgSolver& solver, const SetupRecord& setup) {
  Array<Index> mine = solver.finest_aggregates();
  return setup.ranks > 1 ? gather_on_first(mine) : mine;
}

void commit_with_report(const OutputParams& out, const RunRecord& record, OutputBatch& batch,
                        std::vector<std::string> written) {
  // Asked for, the comparison is written even without rows (a one-level hierarchy forms no product), so
  // that its file says so rather than being missing.
  if (!out.spgemm_csv.empty() && (record.spgemm_compared || !record.spgemm_comparison.empty())) {
    write_spgemm_comparison_csv(out.spgemm_csv, record.spgemm_comparison);
    written.push_back("SpGEMM comparison written to " + out.spgemm_csv);
  }
  if (!out.report.empty()) {
    write_report(out.report, record);
    written.push_back("report written to " + out.report);
  }
  batch.commit();
  for (const std::string& line : written) progress("%s\n", line.c_str());
}

GatheredOutputs::GatheredOutputs(const Config& config, const LinearProblem& mine,
                                 const std::vector<const Vector<double>*>& rows) {
  const bool vtk = !config.output.vtk.empty();
  if (vtk || !config.output.solution.empty())
    for (const Vector<double>* x : rows) solutions.push_back(gather_on_first(*x));
  if (vtk) {
    problem.b = gather_on_first(mine.b);
    if (mine.exact) problem.exact = gather_on_first(*mine.exact);
  }
  problem.grid = mine.grid;
  problem.unknowns_per_point = mine.unknowns_per_point;
}

std::vector<const Vector<double>*> GatheredOutputs::written() const {
  std::vector<const Vector<double>*> all;
  for (const Vector<double>& x : solutions) all.push_back(&x);
  return all;
}

}  // namespace amgsolve
