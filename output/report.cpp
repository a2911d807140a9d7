#include "output/report.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>

#include "common/atomic_file.hpp"
#include "common/csv.hpp"
#include "common/error.hpp"

namespace amgsolve {
namespace {

nlohmann::json transfers_json(const TransferCounts& t) {
  return {{"to_device_bytes", t.to_device}, {"to_host_bytes", t.to_host}, {"messages", t.messages}};
}

// A distributed product's phases: the slowest rank's seconds and the bytes all ranks sent.
nlohmann::json phases_json(const std::vector<SpgemmPhase>& phases) {
  nlohmann::json j = nlohmann::json::array();
  for (const SpgemmPhase& p : phases) j.push_back({{"name", p.name}, {"seconds", p.seconds}, {"bytes", p.bytes}});
  return j;
}

// A setup product; a distributed one also with its phases (fetch, multiply, or the grid's stages).
nlohmann::json spgemm_json(const SpgemmStats& s) {
  nlohmann::json j = {{"seconds", s.seconds()},
                      {"symbolic_seconds", s.symbolic_seconds},
                      {"numeric_seconds", s.numeric_seconds},
                      {"multiplications", s.multiplications},
                      {"nnz", s.nnz},
                      {"gflops", s.gflops()},
                      {"compression_factor", s.compression_factor()},
                      {"extra_bytes", s.extra_bytes},
                      {"choice", s.choice}};
  if (!s.phases.empty()) j["phases"] = phases_json(s.phases);
  return j;
}

nlohmann::json level_json(const LevelInfo& l) {
  nlohmann::json j = {{"level", l.level},
                      {"rows", l.rows},
                      {"nnz", l.nnz},
                      {"nnz_per_row", l.rows > 0 ? static_cast<double>(l.nnz) / l.rows : 0.0},
                      {"seconds", l.seconds},
                      {"spgemm_seconds", l.spgemm_seconds},
                      {"smoother", l.smoother},
                      {"coarsest", l.coarsest}};
  if (!l.coarsest) {
    j["aggregates"] = l.aggregates;
    j["rho_dinv_a"] = l.rho;
    if (l.strength_drift >= 0) j["strength_drift"] = l.strength_drift;  // a re-setup's, on its kept strength
    for (const auto& [phase, seconds] : l.phases.named()) j["phases"][phase] = seconds;
    j["spgemm"] = {{"prolongator", spgemm_json(l.prolongator_product)},
                   {"ap", spgemm_json(l.ap_product)},
                   {"rap", spgemm_json(l.rap_product)}};
  }
  return j;
}

nlohmann::json format_cost_json(const FormatCost& c) {
  return {{"format", format_name(c.format)},
          {"bytes", c.bytes},
          {"overhead_vs_csr", c.overhead},
          {"bytes_per_spmv", c.bytes_moved},
          {"code_balance_bytes_per_flop", c.code_balance}};
}

nlohmann::json setup_json(const SetupRecord& s) {
  nlohmann::json levels = nlohmann::json::array();
  for (std::size_t l = 0; l < s.levels.size(); ++l) {
    levels.push_back(level_json(s.levels[l]));
    if (l < s.spmv_formats.size()) {
      nlohmann::json formats = nlohmann::json::array();
      for (const FormatCost& c : s.spmv_formats[l]) formats.push_back(format_cost_json(c));
      levels.back()["spmv_formats"] = formats;
    }
  }
  return {{"seconds", s.seconds},
          {"levels", levels},
          {"operator_complexity", s.operator_complexity},
          {"grid_complexity", s.grid_complexity},
          {"spgemm_backend", s.spgemm_backend},
          {"nullspace", s.nullspace},
          {"nullspace_vectors", s.nullspace_vectors},
          {"block_size", s.block_size},
          {"near_nullspace_vectors", s.near_nullspace_vectors},
          {"near_nullspace_sweeps", s.near_nullspace_sweeps},
          {"hierarchy_bytes", s.hierarchy_bytes},
          {"model_bytes_per_iteration", s.model_bytes_per_iteration},
          {"spmv_format", s.spmv_format},
          {"spmv_format_reason", s.spmv_format_reason},
          {"halo_exchange", to_string(s.halo_exchange)},
          {"backend_bytes", s.backend_bytes},
          {"transfers", transfers_json(s.transfers)}};
}

nlohmann::json brief_solve_json(const SolveResult& s) {
  return {{"iterations", s.iterations},
          {"relative_residual", s.relative_residual},
          {"converged", s.converged},
          {"seconds", s.seconds},
          {"history", s.history}};
}

nlohmann::json source_json(const SourceRecord& s) {
  nlohmann::json j = {{"index", s.index},
                      {"spot", s.spot},
                      {"position", s.position},
                      {"skin_z", s.skin_z},
                      {"excitation", brief_solve_json(s.excitation)},
                      {"absorbed_power", s.absorbed},
                      {"boundary_outflow", s.outflow}};
  if (s.emission) {
    j["emission"] = brief_solve_json(*s.emission);
    j["emission"]["boundary_outflow"] = s.emission_outflow;
  }
  if (!s.detectors.empty()) {
    j["detectors"] = nlohmann::json::array();
    for (const DetectorReading& d : s.detectors) {
      nlohmann::json reading = {{"point", d.point}, {"excitation_exitance", d.excitation}};
      if (d.emission) {
        reading["emission_exitance"] = *d.emission;
        // No excitation light there (it underflowed): no ratio, rather than an infinity JSON cannot hold.
        if (d.excitation > 0) reading["born_ratio"] = *d.emission / d.excitation;
      }
      j["detectors"].push_back(std::move(reading));
    }
  }
  return j;
}

nlohmann::json mouse_json(const MouseRecord& m) {
  nlohmann::json tissues = nlohmann::json::array();
  for (const TissueRecord& t : m.tissues)
    tissues.push_back({{"name", t.name},
                       {"voxels", t.voxels},
                       {"volume_cm3", t.volume_cm3},
                       {"excitation", {{"mua", t.mua[0]}, {"musp", t.musp[0]}}},
                       {"emission", {{"mua", t.mua[1]}, {"musp", t.musp[1]}}}});
  nlohmann::json j = {{"frame", m.frame},
                      {"wavelengths_nm", m.wavelengths_nm},
                      {"source_power", m.source_power},
                      {"fluorescence", m.fluorescence},
                      {"refractive_index", m.refractive_index},
                      {"reflection", m.reflection},
                      {"robin_factor", m.robin_factor},
                      {"skin_area_mm2", m.skin_area_mm2},
                      {"staircase_area_mm2", m.staircase_area_mm2},
                      {"tissues", std::move(tissues)}};
  if (m.fluorescence) j["fluorophore"] = {{"tumour", m.tumour_yield}, {"background", m.background_yield}};
  return j;
}

nlohmann::json communication_json(const CommunicationStats& c) {
  return {{"halo_bytes", c.halo_bytes},
          {"halo_messages", c.halo_messages},
          {"halo_wait_seconds", c.halo_wait_seconds},
          {"reductions", c.reductions},
          {"reduction_seconds", c.reduction_seconds},
          {"gathered_bytes", c.gathered_bytes},
          {"gather_seconds", c.gather_seconds}};
}

nlohmann::json rank_json(Index rows, const CommunicationStats& c) {
  nlohmann::json j = communication_json(c);
  j["rows"] = rows;
  return j;
}

nlohmann::json comparison_json(const SpgemmComparisonRow& r) {
  return {{"level", r.level},
          {"product", r.product},
          {"backend", r.backend},
          {"external_baseline", r.external_baseline},
          {"choice", r.stats.choice},
          {"seconds", r.stats.seconds()},
          {"runs", r.runs},
          {"min_seconds", r.min_seconds},
          {"max_seconds", r.max_seconds},
          {"symbolic_seconds", r.stats.symbolic_seconds},
          {"numeric_seconds", r.stats.numeric_seconds},
          {"gflops", r.stats.gflops()},
          {"nnz", r.stats.nnz},
          {"compression_factor", r.stats.compression_factor()},
          {"extra_bytes", r.stats.extra_bytes},
          {"agrees", r.agrees},
          {"max_relative_difference", r.max_relative_difference},
          {"error", r.error},
          {"phases", phases_json(r.stats.phases)}};
}

}  // namespace

nlohmann::json report_json(const RunRecord& run) {
  nlohmann::json j = {
      {"amgsolve", run.program},
      {"config", run.config_file},
      {"overrides", run.overrides},
      {"problem",
       {{"description", run.problem_description},
        {"type", run.problem_type},
        {"rows", run.rows},
        {"nnz", run.nnz},
        {"seconds", run.problem_seconds},
        {"assembled_by_rows", run.assembled_by_rows}}},
      {"setup", setup_json(run.setup)},
      {"solve",
       {{"type", run.solver_type},
        {"precision", run.precision},
        {"tolerance", run.tolerance},
        {"absolute_tolerance", run.absolute_tolerance},
        {"effective_tolerance", run.solve.tolerance},
        {"initial_guess", run.initial_guess},
        {"iterations", run.solve.iterations},
        {"relative_residual", run.solve.relative_residual},
        {"converged", run.solve.converged},
        {"stagnated", run.solve.stagnated},
        {"seconds", run.solve.seconds},
        {"convergence_factor", run.solve.convergence_factor()},
        {"history", run.solve.history},
        {"transfers", transfers_json(run.solve.transfers)}}},
      {"backend", run.backend},
      {"threads", run.threads},
      {"ranks", run.ranks},
      {"peak_memory_bytes", run.peak_memory_bytes},
  };
  if (!run.rank_loads.empty()) {
    // What each rank held and sent during the setup (its rows of the finest level; the halo bytes count
    // every point-to-point and all-to-all message of the setup) and during the solve.
    j["setup"]["per_rank"] = j["solve"]["per_rank"] = nlohmann::json::array();
    for (const RankLoad& r : run.rank_loads) {
      j["setup"]["per_rank"].push_back(rank_json(r.rows, r.setup_communication));
      j["solve"]["per_rank"].push_back(rank_json(r.rows, r.communication));
    }
  }
  if (!run.row_length_histogram.empty()) j["problem"]["row_length_histogram"] = run.row_length_histogram;
  if (run.emission_setup) j["emission_setup"] = setup_json(*run.emission_setup);
  if (run.mouse) j["problem"]["mouse"] = mouse_json(*run.mouse);
  if (!run.sources.empty()) {
    j["sources"] = nlohmann::json::array();
    for (const SourceRecord& s : run.sources) j["sources"].push_back(source_json(s));
  }
  if (!run.steps.empty()) {
    j["steps"] = nlohmann::json::array();
    for (const StepRecord& s : run.steps) {
      nlohmann::json step = brief_solve_json(s.solve);
      step["step"] = s.step;
      step["contrast"] = s.contrast;
      step["setup_seconds"] = s.setup_seconds;
      step["reused"] = s.reused;
      step["setup_note"] = s.setup_note;
      j["steps"].push_back(std::move(step));
    }
  }
  if (!run.load_cases.empty()) {
    j["load_cases"] = nlohmann::json::array();
    for (std::size_t c = 0; c < run.load_cases.size(); ++c) {
      nlohmann::json load_case = brief_solve_json(run.load_cases[c]);
      load_case["column"] = c + 1;
      j["load_cases"].push_back(std::move(load_case));
    }
  }
  if (run.relative_error) j["solve"]["relative_error"] = *run.relative_error;
  if (run.spgemm_compared || !run.spgemm_comparison.empty()) {
    j["spgemm_comparison"] = nlohmann::json::array();
    for (const SpgemmComparisonRow& r : run.spgemm_comparison) j["spgemm_comparison"].push_back(comparison_json(r));
  }
  return j;
}

void write_report(const std::string& path, const RunRecord& run) {
  AtomicFile target(path, "report file", kReportMark);
  {
    std::ofstream out(target.temp_path());
    if (!out) throw Error("cannot create report " + target.described() + ": " + std::strerror(errno));
    // A file name that is not UTF-8 (a byte of Latin-1 in a path) is written with U+FFFD in its place: JSON
    // holds UTF-8 only, and the strict default threw after the whole run, losing every output.
    out << report_json(run).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    out.close();
    if (out.fail()) throw Error("error while writing report " + target.described() + ": " + std::strerror(errno));
  }
  target.commit();
}

}  // namespace amgsolve

namespace amgsolve {

void write_spgemm_comparison_csv(const std::string& path, const std::vector<SpgemmComparisonRow>& rows) {
  AtomicFile target(path, "SpGEMM comparison file", kSpgemmCsvMark);
  {
    std::ofstream out(target.temp_path());
    if (!out) throw Error("cannot create " + target.described() + ": " + std::strerror(errno));
    // Columns added later go at the end, so that readers by position keep working.
    out << "level,product,backend,seconds,symbolic_seconds,numeric_seconds,gflops,nnz,compression_factor,"
           "extra_bytes,agrees,max_relative_difference,external_baseline,choice,error,runs,min_seconds,max_seconds\n";
    out.precision(9);
    for (const SpgemmComparisonRow& r : rows)
      out << r.level << ',' << r.product << ',' << r.backend << ',' << r.stats.seconds() << ','
          << r.stats.symbolic_seconds << ',' << r.stats.numeric_seconds << ',' << r.stats.gflops() << ','
          << r.stats.nnz << ',' << r.stats.compression_factor() << ',' << r.stats.extra_bytes << ','
          << (r.agrees ? "true" : "false") << ',' << r.max_relative_difference << ','
          << (r.external_baseline ? "true" : "false") << ',' << csv_field(r.stats.choice) << ','
          << csv_field(r.error) << ',' << r.runs << ',' << r.min_seconds << ',' << r.max_seconds << '\n';
    out.close();
    if (out.fail()) throw Error("error while writing " + target.described() + ": " + std::strerror(errno));
  }
  target.commit();
}

}  // namespace amgsolve
