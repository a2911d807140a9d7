// The diffuse-optical mouse workflow: build the phantom and the operators once, set up one AMG
// hierarchy per wavelength, then solve per source (excitation) and per source again for the
// fluorescence emission. Each additional source costs only its solves.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>
#include <optional>

#include "app/amg_solver.hpp"
#include "app/mouse_run.hpp"
#include "app/outputs.hpp"
#include "app/problem_input.hpp"
#include "app/ranks.hpp"
#include "app/run_summary.hpp"
#include "common/atomic_file.hpp"
#include "common/log.hpp"
#include "common/memory.hpp"
#include "common/parallel.hpp"
#include "common/timer.hpp"
#include "output/vtk_writer.hpp"

namespace amgsolve {
namespace {

std::string describe(const MouseParams& p, const MouseProblem& m) {
  char text[256];
  std::snprintf(text, sizeof text, "mouse phantom, %g mm voxels (box %dx%dx%d), %zu source%s%s%s", p.phantom.voxel_size,
                m.domain.size[0], m.domain.size[1], m.domain.size[2], m.sources.size(), m.sources.size() == 1 ? "" : "s",
                p.phantom.tumour_radius > 0 ? ", tumour" : "", p.fluorescence ? ", fluorescence" : "");
  return text;
}

MouseRecord describe_model(const MouseParams& p, const MouseProblem& m) {
  MouseRecord r;
  r.frame = kMouseFrame;
  r.wavelengths_nm = p.wavelengths;
  r.source_power = p.source_power;
  r.fluorescence = p.fluorescence;
  r.tumour_yield = p.tumour_yield;
  r.background_yield = p.background_yield;
  r.refractive_index = p.refractive_index;
  r.reflection = reflection_model_name(p.reflection);
  r.robin_factor = m.robin;
  const double h2 = m.domain.voxel_size * m.domain.voxel_size;
  for (const SkinFace& f : m.excitation.skin) r.skin_area_mm2 += f.area;
  r.staircase_area_mm2 = h2 * static_cast<double>(m.excitation.skin.size());
  const std::array<std::int64_t, kTissueCount> count = tissue_voxels(m);
  for (int t = 1; t < kTissueCount; ++t) {
    if (count[t] == 0) continue;
    const auto& o = m.optics[t];
    r.tissues.push_back({tissue_name(static_cast<Tissue>(t)), count[t],
                         count[t] * std::pow(m.domain.voxel_size, 3) / 1000.0, {o[0].mua, o[1].mua},
                         {o[0].musp, o[1].musp}});
  }
  return r;
}

void print_model(const MouseRecord& r) {
  progress("  skin %.0f mm^2 (voxel faces %.0f mm^2, weighted by 1/|n|_1), Robin A = %.4f (n = %g, %s)\n",
           r.skin_area_mm2, r.staircase_area_mm2, r.robin_factor, r.refractive_index, r.reflection.c_str());
  progress("  %-10s %9s %9s %9s %9s %9s %9s\n", "tissue", "voxels", "cm^3", "mua_ex", "musp_ex", "mua_em", "musp_em");
  for (const TissueRecord& t : r.tissues)
    progress("  %-10s %9lld %9.3f %9.4f %9.3f %9.4f %9.3f\n", t.name.c_str(), static_cast<long long>(t.voxels),
             t.volume_cm3, t.mua[0], t.musp[0], t.mua[1], t.musp[1]);
}

// Solves every source against one hierarchy; prints one line per source. The fluences are of m.rows: each
// rank's rows of them under several ranks (by_rows), the sums of the line over the ranks.
std::vector<Vector<double>> solve_sources(AmgSolver& solver, const MouseProblem& m, const DiffusionOperator& op,
                                          const char* band, const std::vector<Vector<double>>* excitation,
                                          std::vector<SourceRecord>& records) {
  std::vector<Vector<double>> fluence(m.sources.size());
  const std::size_t first = static_cast<std::size_t>(m.rows.first);
  for (std::size_t s = 0; s < m.sources.size(); ++s) {
    const Vector<double> b = excitation ? m.emission_rhs((*excitation)[s]) : m.source_rhs(m.sources[s]);
    const Vector<double>& f = fluence[s];
    const SolveResult r = m.by_rows ? solver.solve_rows(b, fluence[s], false) : solver.solve(b, fluence[s], false);
    SourceRecord& rec = records[s];
    const double power = sum_of(b, [&](std::int64_t i) { return b[i]; }, m.by_rows);
    const double absorbed = sum_of(f, [&](std::int64_t i) { return op.absorption[first + i] * f[i]; }, m.by_rows);
    const double outflow = sum_of(f, [&](std::int64_t i) { return op.boundary[first + i] * f[i]; }, m.by_rows);
    if (excitation) {
      rec.emission = r;
      rec.emission_outflow = outflow;
    } else {
      rec.excitation = r;
      rec.absorbed = absorbed;
      rec.outflow = outflow;
    }
    progress("  %s source %2zu at [%6.1f, %5.1f] mm: %3d iterations %7.3f s, residual %.1e, out %.3e of %.3e "
             "(balance %.0e)%s\n",
             band, s + 1, m.sources[s].spot[0], m.sources[s].spot[1], r.iterations, r.seconds, r.relative_residual,
             outflow, power, power > 0 ? (absorbed + outflow) / power - 1.0 : 0.0, r.converged ? "" : "  NOT CONVERGED");
  }
  return fluence;
}

// The exitance at each detector point, per source and band.
void read_detectors(const MouseProblem& m, const std::vector<Vector<double>>& excitation,
                    const std::vector<Vector<double>>& emission, std::vector<SourceRecord>& records) {
  for (std::size_t s = 0; s < m.sources.size(); ++s)
    for (const Detector& d : m.detectors) {
      DetectorReading r{d.point, d.exitance(m.excitation, excitation[s]), std::nullopt};
      if (!emission.empty()) r.emission = d.exitance(m.emission_operator(), emission[s]);
      records[s].detectors.push_back(r);
    }
}

std::vector<std::int64_t> selected_sources(const Config& config, std::size_t sources) {
  std::vector<std::int64_t> selected = config.output.vtk_sources;
  if (selected.empty())
    for (std::size_t s = 0; s < sources; ++s) selected.push_back(static_cast<std::int64_t>(s + 1));
  return selected;
}

// Per selected source: its exitance through every skin face, in each band.
std::vector<ScalarField> skin_fields(const Config& config, const MouseProblem& m,
                                     const std::vector<Vector<double>>& excitation,
                                     const std::vector<Vector<double>>& emission) {
  std::vector<ScalarField> fields;
  for (std::int64_t s : selected_sources(config, m.sources.size())) {
    fields.push_back({"excitation_exitance_" + std::to_string(s), m.excitation.exitance(excitation[s - 1])});
    if (!emission.empty())
      fields.push_back({"emission_exitance_" + std::to_string(s), m.emission_operator().exitance(emission[s - 1])});
  }
  return fields;
}

// The camera above the back: each voxel column shows its top face; radiance = exitance / pi.
void write_camera(const Config& config, const MouseProblem& m, const std::vector<ScalarField>& skin) {
  const std::vector<std::int64_t> top = m.top_faces();
  PixelGrid grid;
  grid.size = {m.domain.size[0], m.domain.size[1]};
  grid.pixel = m.domain.voxel_size;
  grid.origin = {m.domain.origin[0], m.domain.origin[1], m.domain.origin[2] + m.domain.size[2] * m.domain.voxel_size};
  auto picture = [&](auto value) {
    Vector<double> pixels(top.size());
    for (std::size_t c = 0; c < top.size(); ++c)
      pixels[c] = top[c] < 0 ? std::numeric_limits<double>::quiet_NaN() : value(static_cast<std::size_t>(top[c]));
    return pixels;
  };
  std::vector<ScalarField> pixels;
  for (const ScalarField& f : skin) {
    std::string name = f.name;
    name.replace(name.find("exitance"), 8, "radiance");
    pixels.push_back({name, picture([&](std::size_t face) { return f.values[face] / std::numbers::pi; })});
  }
  pixels.push_back({"skin_z", picture([&](std::size_t face) { return face_centre(m.domain, m.excitation.skin[face].unknown, 5)[2]; })});
  write_picture_vti(config.output.camera, grid, pixels, kMouseFrame);
}

void write_mouse_vtk(const Config& config, const MouseProblem& m, const Array<Index>& aggregates,
                     const std::vector<Vector<double>>& excitation, const std::vector<Vector<double>>& emission) {
  std::vector<ScalarField> scalars;
  for (std::int64_t s : selected_sources(config, m.sources.size())) {
    const std::string k = std::to_string(s);
    scalars.push_back({"fluence_" + k, excitation[s - 1]});
    scalars.push_back({"log10_fluence_" + k, log10_for_display(excitation[s - 1])});
    if (!emission.empty()) {
      scalars.push_back({"emission_" + k, emission[s - 1]});
      scalars.push_back({"log10_emission_" + k, log10_for_display(emission[s - 1])});
    }
  }
  scalars.push_back({"mua_excitation", m.mua(0)});
  scalars.push_back({"musp_excitation", m.musp(0)});
  scalars.push_back({"mua_emission", m.mua(1)});
  scalars.push_back({"musp_emission", m.musp(1)});
  if (m.fluorescence) scalars.push_back({"fluorophore_yield", m.yield});
  Array<Index> tissue(static_cast<std::size_t>(m.domain.unknowns()));
  for (Index u = 0; u < m.domain.unknowns(); ++u) tissue[u] = m.phantom.label[m.domain.voxel_of_unknown[u]];
  std::vector<IntegerField> integers = {{"tissue", std::move(tissue)}};
  if (!aggregates.empty()) integers.push_back({"aggregate", aggregates});
  write_voxel_vti(config.output.vtk, m.domain, scalars, integers, kMouseFrame);
}

// Each rank's rows of the vectors put together on rank 0 (empty elsewhere). Collective.
std::vector<Vector<double>> gathered_on_first(const std::vector<Vector<double>>& rows) {
  std::vector<Vector<double>> whole;
  for (const Vector<double>& v : rows) whole.push_back(gather_on_first(v));
  return whole;
}

// The hierarchy of one band's operator: from the whole matrix, or this rank's rows of it.
std::unique_ptr<AmgSolver> operator_solver(const Config& config, const MouseProblem& m, CsrMatrix<double> A,
                                           bool compare_spgemm, SetupRecord& setup,
                                           std::vector<SpgemmComparisonRow>& comparison) {
  if (m.by_rows)
    return AmgSolver::create(config, RowBlock{m.domain.unknowns(), std::move(A)}, compare_spgemm, setup, comparison);
  return AmgSolver::create(config, std::make_shared<const CsrMatrix<double>>(std::move(A)), compare_spgemm, setup,
                           comparison);
}

void check_vtk_sources(const Config& config, std::size_t sources) {
  for (std::int64_t s : config.output.vtk_sources)
    if (s < 1 || s > static_cast<std::int64_t>(sources))
      throw InputError("output.vtk_sources: source " + std::to_string(s) + " does not exist (the problem has " +
                       std::to_string(sources) + " sources, numbered from 1)");
}

// Rank 0's VTK file of the mouse is written after every solve, beside the fluences kept: checked now, with what
// the solves still need, so that a file too large for the memory is refused before the work (it ran out after
// all of it, losing every output). Per source written and band: the fluence and its log10 as fields (8 bytes
// an unknown each) and as the file's arrays over the box (4 bytes a voxel each in float); the model's fields
// and the writer's buffers beside them.
void require_vtk_memory(const Config& config, const MouseProblem& m) {
  const double sources = static_cast<double>(selected_sources(config, m.sources.size()).size());
  const double bands = m.fluorescence ? 2.0 : 1.0;
  const double unknowns = static_cast<double>(m.domain.unknowns()), voxels = static_cast<double>(m.domain.voxels());
  const double fields = 2.0 * sources * bands * (8.0 * unknowns + 4.0 * voxels);
  const double vtk = fields + 11.0 * 8.0 * voxels;
  const double bytes = vtk + mouse_solve_bytes(config.problem.mouse, unknowns);
  require_memory(saturating_bytes(bytes), "the mouse's solves and its VTK file " + config.output.vtk + " (" +
                                      format_bytes(saturating_bytes(vtk)) + " for the fields of " +
                                      std::to_string(static_cast<long long>(sources)) +
                                      " source(s); output.vtk_sources writes fewer)");
}

// The phantom and its operators (each rank its rows under several ranks), described in the report and on
// the console. Each rank checks sizes and memory on its own: an error on one ends every rank (collectively).
MouseProblem assemble_mouse(const Config& config, RunRecord& record) {
  const MouseParams& params = config.problem.mouse;
  Timer timer;
  std::function<RowRange(std::int64_t)> rows_of;
  if (solve_distributed(config))
    rows_of = [](std::int64_t unknowns) {
      const auto [first, last] = owned_rows(unknowns);
      return RowRange{first, last};
    };
  MouseProblem m;
  collectively([&] {
    m = make_mouse_problem(params, rows_of);
    check_vtk_sources(config, m.sources.size());
    if (Ranks::prints() && !config.output.vtk.empty()) require_vtk_memory(config, m);
  });
  record_problem("mouse", describe(params, m), timer.seconds(), m.excitation.A,
                 m.by_rows ? std::optional<std::int64_t>(m.domain.unknowns()) : std::nullopt, record);
  progress("problem: %s\n         %d unknowns (voxels inside the animal), %lld nonzeros, built in %.3f s%s\n",
           record.problem_description.c_str(), record.rows, static_cast<long long>(record.nnz),
           record.problem_seconds, m.by_rows ? " (each rank its rows)" : "");
  record.mouse = describe_model(params, m);
  print_model(*record.mouse);
  return m;
}

// One record per laser source, its solves filled in later.
std::vector<SourceRecord> source_records(const MouseProblem& m) {
  std::vector<SourceRecord> sources(m.sources.size());
  for (std::size_t s = 0; s < m.sources.size(); ++s) {
    sources[s].index = static_cast<int>(s + 1);
    sources[s].spot = m.sources[s].spot;
    sources[s].position = m.sources[s].position;
    sources[s].skin_z = m.sources[s].surface_z;
  }
  return sources;
}

// Every solve of the run, excitation and emission by source, with the summary line.
std::vector<SolveResult> summarise_solves(RunRecord& record) {
  std::vector<SolveResult> solves;
  double solve_seconds = 0;
  for (const SourceRecord& s : record.sources) {
    solves.push_back(s.excitation);
    if (s.emission) solves.push_back(*s.emission);
  }
  CommunicationStats communication;
  for (const SolveResult& s : solves) {
    solve_seconds += s.seconds;
    communication = communication + s.communication;
  }
  record.solve = record.sources.front().excitation;
  record.peak_memory_bytes = peak_resident_bytes();
  const double setup = record.setup.seconds + (record.emission_setup ? record.emission_setup->seconds : 0.0);
  progress("%zu solves in %.3f s (%.3f s per solve) after %.3f s of setup; peak memory %s\n", solves.size(),
           solve_seconds, solve_seconds / solves.size(), setup, format_bytes(record.peak_memory_bytes).c_str());
  const CommunicationStats setups =
      record.setup.communication + (record.emission_setup ? record.emission_setup->communication : CommunicationStats{});
  record_rank_loads(setups, communication, "the solves'", record);
  return solves;
}

// Rank 0's outputs (the VTK image, the skin, the camera, the report): together or not at all, each named
// once they are all written.
void write_mouse_outputs(const Config& config, const MouseProblem& m, const Array<Index>& aggregates,
                         const std::vector<Vector<double>>& excitation, const std::vector<Vector<double>>& emission,
                         const RunRecord& record) {
  const OutputParams& out = config.output;
  std::vector<std::string> written;
  OutputBatch batch;
  if (!out.vtk.empty()) {
    write_mouse_vtk(config, m, aggregates, excitation, emission);
    written.push_back("VTK image data (voxels of the animal, " +
                      std::to_string(out.vtk_sources.empty() ? m.sources.size() : out.vtk_sources.size()) +
                      " sources) written to " + out.vtk);
  }
  if (!out.skin.empty() || !out.camera.empty()) {
    const std::vector<ScalarField> skin = skin_fields(config, m, excitation, emission);
    if (!out.skin.empty()) {
      write_skin_vtp(out.skin, m.domain, m.excitation.skin, skin, kMouseFrame);
      written.push_back("skin surface (" + std::to_string(m.excitation.skin.size()) +
                        " voxel faces, exitance per source) written to " + out.skin);
    }
    if (!out.camera.empty()) {
      write_camera(config, m, skin);
      written.push_back("camera view from above (" + std::to_string(m.domain.size[0]) + " x " +
                        std::to_string(m.domain.size[1]) + " pixels, radiance per source) written to " + out.camera);
    }
  }
  commit_with_report(out, record, batch, std::move(written));
}

}  // namespace

int run_mouse(const Config& config, RunRecord& record) {
  MouseProblem m = assemble_mouse(config, record);
  std::vector<SourceRecord>& sources = record.sources;
  sources = source_records(m);

  progress("excitation, %d nm:\n", config.problem.mouse.wavelengths[0]);
  const auto excitation_solver =
      operator_solver(config, m, std::move(m.excitation.A), config.compare_spgemm, record.setup, record.spgemm_comparison);
  const std::vector<Vector<double>> excitation =
      solve_sources(*excitation_solver, m, m.excitation, "excitation", nullptr, sources);

  std::vector<Vector<double>> emission;
  if (m.fluorescence) {
    AmgSolver* emission_solver = excitation_solver.get();
    std::unique_ptr<AmgSolver> own;
    if (m.emission_differs) {
      progress("emission, %d nm:\n", config.problem.mouse.wavelengths[1]);
      record.emission_setup.emplace();
      std::vector<SpgemmComparisonRow> unused;  // the comparison covers the excitation hierarchy
      own = operator_solver(config, m, std::move(m.emission.A), false, *record.emission_setup, unused);
      emission_solver = own.get();
    } else {
      progress("emission: same optical properties as the excitation, same hierarchy\n");
    }
    emission = solve_sources(*emission_solver, m, m.emission_operator(), "emission  ", &excitation, sources);
  }

  const std::vector<SolveResult> solves = summarise_solves(record);
  const Array<Index> aggregates =
      config.output.vtk.empty() ? Array<Index>{} : aggregates_to_write(*excitation_solver, record.setup);
  // Rank 0 reads the detectors and writes (its failure is every rank's), from the ranks' rows of the
  // fluences put together there where the detectors or the outputs read them; its peak memory with them.
  const OutputParams& out = config.output;
  const bool fluences_read = !m.detectors.empty() || !out.vtk.empty() || !out.skin.empty() || !out.camera.empty();
  std::vector<Vector<double>> gathered_excitation, gathered_emission;
  if (m.by_rows && fluences_read) {
    gathered_excitation = gathered_on_first(excitation);
    gathered_emission = gathered_on_first(emission);
    record.peak_memory_bytes = peak_resident_bytes();
  }
  const std::vector<Vector<double>>& whole_excitation = m.by_rows ? gathered_excitation : excitation;
  const std::vector<Vector<double>>& whole_emission = m.by_rows ? gathered_emission : emission;
  collectively([&] {
    if (!Ranks::prints()) return;
    read_detectors(m, whole_excitation, whole_emission, sources);
    write_mouse_outputs(config, m, aggregates, whole_excitation, whole_emission, record);
  });
  return exit_status(config, solves);
}

}  // namespace amgsolve
