// Configuration loading: defaults from the schema, errors that name the key, the file and the line,
// --set overrides, and docs/CONFIG.md kept equal to the schema it is generated from.
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "config/config.hpp"
#include "config/schema.hpp"
#include "spgemm/registry.hpp"
#include "test_support.hpp"

namespace amgsolve {
namespace {

using test::ScratchDir;

// The what() of the InputError thrown by f (test::error_of).
template <class F>
std::string error_of(F&& f) {
  return test::error_of<InputError>(std::forward<F>(f));
}

// The error of parsing `yaml` (named cfg.yaml in messages) with the given --set overrides.
std::string parse_error(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  return error_of([&] { (void)parse_config(yaml, "cfg.yaml", overrides); });
}

::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "message \"" << text << "\" does not contain \"" << part << "\"";
}

::testing::AssertionResult LacksText(const std::string& text, const std::string& part) {
  if (text.find(part) == std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "message \"" << text << "\" should not contain \"" << part << "\"";
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// ---------------------------------------------------------------- defaults

TEST(Config, EmptySectionsGiveTheSchemaDefaults) {
  const Config c = parse_config("problem:\namg:\nsolver:\noutput:\n", "cfg.yaml");
  EXPECT_EQ(c.source, "cfg.yaml");
  EXPECT_EQ(c.problem.type, ProblemType::poisson);
  EXPECT_EQ(c.problem.poisson.stencil, Stencil::p7);
  EXPECT_EQ(c.problem.poisson.size, (std::vector<std::int64_t>{128, 128, 128}));
  EXPECT_EQ(c.problem.poisson.rhs, PoissonRhs::ones);

  // The schema's defaults (what users get) must be the library's defaults (what the code documents).
  const AmgParams d;
  EXPECT_EQ(c.backend, BackendKind::cpu);
  EXPECT_EQ(c.amg.spgemm, default_spgemm_backend(BackendKind::cpu));  // amg.spgemm empty: the backend's
  EXPECT_EQ(c.amg.coarse_size, d.coarse_size);
  EXPECT_EQ(c.amg.max_levels, d.max_levels);
  EXPECT_DOUBLE_EQ(c.amg.strength_threshold, d.strength_threshold);
  EXPECT_EQ(c.amg.seed, d.seed);
  EXPECT_DOUBLE_EQ(c.amg.prolongator_damping, d.prolongator_damping);
  EXPECT_EQ(c.amg.lanczos_steps, d.lanczos_steps);
  EXPECT_EQ(c.amg.smoother.type, d.smoother.type);
  EXPECT_EQ(c.amg.smoother.degree, d.smoother.degree);
  EXPECT_DOUBLE_EQ(c.amg.smoother.chebyshev_ratio, d.smoother.chebyshev_ratio);
  EXPECT_DOUBLE_EQ(c.amg.smoother.eigenvalue_safety, d.smoother.eigenvalue_safety);
  EXPECT_EQ(c.amg.smoother.sweeps, d.smoother.sweeps);
  EXPECT_DOUBLE_EQ(c.amg.smoother.omega, d.smoother.omega);
  EXPECT_EQ(c.amg.pre_smooth, d.pre_smooth);
  EXPECT_EQ(c.amg.post_smooth, d.post_smooth);

  const SolverParams sd;
  EXPECT_EQ(c.solver.type, sd.type);
  EXPECT_DOUBLE_EQ(c.solver.tolerance, sd.tolerance);
  EXPECT_EQ(c.solver.max_iterations, sd.max_iterations);
  EXPECT_EQ(c.print_every, 1);

  EXPECT_EQ(c.output.report, "");
  EXPECT_EQ(c.output.vtk, "");
  EXPECT_EQ(c.output.solution, "");
}

TEST(Config, EmptyDocumentGivesTheSameDefaults) {
  const Config empty = parse_config("", "cfg.yaml");
  const Config sections = parse_config("problem:\namg:\nsolver:\noutput:\n", "cfg.yaml");
  EXPECT_EQ(empty.problem.poisson.size, sections.problem.poisson.size);
  EXPECT_EQ(empty.amg.spgemm, sections.amg.spgemm);
  EXPECT_EQ(empty.amg.coarse_size, sections.amg.coarse_size);
  EXPECT_EQ(empty.solver.tolerance, sections.solver.tolerance);
  EXPECT_EQ(empty.solver.max_iterations, sections.solver.max_iterations);
}

// The schema's defaults (what a run uses) agree with the C++ structs' defaults (what library users get).
TEST(Config, SchemaDefaultsMatchTheParameterStructs) {
  const Config c = parse_config("", "cfg.yaml");
  const AmgParams a;
  EXPECT_EQ(c.amg.coarse_size, a.coarse_size);
  EXPECT_EQ(c.amg.max_levels, a.max_levels);
  EXPECT_DOUBLE_EQ(c.amg.strength_threshold, a.strength_threshold);
  EXPECT_EQ(c.amg.seed, a.seed);
  EXPECT_DOUBLE_EQ(c.amg.prolongator_damping, a.prolongator_damping);
  EXPECT_EQ(c.amg.lanczos_steps, a.lanczos_steps);
  EXPECT_EQ(c.amg.smoother.type, a.smoother.type);
  EXPECT_EQ(c.amg.smoother.degree, a.smoother.degree);
  EXPECT_DOUBLE_EQ(c.amg.smoother.chebyshev_ratio, a.smoother.chebyshev_ratio);
  EXPECT_DOUBLE_EQ(c.amg.smoother.eigenvalue_safety, a.smoother.eigenvalue_safety);
  EXPECT_EQ(c.amg.smoother.sweeps, a.smoother.sweeps);
  EXPECT_DOUBLE_EQ(c.amg.smoother.omega, a.smoother.omega);
  EXPECT_EQ(c.amg.pre_smooth, a.pre_smooth);
  EXPECT_EQ(c.amg.post_smooth, a.post_smooth);
  const SolverParams s;
  EXPECT_EQ(c.solver.type, s.type);
  EXPECT_DOUBLE_EQ(c.solver.tolerance, s.tolerance);
  EXPECT_EQ(c.solver.max_iterations, s.max_iterations);
  EXPECT_EQ(c.solver.spmv_format, s.spmv_format);
  const PoissonParams p;
  EXPECT_EQ(c.problem.poisson.stencil, p.stencil);
  EXPECT_EQ(c.problem.poisson.size, p.size);
  EXPECT_EQ(c.problem.poisson.rhs, p.rhs);
}

TEST(Config, ReadsEveryKindOfValue) {
  const Config c = parse_config(
      "# a comment\n"
      "problem:\n"
      "  type: poisson\n"
      "  stencil: 9pt\n"
      "  size: [40, 50]\n"
      "  rhs: manufactured\n"
      "amg:\n"
      "  coarse_size: 77\n"
      "  strength_threshold: 0.25\n"
      "  smoother:\n"
      "    type: jacobi\n"
      "    omega: 0.6\n"
      "solver:\n"
      "  type: amg\n"
      "  tolerance: 1.0e-6\n"
      "  print_every: 0\n"
      "output:\n"
      "  report: out/r.json\n",
      "cfg.yaml");
  EXPECT_EQ(c.problem.poisson.stencil, Stencil::p9);
  EXPECT_EQ(c.problem.poisson.size, (std::vector<std::int64_t>{40, 50}));
  EXPECT_EQ(c.problem.poisson.rhs, PoissonRhs::manufactured);
  EXPECT_EQ(c.amg.coarse_size, 77);
  EXPECT_DOUBLE_EQ(c.amg.strength_threshold, 0.25);
  EXPECT_EQ(c.amg.smoother.type, SmootherType::jacobi);
  EXPECT_DOUBLE_EQ(c.amg.smoother.omega, 0.6);
  EXPECT_EQ(c.solver.type, SolverType::amg);
  EXPECT_DOUBLE_EQ(c.solver.tolerance, 1e-6);
  EXPECT_EQ(c.print_every, 0);
  EXPECT_EQ(c.output.report, "out/r.json");
}

// Each name an enumeration's table declares (common/enum_names.hpp) is what its key reads, and name_of writes it.
// `context`: other assignments a name needs to be valid (amg.nullspace near_nullspace: a system's block size).
template <class Enum, class Field>
void expect_every_name_read(const char* key, Field field,
                            const std::function<std::vector<std::string>(const char*)>& context = {}) {
  for (const auto& [name, value] : names_of(Enum{})) {
    std::string assignment = key;  // appended, not key + "=" + name: GCC 12 warns falsely on that (-Warray-bounds)
    assignment.append("=").append(name);
    std::vector<std::string> assignments = context ? context(name) : std::vector<std::string>{};
    assignments.push_back(assignment);
    const Config c = parse_config("", "cfg.yaml", assignments);
    EXPECT_TRUE(field(c) == value) << key << "=" << name;
    EXPECT_STREQ(name_of(value), name);
  }
}

TEST(Config, EveryDeclaredNameOfAChoiceIsRead) {
  expect_every_name_read<SolverType>("solver.type", [](const Config& c) { return c.solver.type; });
  expect_every_name_read<Precision>("solver.precision", [](const Config& c) { return c.solver.precision; });
  expect_every_name_read<SpmvFormat>("solver.spmv_format", [](const Config& c) { return c.solver.spmv_format; });
  expect_every_name_read<HaloMode>("solver.halo_exchange", [](const Config& c) { return c.solver.halo_exchange; });
  expect_every_name_read<SmootherType>("amg.smoother.type", [](const Config& c) { return c.amg.smoother.type; });
  expect_every_name_read<SpectralRadius>("amg.spectral_radius", [](const Config& c) { return c.amg.spectral_radius; });
  expect_every_name_read<NullspaceChoice>("amg.nullspace", [](const Config& c) { return c.amg.nullspace; },
                                         [](const char* name) {
                                           return std::string(name) == "near_nullspace"
                                                      ? std::vector<std::string>{"amg.block_size=2"}
                                                      : std::vector<std::string>{};
                                         });
  expect_every_name_read<SmootherDiagonal>("amg.smoother.diagonal",
                                           [](const Config& c) { return c.amg.smoother.diagonal; });
  EXPECT_STREQ(name_of(static_cast<HaloMode>(9)), "?");
  EXPECT_FALSE(is_named(static_cast<SmootherType>(9)));
}

TEST(Config, BackendAndSpmvFormat) {
  const Config c = parse_config("backend: cpu\nsolver:\n  spmv_format: ellpack-r\n", "cfg.yaml");
  EXPECT_EQ(c.backend_choice, BackendChoice::cpu);
  EXPECT_EQ(c.backend, BackendKind::cpu);
  EXPECT_EQ(c.solver.spmv_format, SpmvFormat::ellpack_r);
  for (const char* format : {"auto", "csr", "ellpack-r", "pjds"})
    EXPECT_EQ(format_name(parse_config("", "cfg.yaml", {std::string("solver.spmv_format=") + format}).solver.spmv_format),
              format);
  EXPECT_THROW(parse_config("solver:\n  spmv_format: ell\n", "cfg.yaml"), InputError);
  EXPECT_THROW(parse_config("backend: gpu\n", "cfg.yaml"), InputError);
  // auto resolves once, at load, to what resolve_backend says.
  const Config automatic = parse_config("backend: auto\n", "cfg.yaml");
  EXPECT_EQ(automatic.backend_choice, BackendChoice::automatic);
  EXPECT_EQ(automatic.backend, gpu_status().usable() ? BackendKind::cuda : BackendKind::cpu);
  EXPECT_EQ(automatic.amg.spgemm, default_spgemm_backend(automatic.backend));
}

// Loaded for several MPI ranks the setup runs on the ranks' CPU cores: auto is the cpu, amg.spgemm one of
// the cpu's or a distributed one (the default the cpu's), whatever the backend.
TEST(Config, OnSeveralRanksTheSetupsSpgemmIsTheCpus) {
  const Config automatic = parse_config("backend: auto\n", "cfg.yaml", {}, "", 4);
  EXPECT_EQ(automatic.ranks, 4);
  EXPECT_EQ(automatic.backend, BackendKind::cpu);
  EXPECT_EQ(automatic.amg.spgemm, default_spgemm_backend(BackendKind::cpu));
  const std::string e = error_of([] { (void)parse_config("amg:\n  spgemm: cusparse\n", "cfg.yaml", {}, "", 2); });
  EXPECT_NE(e.find("cfg.yaml:2:"), std::string::npos) << e;
  EXPECT_NE(e.find("not a SpGEMM backend of backend cpu"), std::string::npos) << e;
  if (gpu_status().usable()) {  // backend cuda: the solve on the GPUs, the setup's products still the cpu's
    const Config on_gpus = parse_config("backend: cuda\namg:\n  spgemm: rowwise\n", "cfg.yaml", {}, "", 2);
    EXPECT_EQ(on_gpus.backend, BackendKind::cuda);
    EXPECT_EQ(parse_config("backend: cuda\n", "cfg.yaml", {}, "", 2).amg.spgemm,
              default_spgemm_backend(BackendKind::cpu));
  }
}

TEST(Config, CudaBackendWithoutAGpuNamesTheKeyLineAndReason) {
  if (gpu_status().usable()) GTEST_SKIP() << "a GPU is present: backend cuda is honoured";
  const std::string e = parse_error("problem:\n  type: poisson\nbackend: cuda\n");
  EXPECT_NE(e.find("cfg.yaml:3:"), std::string::npos) << e;
  EXPECT_NE(e.find("backend: the cuda backend needs a GPU"), std::string::npos) << e;
  EXPECT_NE(e.find(gpu_status().unavailable_reason), std::string::npos) << e;
}

// The device keys of earlier versions are errors that name what replaced them, not silently ignored.
TEST(Config, RetiredDeviceKeysNameTheirReplacement) {
  for (const char* yaml : {"amg:\n  device: gpu\n", "solver:\n  device: cpu\n"}) {
    const std::string e = parse_error(yaml);
    EXPECT_NE(e.find("cfg.yaml:2:"), std::string::npos) << e;
    EXPECT_NE(e.find("device' was replaced by the top-level key `backend` (cpu, cuda or auto)"), std::string::npos)
        << e;
  }
  const std::string e = parse_error("", {"amg.device=gpu"});
  EXPECT_NE(e.find("--set amg.device"), std::string::npos) << e;
}

// A SpGEMM name is checked against the chosen backend's, and the error lists those it has.
TEST(Config, SpgemmOfAnotherBackendListsTheBackendsOwn) {
  const std::string e = parse_error("amg:\n  spgemm: rmerge\n");
  EXPECT_NE(e.find("cfg.yaml:2:"), std::string::npos) << e;
  EXPECT_NE(e.find("not a SpGEMM backend of backend cpu"), std::string::npos) << e;
  EXPECT_NE(e.find("gustavson, hash"), std::string::npos) << e;
  EXPECT_EQ(e.find("cusparse"), std::string::npos) << "the list names the cpu backend's only: " << e;
}

TEST(Config, CompareIsAKeyNotABackendName) {
  EXPECT_TRUE(parse_config("amg:\n  compare_spgemm: true\n", "cfg.yaml").compare_spgemm);
  EXPECT_FALSE(parse_config("", "cfg.yaml").compare_spgemm);
  const std::string e = parse_error("amg:\n  spgemm: compare\n");
  EXPECT_NE(e.find("cfg.yaml:2:"), std::string::npos) << e;
  EXPECT_NE(e.find("amg.compare_spgemm: true"), std::string::npos) << e;
  const std::string csv = parse_error("output:\n  spgemm_csv: c.csv\n");
  EXPECT_NE(csv.find("cfg.yaml:2:"), std::string::npos) << csv;
  EXPECT_NE(csv.find("output.spgemm_csv needs amg.compare_spgemm"), std::string::npos) << csv;
  EXPECT_NO_THROW(parse_config("amg:\n  compare_spgemm: true\noutput:\n  spgemm_csv: c.csv\n", "cfg.yaml"));
}

// A checkerboard's keys without the checkerboard, and a fluorophore's without fluorescence, would change
// nothing: refused naming the key and what it needs (a contrast of 1e6 ran as the constant coefficient).
TEST(Config, KeysOfAnOptionThatIsOffAreRefused) {
  const std::string contrast = parse_error("problem:\n  type: poisson\n  contrast: 1.0e6\n");
  EXPECT_NE(contrast.find("cfg.yaml:3:"), std::string::npos) << contrast;
  EXPECT_NE(contrast.find("problem.contrast does nothing without problem.coefficient: checkerboard"), std::string::npos)
      << contrast;
  EXPECT_NE(parse_error("", {"problem.cells=2"}).find("--set problem.cells does nothing"), std::string::npos);
  EXPECT_NO_THROW(parse_config("problem:\n  coefficient: checkerboard\n  contrast: 1.0e6\n  cells: 2\n", "cfg.yaml"));
  const std::string yield =
      parse_error("problem:\n  type: mouse\n  fluorophore:\n    background: 0.01\n");
  EXPECT_NE(yield.find("problem.fluorophore.background does nothing without problem.fluorescence: true"),
            std::string::npos)
      << yield;
}

// One smoother's keys under the other, and Lanczos' steps under Gershgorin's bound, ran as if not given (a
// Jacobi config's `degree: 4`, the README's remedy for a slow Chebyshev cycle, changed nothing).
TEST(Config, KeysOfTheSmootherNotChosenAreRefused) {
  const std::string degree = parse_error("amg:\n  smoother:\n    type: jacobi\n    degree: 4\n");
  EXPECT_TRUE(Contains(degree, "cfg.yaml:4: amg.smoother.degree does nothing without amg.smoother.type: chebyshev"))
      << degree;
  EXPECT_TRUE(Contains(parse_error("", {"amg.smoother.sweeps=3"}),
                       "--set amg.smoother.sweeps does nothing without amg.smoother.type: jacobi"));
  EXPECT_TRUE(Contains(parse_error("", {"amg.smoother.omega=0.5"}), "amg.smoother.omega does nothing"));
  EXPECT_TRUE(Contains(parse_error("amg:\n  smoother:\n    type: jacobi\n    chebyshev_ratio: 20\n"),
                       "amg.smoother.chebyshev_ratio does nothing"));
  EXPECT_TRUE(Contains(parse_error("", {"amg.smoother.type=jacobi", "amg.smoother.eigenvalue_safety=1.2"}),
                       "amg.smoother.eigenvalue_safety does nothing"));
  EXPECT_TRUE(Contains(parse_error("amg:\n  smoother:\n    type: gauss_seidel\n    diagonal: node\n"),
                       "amg.smoother.diagonal does nothing without amg.smoother.type chebyshev or jacobi"));
  EXPECT_EQ(parse_config("amg:\n  smoother:\n    type: gauss_seidel\n", "cfg.yaml").backend, BackendKind::cpu);
  EXPECT_TRUE(Contains(parse_error("", {"amg.smoother.type=gauss_seidel", "amg.smoother.degree=3"}),
                       "amg.smoother.degree does nothing"));
  EXPECT_TRUE(Contains(parse_error("", {"amg.spectral_radius=gershgorin", "amg.lanczos_steps=10"}),
                       "amg.lanczos_steps does nothing without amg.spectral_radius: lanczos"));
  // Each with its own smoother and estimate; a file's keys of one smoother kept quiet where --set chooses the
  // other (as for the checkerboard's keys).
  EXPECT_EQ(parse_config("amg:\n  smoother:\n    type: jacobi\n    sweeps: 3\n    omega: 0.5\n", "cfg.yaml")
                .amg.smoother.sweeps,
            3);
  EXPECT_EQ(parse_config("amg:\n  lanczos_steps: 10\n  smoother:\n    degree: 4\n", "cfg.yaml").amg.smoother.degree, 4);
  EXPECT_EQ(parse_config("amg:\n  smoother:\n    degree: 4\n", "cfg.yaml", {"amg.smoother.type=jacobi"})
                .amg.smoother.type,
            SmootherType::jacobi);
  EXPECT_TRUE(Contains(parse_error("amg:\n  smoother:\n    degree: 4\n", {"amg.smoother.type=jacobi",
                                                                              "amg.smoother.degree=5"}),
                       "--set amg.smoother.degree does nothing"));
}

TEST(Config, MatrixMarketProblem) {
  const Config c = parse_config("problem:\n  type: matrix_market\n  matrix: A.mtx\n  rhs: b.mtx\n", "cfg.yaml");
  EXPECT_EQ(c.problem.type, ProblemType::matrix_market);
  EXPECT_EQ(c.problem.matrix_market.matrix, "A.mtx");
  EXPECT_EQ(c.problem.matrix_market.rhs, "b.mtx");
}

TEST(Config, ShippedConfigsLoad) {
  const std::string dir = test::source_dir() + "/configs";
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    SCOPED_TRACE(entry.path().string());
    EXPECT_NO_THROW((void)load_config(entry.path().string()));
    // amg.spgemm left to the backend's default, so that --set backend=cuda runs the config as it is.
    std::istringstream lines(read_text(entry.path().string()));
    for (std::string line; std::getline(lines, line);) {
      const std::size_t start = line.find_first_not_of(' ');
      EXPECT_FALSE(start != std::string::npos && line.compare(start, 7, "spgemm:") == 0) << line;
    }
    ++count;
  }
  EXPECT_GT(count, 0);

  const Config small = load_config(dir + "/poisson-small.yaml");
  EXPECT_EQ(small.source, dir + "/poisson-small.yaml");
  EXPECT_EQ(small.problem.poisson.size, (std::vector<std::int64_t>{32, 32, 32}));
  EXPECT_EQ(small.problem.poisson.rhs, PoissonRhs::manufactured);
  EXPECT_EQ(small.amg.coarse_size, 200);
  EXPECT_EQ(small.solver.max_iterations, 200);
}

// ---------------------------------------------------------------- unknown keys

TEST(Config, UnknownKeyNamesKeyFileAndLine) {
  const std::string e = parse_error(
      "problem:\n"          // 1
      "  type: poisson\n"   // 2
      "amg:\n"              // 3
      "  bogus_key: 10\n"); // 4
  EXPECT_TRUE(Contains(e, "cfg.yaml:4:"));
  EXPECT_TRUE(Contains(e, "unknown key 'amg.bogus_key'"));
  EXPECT_TRUE(LacksText(e, "did you mean"));  // nothing is close
}

TEST(Config, UnknownKeyLineCountsCommentsAndBlankLines) {
  const std::string e = parse_error(
      "# amgsolve configuration\n"  // 1
      "\n"                          // 2
      "solver:\n"                   // 3
      "  # iteration limit\n"       // 4
      "  tolerance: 1.0e-6\n"       // 5
      "\n"                          // 6
      "  max_iter: 10\n");          // 7
  EXPECT_TRUE(Contains(e, "cfg.yaml:7:"));
  EXPECT_TRUE(Contains(e, "solver.max_iter"));
}

TEST(Config, NearMissKeyGetsASuggestion) {
  const std::string e = parse_error("problem:\n  type: poisson\namg:\n  coarse_szie: 10\n");
  EXPECT_TRUE(Contains(e, "cfg.yaml:4:"));
  EXPECT_TRUE(Contains(e, "amg.coarse_szie"));
  EXPECT_TRUE(Contains(e, "did you mean 'amg.coarse_size'"));
}

TEST(Config, NestedUnknownKeyGetsASuggestion) {
  const std::string e = parse_error("amg:\n  smoother:\n    degre: 3\n");
  EXPECT_TRUE(Contains(e, "cfg.yaml:3:"));
  EXPECT_TRUE(Contains(e, "amg.smoother.degre"));
  EXPECT_TRUE(Contains(e, "did you mean 'amg.smoother.degree'"));
}

TEST(Config, UnknownSection) {
  const std::string e = parse_error("problem:\n  type: poisson\nsolvers:\n  tolerance: 1.0e-6\n");
  EXPECT_TRUE(Contains(e, "cfg.yaml:3:"));
  EXPECT_TRUE(Contains(e, "unknown key 'solvers'"));
}

TEST(Config, SectionGivenAsScalar) {
  const std::string e = parse_error("problem:\n  type: poisson\nsolver: 3\n");
  EXPECT_TRUE(Contains(e, "cfg.yaml:3:"));
  EXPECT_TRUE(Contains(e, "'solver' must be a section"));
}

TEST(Config, DocumentMustBeAMap) {
  const std::string e = parse_error("- 1\n- 2\n");
  EXPECT_TRUE(Contains(e, "cfg.yaml"));
  EXPECT_TRUE(Contains(e, "map"));
}

// ---------------------------------------------------------------- wrong types

TEST(Config, IntegerKeyGivenText) {
  const std::string e = parse_error("problem:\n  type: poisson\namg:\n  coarse_size: abc\n");
  EXPECT_TRUE(Contains(e, "cfg.yaml:4:"));
  EXPECT_TRUE(Contains(e, "amg.coarse_size"));
  EXPECT_TRUE(Contains(e, "integer"));
  EXPECT_TRUE(Contains(e, "'abc'"));
}

TEST(Config, IntegerKeyGivenFraction) {
  const std::string e = parse_error("amg:\n  max_levels: 2.5\n");
  EXPECT_TRUE(Contains(e, "cfg.yaml:2:"));
  EXPECT_TRUE(Contains(e, "amg.max_levels"));
  EXPECT_TRUE(Contains(e, "integer"));
}

TEST(Config, NumberKeyGivenList) {
  const std::string e = parse_error("solver:\n  type: pcg\n  tolerance: [1]\n");
  EXPECT_TRUE(Contains(e, "cfg.yaml:3:"));
  EXPECT_TRUE(Contains(e, "solver.tolerance"));
  EXPECT_TRUE(Contains(e, "number"));
}

TEST(Config, NumberKeyGivenNaN) {
  const std::string e = parse_error("solver:\n  tolerance: .nan\n");
  EXPECT_TRUE(Contains(e, "cfg.yaml:2:"));
  EXPECT_TRUE(Contains(e, "solver.tolerance"));
  EXPECT_TRUE(Contains(e, "finite"));
}

TEST(Config, ChoiceKeyGivenUnknownValue) {
  const std::string e = parse_error("problem:\n  stencil: 8pt\n");
  EXPECT_TRUE(Contains(e, "cfg.yaml:2:"));
  EXPECT_TRUE(Contains(e, "problem.stencil"));
  EXPECT_TRUE(Contains(e, "'8pt'"));
  EXPECT_TRUE(Contains(e, "7pt"));  // lists the allowed values
}

TEST(Config, UnknownProblemType) {
  const std::string e = parse_error("problem:\n  type: helmholtz\n");
  EXPECT_TRUE(Contains(e, "cfg.yaml:2:"));
  EXPECT_TRUE(Contains(e, "problem.type"));
  EXPECT_TRUE(Contains(e, "matrix_market"));
}

TEST(Config, StringKeyGivenList) {
  const std::string e = parse_error("amg:\n  spgemm: [a, b]\n");
  EXPECT_TRUE(Contains(e, "cfg.yaml:2:"));
  EXPECT_TRUE(Contains(e, "amg.spgemm"));
}

TEST(Config, ListKeyGivenScalar) {
  const std::string e = parse_error("problem:\n  size: 64\n");
  EXPECT_TRUE(Contains(e, "cfg.yaml:2:"));
  EXPECT_TRUE(Contains(e, "problem.size"));
  EXPECT_TRUE(Contains(e, "list"));
}

TEST(Config, ListEntryNotAnInteger) {
  const std::string e = parse_error("problem:\n  size: [64, x, 64]\n");
  EXPECT_TRUE(Contains(e, "cfg.yaml:2:"));
  EXPECT_TRUE(Contains(e, "problem.size"));
  EXPECT_TRUE(Contains(e, "'x'"));
}

// ---------------------------------------------------------------- ranges

TEST(Config, NegativeSizeEntry) {
  const std::string e = parse_error("problem:\n  type: poisson\n  size: [-4, 32, 32]\n");
  EXPECT_TRUE(Contains(e, "cfg.yaml:3:"));
  EXPECT_TRUE(Contains(e, "problem.size"));
  EXPECT_TRUE(Contains(e, "'-4'"));
}

TEST(Config, ZeroSizeEntry) {
  const std::string e = parse_error("problem:\n  size: [32, 0, 32]\n");
  EXPECT_TRUE(Contains(e, "cfg.yaml:2:"));
  EXPECT_TRUE(Contains(e, "problem.size"));
  EXPECT_TRUE(Contains(e, "'0'"));
}

TEST(Config, ZeroTolerance) {
  const std::string e = parse_error("solver:\n  tolerance: 0\n");
  EXPECT_TRUE(Contains(e, "cfg.yaml:2:"));
  EXPECT_TRUE(Contains(e, "solver.tolerance"));
  EXPECT_TRUE(Contains(e, "> 0"));
}

TEST(Config, StrengthThresholdAboveOne) {
  const std::string e = parse_error("amg:\n  strength_threshold: 2\n");
  EXPECT_TRUE(Contains(e, "cfg.yaml:2:"));
  EXPECT_TRUE(Contains(e, "amg.strength_threshold"));
  EXPECT_TRUE(Contains(e, "<= 1"));
}

TEST(Config, OtherOutOfRangeValues) {
  EXPECT_TRUE(Contains(parse_error("amg:\n  coarse_size: 0\n"), "amg.coarse_size"));
  EXPECT_TRUE(Contains(parse_error("amg:\n  max_levels: 101\n"), "amg.max_levels"));
  EXPECT_TRUE(Contains(parse_error("amg:\n  prolongator_damping: 0\n"), "amg.prolongator_damping"));
  EXPECT_TRUE(Contains(parse_error("amg:\n  seed: -1\n"), "amg.seed"));
  EXPECT_TRUE(Contains(parse_error("amg:\n  smoother:\n    chebyshev_ratio: 1\n"), "amg.smoother.chebyshev_ratio"));
  EXPECT_TRUE(Contains(parse_error("solver:\n  max_iterations: 0\n"), "solver.max_iterations"));
  EXPECT_TRUE(Contains(parse_error("solver:\n  print_every: -1\n"), "solver.print_every"));
  EXPECT_TRUE(Contains(parse_error("solver:\n  tolerance: 1.5\n"), "solver.tolerance"));
}

// The solver stops at ||r|| <= tolerance ||b||, and x starts at zero: a tolerance of 1 would return x = 0
// unsolved, so 1 is refused with the other end (the solver's own check, reached from the library, agrees).
TEST(Config, ToleranceIsBelowOne) {
  const std::string e = parse_error("solver:\n  tolerance: 1\n");
  EXPECT_TRUE(Contains(e, "cfg.yaml:2:"));
  EXPECT_TRUE(Contains(e, "> 0 and < 1"));
  EXPECT_NO_THROW((void)parse_config("solver:\n  tolerance: 0.999\n", "cfg.yaml"));
}

TEST(Config, InclusiveBoundsAreAccepted) {
  EXPECT_NO_THROW((void)parse_config("amg:\n  strength_threshold: 0\n", "cfg.yaml"));
  EXPECT_NO_THROW((void)parse_config("amg:\n  strength_threshold: 1\n", "cfg.yaml"));
  EXPECT_NO_THROW((void)parse_config("amg:\n  coarse_size: 1\n  max_levels: 100\n", "cfg.yaml"));
  EXPECT_NO_THROW((void)parse_config("problem:\n  size: [1, 1, 1]\n", "cfg.yaml"));
}

// ---------------------------------------------------------------- problem consistency

TEST(Config, ThreeSizesForA2DStencil) {
  const std::string e = parse_error("problem:\n  stencil: 5pt\n  size: [32, 32, 32]\n");
  EXPECT_TRUE(Contains(e, "cfg.yaml:3:"));
  EXPECT_TRUE(Contains(e, "problem.size"));
  EXPECT_TRUE(Contains(e, "5pt"));
}

TEST(Config, TwoSizesForA3DStencil) {
  const std::string e = parse_error("problem:\n  stencil: 27pt\n  size: [32, 32]\n");
  EXPECT_TRUE(Contains(e, "cfg.yaml:3:"));
  EXPECT_TRUE(Contains(e, "problem.size"));
  EXPECT_TRUE(Contains(e, "27pt"));
}

TEST(Config, SizeListTooShortOrTooLong) {
  const std::string shorter = parse_error("problem:\n  size: [32]\n");
  EXPECT_TRUE(Contains(shorter, "cfg.yaml:2:"));
  EXPECT_TRUE(Contains(shorter, "problem.size"));
  const std::string longer = parse_error("problem:\n  size: [8, 8, 8, 8]\n");
  EXPECT_TRUE(Contains(longer, "cfg.yaml:2:"));
  EXPECT_TRUE(Contains(longer, "problem.size"));
}

TEST(Config, SizeBeyondTheIndexLimitIsNamedBeforeAnyWork) {
  const std::string entry = parse_error("problem:\n  size: [3000000000, 1, 1]\n");
  EXPECT_TRUE(Contains(entry, "problem.size")) << entry;
  EXPECT_TRUE(Contains(entry, "<= 2147483647")) << entry;
  // Each entry fits, the product (1e15, and beyond int64 for the second) does not.
  const std::string product = parse_error("problem:\n  size: [100000, 100000, 100000]\n");
  EXPECT_TRUE(Contains(product, "cfg.yaml:2:")) << product;
  EXPECT_TRUE(Contains(product, "1e+15 unknowns")) << product;
  const std::string huge = parse_error("problem:\n  size: [2147483647, 2147483647, 2147483647]\n");
  EXPECT_TRUE(Contains(huge, "9.9e+27 unknowns")) << huge;
}

TEST(Config, CoefficientsBeyondWhatDoublesResolveAreRefusedWithTheReason) {
  for (const char* contrast : {"1e300", "1e-300", "1e11"}) {
    const std::string e =
        parse_error(std::string("problem:\n  coefficient: checkerboard\n  contrast: ") + contrast + "\n");
    EXPECT_TRUE(Contains(e, "cfg.yaml:3:")) << e;
    EXPECT_TRUE(Contains(e, "problem.contrast")) << e;
    EXPECT_TRUE(Contains(e, "ill-conditioned")) << e;
  }
  EXPECT_NO_THROW((void)parse_config("problem:\n  coefficient: checkerboard\n  contrast: 1e6\n", "cfg.yaml"));
  // More checkerboard cells than grid points on a side: every point fell in an even cell (k = 1 throughout).
  const std::string cells =
      parse_error("problem:\n  stencil: 5pt\n  size: [64, 80]\n  coefficient: checkerboard\n  cells: 65\n");
  EXPECT_TRUE(Contains(cells, "problem.cells: 65 is more than the 64 unknowns")) << cells;
  EXPECT_NO_THROW((void)parse_config("problem:\n  stencil: 5pt\n  size: [64, 80]\n  coefficient: checkerboard\n  "
                                     "cells: 64\n", "cfg.yaml"));
  const std::string entry = parse_error("problem:\n  stencil: 5pt\n  size: [8, 8]\n  anisotropy: [1, 1e-300]\n");
  EXPECT_TRUE(Contains(entry, "problem.anisotropy")) << entry;
  const std::string ratio = parse_error("problem:\n  stencil: 5pt\n  size: [8, 8]\n  anisotropy: [1e9, 1e-9]\n");
  EXPECT_TRUE(Contains(ratio, "cfg.yaml:4:")) << ratio;
  EXPECT_TRUE(Contains(ratio, "1e10 times")) << ratio;
}

TEST(Config, KeyOfAnotherProblemType) {
  const std::string e = parse_error("problem:\n  type: poisson\n  matrix: A.mtx\n");
  EXPECT_TRUE(Contains(e, "cfg.yaml:3:"));
  EXPECT_TRUE(Contains(e, "problem.matrix"));
  EXPECT_TRUE(Contains(e, "matrix_market"));

  const std::string other = parse_error("problem:\n  type: matrix_market\n  matrix: A.mtx\n  size: [8, 8, 8]\n");
  EXPECT_TRUE(Contains(other, "cfg.yaml:4:"));
  EXPECT_TRUE(Contains(other, "problem.size"));
  EXPECT_TRUE(Contains(other, "poisson"));
}

TEST(Config, MatrixMarketNeedsAMatrix) {
  const std::string e = parse_error("problem:\n  type: matrix_market\n");
  EXPECT_TRUE(Contains(e, "cfg.yaml"));
  EXPECT_TRUE(Contains(e, "problem.matrix"));
  const std::string empty = parse_error("problem:\n  type: matrix_market\n  matrix: \"\"\n");
  EXPECT_TRUE(Contains(empty, "problem.matrix"));
}

// ---------------------------------------------------------------- malformed YAML

TEST(Config, MalformedYamlNamesTheLine) {
  const std::string e = parse_error(
      "problem:\n"            // 1
      "  type: poisson\n"     // 2
      "  stencil: 7pt: x\n"   // 3  (a second ':' on the line)
      "solver:\n"
      "  tolerance: 1.0e-6\n");
  EXPECT_TRUE(Contains(e, "malformed YAML"));
  EXPECT_TRUE(Contains(e, "cfg.yaml:3:"));
}

TEST(Config, UnclosedListIsMalformedYaml) {
  const std::string e = parse_error("problem:\n  size: [32, 32\nsolver:\n  tolerance: 1.0e-6\n");
  EXPECT_TRUE(Contains(e, "malformed YAML"));
  EXPECT_TRUE(std::regex_search(e, std::regex(R"(cfg\.yaml:[0-9]+:)"))) << e;
}

// ---------------------------------------------------------------- --set overrides

// A quoted dotted key in a file names a schema key, but the file is read as nested sections: refused, so
// that its value is never silently dropped.
TEST(Config, DottedKeysInAFileAreRefused) {
  const std::string e = parse_error("problem: {type: poisson}\n\"solver.max_iterations\": 1\n");
  EXPECT_TRUE(Contains(e, "cfg.yaml:2:"));
  EXPECT_TRUE(Contains(e, "'solver.max_iterations' has a dot"));
  EXPECT_TRUE(Contains(parse_error("amg:\n  \"smoother.degree\": 0\n"), "'smoother.degree' has a dot"));
}

TEST(Config, OverridesReplaceScalarsAndLists) {
  const Config c = parse_config("problem:\n  size: [32, 32, 32]\namg:\n  spgemm: other\n  coarse_size: 10\n",
                                "cfg.yaml", {"problem.size=[64,64,64]", "amg.spgemm=gustavson"});
  EXPECT_EQ(c.problem.poisson.size, (std::vector<std::int64_t>{64, 64, 64}));
  EXPECT_EQ(c.amg.spgemm, "gustavson");
  EXPECT_EQ(c.amg.coarse_size, 10);  // untouched
}

// A map given to a section sets the keys it names: the section's other keys stay (replacing the section
// whole dropped the file's problem.type and ran a default 128^3 Poisson problem).
TEST(Config, OverrideOfASectionByAMapSetsItsKeys) {
  const std::string file = "problem:\n  type: poisson\n  size: [32, 32, 32]\n  rhs: manufactured\namg:\n  coarse_size: 10\n";
  const Config c = parse_config(file, "cfg.yaml", {"problem={size: [6, 6, 6]}", "amg={smoother: {degree: 3}}"});
  EXPECT_EQ(c.problem.poisson.size, (std::vector<std::int64_t>{6, 6, 6}));
  EXPECT_EQ(c.problem.poisson.rhs, PoissonRhs::manufactured);  // the file's, kept
  EXPECT_EQ(c.amg.coarse_size, 10);
  EXPECT_EQ(c.amg.smoother.degree, 3);
  // A map that sets nothing, or a key twice, is refused as a file's would be.
  EXPECT_TRUE(Contains(parse_error(file, {"problem={}"}), "--set problem={}: sets no key of problem"));
  EXPECT_TRUE(Contains(parse_error(file, {"amg={seed: 1, seed: 2}"}), "'amg.seed' is given twice"));
  // Its keys are checked as --set's own: a misspelt one is named with the assignment.
  const std::string e = parse_error(file, {"problem={sise: [6, 6, 6]}"});
  EXPECT_TRUE(Contains(e, "--set problem.sise")) << e;
  EXPECT_TRUE(Contains(e, "did you mean 'problem.size'")) << e;
}

// Nested YAML aliases (a "billion laughs" of a few hundred bytes) would make every walk over the tree visit
// each alias anew: refused at once, in the file and in --set. Ten levels expand to 10^11 values, which no
// walk finishes: a refusal that walked them would run into the test's timeout.
TEST(Config, AliasesExpandingBeyondAMillionValuesAreRefusedAtOnce) {
  std::string list = "&a0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]";
  for (int depth = 1; depth <= 10; ++depth) {
    const std::string alias = "*a" + std::to_string(depth - 1);
    list += ", &a" + std::to_string(depth) + " [" + alias;
    for (int k = 1; k < 10; ++k) list += ", " + alias;
    list += "]";
  }
  const std::string file = "problem:\n  anisotropy: [" + list + "]\n";
  const std::string e = parse_error(file);
  EXPECT_TRUE(Contains(e, "cfg.yaml: more than 1000000 values with its YAML aliases expanded")) << e;
  EXPECT_TRUE(Contains(parse_error("", {"problem.anisotropy=[" + list + "]"}), "--set problem.anisotropy=")) << e;
  // A few aliases are YAML like any other.
  EXPECT_EQ(parse_config("problem:\n  size: &n [8, 8, 8]\n", "cfg.yaml").problem.poisson.size,
            (std::vector<std::int64_t>{8, 8, 8}));
}

// The mouse's inputs that would mean nothing: a spot or detector twice, a tissue absorbing more than it
// scatters (outside the diffusion approximation), a tumour's keys without a tumour. Where --set switches the
// tumour off, the file's tumour keys are kept quiet.
TEST(Config, MouseInputsThatWouldMeanNothingAreRefused) {
  const std::string mouse = "problem:\n  type: mouse\n";
  EXPECT_TRUE(Contains(parse_error(mouse, {"problem.sources.spots=[[5, 0], [6, 0], [5, 0]]"}),
                       "problem.sources.spots: spot 3 is spot 1 again"));
  EXPECT_TRUE(Contains(parse_error(mouse, {"problem.detectors=[[8, -4], [8, -4]]"}), "problem.detectors: point 2 is point 1 again"));
  const std::string absorbing = parse_error(mouse + "  tissues:\n    liver:\n      mua: [100, 0.1]\n");
  EXPECT_TRUE(Contains(absorbing, "cfg.yaml:5: problem.tissues.liver: mua 100/mm is not below musp")) << absorbing;
  EXPECT_TRUE(Contains(absorbing, "at the excitation wavelength")) << absorbing;
  EXPECT_TRUE(Contains(parse_error(mouse, {"problem.tissues.bone.musp=[0.001, 2]"}), "--set problem.tissues.bone.musp"));
  EXPECT_TRUE(Contains(parse_error(mouse, {"problem.tumour.centre=[100, 100, 100]"}),
                       "problem.tumour.centre does nothing without a tumour (problem.tumour.radius above 0)"));
  EXPECT_TRUE(Contains(parse_error(mouse, {"problem.tissues.tumour.mua=[0.05, 0.05]"}), "does nothing without a tumour"));
  const std::string with_tumour =
      mouse + "  tumour: {centre: [8, -4, 5], radius: 2.5}\n  fluorescence: true\n  fluorophore: {tumour: 0.01}\n";
  EXPECT_EQ(parse_config(with_tumour, "cfg.yaml", {"problem.tumour.radius=0", "problem.fluorophore.background=0.001"})
                .problem.mouse.phantom.tumour_radius,
            0.0);
  EXPECT_EQ(parse_config(with_tumour, "cfg.yaml", {"problem.fluorescence=false"}).problem.mouse.fluorescence, false);
  // Given together on the command line, they still contradict each other.
  EXPECT_TRUE(Contains(parse_error(with_tumour, {"problem.tumour.radius=0", "problem.tumour.centre=[1, 1, 1]"}),
                       "--set problem.tumour.centre does nothing without a tumour"));
}

// A wrong entry of a list is shown as written ("got a list" said nothing of [8] against [8, -4, 3], or of nan).
TEST(Config, AWrongListEntryIsShownAsWritten) {
  const std::string mouse = "problem:\n  type: mouse\n";
  EXPECT_TRUE(Contains(parse_error(mouse, {"problem.detectors=[[8]]"}), "like [10, -2.5], got [8]"));
  EXPECT_TRUE(Contains(parse_error(mouse, {"problem.detectors=[[8, -4, 3]]"}), "got [8, -4, 3]"));
  EXPECT_TRUE(Contains(parse_error(mouse, {"problem.sources.spots=[[nan, 0]]"}), "got [nan, 0]"));
  EXPECT_TRUE(Contains(parse_error(mouse, {"problem.detectors=[[1, 2, 3, 4, 5]]"}), "got a list of 5 entries"));
}

TEST(Config, OverridesCreateMissingSections) {
  const Config c = parse_config("", "cfg.yaml", {"amg.smoother.degree=3", "solver.tolerance=1e-6"});
  EXPECT_EQ(c.amg.smoother.degree, 3);
  EXPECT_DOUBLE_EQ(c.solver.tolerance, 1e-6);
  const Config d = parse_config("amg:\nsolver:\n", "cfg.yaml", {"amg.coarse_size=5"});
  EXPECT_EQ(d.amg.coarse_size, 5);
}

TEST(Config, OverridesApplyInOrder) {
  const Config c = parse_config("solver:\n  tolerance: 1.0e-3\n", "cfg.yaml",
                                {"solver.tolerance=1e-4", "solver.tolerance=1e-6"});
  EXPECT_DOUBLE_EQ(c.solver.tolerance, 1e-6);
}

TEST(Config, OverrideCanChangeTheProblemType) {
  const Config c = parse_config("problem:\n  type: poisson\n", "cfg.yaml",
                                {"problem.type=matrix_market", "problem.matrix=A.mtx"});
  EXPECT_EQ(c.problem.type, ProblemType::matrix_market);
  EXPECT_EQ(c.problem.matrix_market.matrix, "A.mtx");
}

TEST(Config, OverrideOfUnknownKey) {
  const std::string e = parse_error("amg:\n  coarse_size: 10\n", {"amg.coarse_sise=10"});
  EXPECT_TRUE(Contains(e, "--set"));
  EXPECT_TRUE(Contains(e, "amg.coarse_sise"));
  EXPECT_TRUE(Contains(e, "did you mean 'amg.coarse_size'"));
}

// A section that only --set made is blamed on the --set, not on the file.
TEST(Config, OverrideOfAnUnknownSectionNamesTheOverride) {
  const std::string e = parse_error("amg:\n  coarse_size: 10\n", {"foo.bar=1"});
  EXPECT_TRUE(Contains(e, "--set foo.bar: unknown key 'foo'"));
  EXPECT_TRUE(LacksText(e, "cfg.yaml"));
}

TEST(Config, OverrideWithWrongTypeNamesTheOverride) {
  const std::string e = parse_error("solver:\n  tolerance: 1.0e-6\n", {"solver.tolerance=abc"});
  EXPECT_TRUE(Contains(e, "--set"));
  EXPECT_TRUE(Contains(e, "solver.tolerance"));
  EXPECT_TRUE(LacksText(e, "cfg.yaml:2:"));  // the bad value is not the file's
}

TEST(Config, OverrideOutOfRange) {
  const std::string e = parse_error("", {"problem.size=[0,32,32]"});
  EXPECT_TRUE(Contains(e, "--set"));
  EXPECT_TRUE(Contains(e, "problem.size"));
}

TEST(Config, OverrideWithoutEquals) {
  const std::string e = parse_error("", {"amg.coarse_size"});
  EXPECT_TRUE(Contains(e, "--set"));
  EXPECT_TRUE(Contains(e, "amg.coarse_size"));
  EXPECT_TRUE(Contains(e, "key.path=value"));
  EXPECT_TRUE(Contains(parse_error("", {"=5"}), "--set"));
}

TEST(Config, OverrideWithMalformedValue) {
  const std::string e = parse_error("", {"problem.size=[64,64"});
  EXPECT_TRUE(Contains(e, "--set"));
  EXPECT_TRUE(Contains(e, "malformed YAML"));
}

// yaml-cpp reads the first value of these and drops the rest; a --set value is one value.
TEST(Config, OverrideWithMoreThanOneValue) {
  for (const char* value : {"problem.size=[8,8,8] junk", "problem.size=[8,8,8],[4,4,4]", "problem.size=[8,8,8]\n---\nx",
                            "amg.smoother={pre_steps: 2} post_steps"}) {
    const std::string e = parse_error("", {value});
    EXPECT_TRUE(Contains(e, "--set")) << value;
  }
  EXPECT_EQ(parse_config("", "cfg.yaml", {"problem.size=[ 8, 8, 8 ]  "}).problem.poisson.size,
            (std::vector<std::int64_t>{8, 8, 8}));
}

// Integers are read in decimal: yaml-cpp would read 010 as 8 and 0x10 as 16.
TEST(Config, IntegersAreDecimal) {
  for (const char* text : {"010", "0x10", "+-5", "08"}) {
    const std::string e = parse_error(std::string("amg:\n  coarse_size: ") + text + "\n");
    EXPECT_TRUE(Contains(e, "cfg.yaml:2:")) << text;
    EXPECT_TRUE(Contains(e, "decimal integer")) << text;
  }
  EXPECT_TRUE(Contains(parse_error("", {"problem.size=[010,8,8]"}), "problem.size"));
  // Digits too many for 64 bits are out of range, not "not decimal"; a --set key is named once.
  const std::string huge = parse_error("", {"amg.coarse_size=18446744073709551616"});
  EXPECT_TRUE(Contains(huge, "--set amg.coarse_size: must be >= 1 and <= 2147483647, got '18446744073709551616'"));
  EXPECT_TRUE(Contains(parse_error("", {"problem.size=[99999999999999999999,8,8]"}), "<="));
  // A key without an upper bound (the seed) says the reader's: signed 64 bits.
  EXPECT_TRUE(Contains(parse_error("", {"amg.seed=9223372036854775808"}),
                       "--set amg.seed: must be at most 9223372036854775807 (2^63 - 1"));
  EXPECT_EQ(parse_config("amg:\n  seed: 9223372036854775807\n", "cfg.yaml").amg.seed, 9223372036854775807ull);
  EXPECT_EQ(parse_config("amg:\n  coarse_size: +12\n", "cfg.yaml").amg.coarse_size, 12);
  EXPECT_EQ(parse_config("amg:\n  coarse_size: 0\n", "cfg.yaml", {"amg.coarse_size=40"}).amg.coarse_size, 40);
}

// A V-cycle that never smooths is no preconditioner: refused, naming the keys.
TEST(Config, SomeSmoothingIsRequired) {
  const std::string e = parse_error("amg:\n  smoother:\n    pre_steps: 0\n", {"amg.smoother.post_steps=0"});
  EXPECT_TRUE(Contains(e, "--set amg.smoother.post_steps is 0 and so is amg.smoother.pre_steps"));
  EXPECT_TRUE(LacksText(e, "post_steps: amg.smoother"));  // the key is said once
  const Config stationary = parse_config("amg:\n  smoother:\n    pre_steps: 0\nsolver:\n  type: amg\n", "cfg.yaml");
  EXPECT_EQ(stationary.amg.post_smooth, 1);
}

// Conjugate gradients needs a symmetric preconditioner: as many smoothing steps after as before.
TEST(Config, PcgNeedsAsManyPostAsPreSmoothingSteps) {
  const std::string e = parse_error("amg:\n  smoother:\n    pre_steps: 2\n");
  EXPECT_TRUE(Contains(e, "cfg.yaml:3:")) << e;
  EXPECT_TRUE(Contains(e, "amg.smoother.pre_steps is 2 and post_steps 1")) << e;
  EXPECT_TRUE(Contains(parse_error("amg:\n  smoother:\n    pre_steps: 0\n"), "solver.type: amg"));
  EXPECT_TRUE(Contains(parse_error("", {"amg.smoother.post_steps=3"}), "--set amg.smoother.post_steps is 3 and pre_steps 1"));
  EXPECT_EQ(parse_config("amg:\n  smoother: {pre_steps: 2, post_steps: 2}\n", "cfg.yaml").amg.post_smooth, 2);
  EXPECT_EQ(parse_config("amg:\n  smoother: {pre_steps: 2}\nsolver: {type: amg}\n", "cfg.yaml").amg.pre_smooth, 2);
}

// A source listed twice in output.vtk_sources would write its fields twice under one name.
TEST(Config, VtkSourcesAreListedOnce) {
  const std::string e = parse_error("problem:\n  type: mouse\noutput:\n  vtk_sources: [3, 1, 3]\n");
  EXPECT_TRUE(Contains(e, "cfg.yaml:4:")) << e;
  EXPECT_TRUE(Contains(e, "lists source 3 twice")) << e;
  EXPECT_EQ(parse_config("problem:\n  type: mouse\noutput:\n  vtk_sources: [3, 1]\n", "cfg.yaml").output.vtk_sources,
            (std::vector<std::int64_t>{3, 1}));
}

// The ranks of a run compare their settings' fingerprints: the same settings written another way agree,
// other settings do not.
TEST(Config, TheFingerprintIsOfTheSettingsNotOfTheirSpelling) {
  const auto print = [](const std::string& yaml, const std::vector<std::string>& overrides = {}) {
    return parse_config(yaml, "cfg.yaml", overrides).fingerprint;
  };
  const std::string base = "problem:\n  size: [8, 8, 8]\nsolver:\n  tolerance: 1e-8\n";
  EXPECT_EQ(print(base), print("solver:\n  tolerance: 1.0e-8\nproblem:\n  size: [8,8,8]\n"));
  EXPECT_EQ(print(base, {"amg.seed=3", "amg.smoother.degree=3"}), print(base, {"amg.smoother.degree=3", "amg.seed=3"}));
  const AmgParams defaults;  // a default written out is the default left out
  EXPECT_EQ(print(base), print(base, {"amg.seed=" + std::to_string(defaults.seed),
                                      "amg.smoother.degree=" + std::to_string(defaults.smoother.degree)}));
  EXPECT_NE(print(base), print(base, {"amg.smoother.degree=3"}));
  EXPECT_NE(print(base), print(base, {"solver.tolerance=1e-9"}));
  EXPECT_NE(print(base), print("problem:\n  size: [8, 8, 9]\n"));
}

// Keys that would do nothing for the problem are refused, not ignored: sources where there are none, a warm
// start from a step before where there are no steps.
TEST(Config, KeysThatWouldDoNothingAreRefused) {
  const std::string sources = parse_error("problem:\n  type: poisson\noutput:\n  vtk_sources: [1]\n");
  EXPECT_TRUE(Contains(sources, "cfg.yaml:4:")) << sources;
  EXPECT_TRUE(Contains(sources, "only a mouse problem has sources")) << sources;
  const std::string runs = parse_error("amg:\n  compare_runs: 5\n");
  EXPECT_TRUE(Contains(runs, "cfg.yaml:2: amg.compare_runs does nothing without amg.compare_spgemm")) << runs;
  EXPECT_EQ(parse_config("amg:\n  compare_runs: 5\n  compare_spgemm: true\n", "cfg.yaml").compare_spgemm_runs, 5);
  const std::string warm = parse_error("solver:\n  initial_guess: previous_step\n");
  EXPECT_TRUE(Contains(warm, "cfg.yaml:2:")) << warm;
  EXPECT_TRUE(Contains(warm, "needs problem.steps above 1")) << warm;
  EXPECT_TRUE(Contains(parse_error("", {"solver.initial_guess=previous_step", "problem.steps=1"}), "--set solver.initial_guess"));
  EXPECT_EQ(parse_config("problem:\n  steps: 3\n  coefficient: checkerboard\nsolver:\n  initial_guess: previous_step\n",
                         "cfg.yaml")
                .initial_guess,
            InitialGuess::previous_step);
}

// The reader takes each value by its key's type: a YAML tag of another type (or the application's own) would
// be ignored, so it is refused; a core tag of the key's own type is that type.
TEST(Config, YamlTagsOfAnotherTypeAreRefused) {
  EXPECT_TRUE(Contains(parse_error("amg:\n  coarse_size: !!str 40\n"), "cfg.yaml:2: amg.coarse_size has the YAML tag '!!str'"));
  EXPECT_TRUE(Contains(parse_error("problem:\n  size: [8, !!float 8, 8]\n"), "problem.size has the YAML tag '!!float'"));
  EXPECT_TRUE(Contains(parse_error("", {"amg.coarse_size=!mine 40"}), "--set amg.coarse_size"));
  EXPECT_TRUE(Contains(parse_error("amg:\n  spgemm: !!int 5\n"), "'!!int', which is not its type"));
  const Config tagged = parse_config(
      "problem:\n  size: !!seq [8, !!int 8, 8]\namg:\n  coarse_size: !!int 40\n  spgemm: !!str hash\nsolver:\n"
      "  tolerance: !!float 1e-6\n",
      "cfg.yaml");
  EXPECT_EQ(tagged.amg.coarse_size, 40);
  EXPECT_EQ(tagged.amg.spgemm, "hash");
  EXPECT_EQ(tagged.solver.tolerance, 1e-6);
  EXPECT_EQ(tagged.problem.poisson.size, (std::vector<std::int64_t>{8, 8, 8}));
}

// A quoted value is a YAML string: where a key takes numbers it is refused (it was converted silently, where
// `yes` for a number is refused), itself or as an entry; a choice's name may be quoted.
TEST(Config, QuotedNumbersAreRefusedAsStrings) {
  EXPECT_TRUE(Contains(parse_error("solver:\n  max_iterations: \"10\"\n"),
                       "cfg.yaml:2: solver.max_iterations is quoted, so a string: write the number without quotes"));
  EXPECT_TRUE(Contains(parse_error("solver:\n  tolerance: '1e-6'\n"), "solver.tolerance is quoted"));
  EXPECT_TRUE(Contains(parse_error("problem:\n  size: [8, \"8\", 8]\n"), "problem.size is quoted"));
  EXPECT_TRUE(Contains(parse_error("", {"solver.max_iterations=\"10\""}), "--set solver.max_iterations"));
  EXPECT_EQ(parse_config("amg:\n  spgemm: \"hash\"\n", "cfg.yaml").amg.spgemm, "hash");
  EXPECT_EQ(parse_config("solver:\n  max_iterations: 10\n", "cfg.yaml").solver.max_iterations, 10);
}

// A NUL would cut a file name short (the file opened would be another), an escape sequence would rewrite the
// terminal: strings holding control characters are refused, and messages show such bytes escaped.
TEST(Config, ControlCharactersAreRefusedAndShownEscaped) {
  const std::string nul = parse_error("problem:\n  type: matrix_market\n  matrix: \"a.mtx\\0.gz\"\n");
  EXPECT_TRUE(Contains(nul, "problem.matrix must not hold control characters, got 'a.mtx\\x00.gz'")) << nul;
  const std::string escape = parse_error("amg:\n  spgemm: \"hash\\e[31m\"\n");
  EXPECT_TRUE(Contains(escape, "'hash\\x1b[31m'")) << escape;
  EXPECT_TRUE(LacksText(escape, "\x1b")) << escape;
  const std::string key = parse_error("amg:\n  \"coarse\\0size\": 3\n");
  EXPECT_TRUE(Contains(key, "unknown key 'amg.coarse\\x00size'")) << key;
}

// A value is echoed in an error, but not a megabyte of it, nor bytes that are not text: cut after 80 bytes with
// its length said, invalid UTF-8 escaped, valid UTF-8 (a key written in another script) kept.
TEST(Config, LongOrBinaryValuesAreShownCutAndEscaped) {
  const std::string long_value = parse_error("problem:\n  type: " + std::string(100000, 'x') + "\n");
  EXPECT_TRUE(Contains(long_value, "'" + std::string(80, 'x') + "... (100000 bytes)' is not one of")) << long_value;
  EXPECT_LT(long_value.size(), 400u);
  const std::string bytes = parse_error("amg:\n  \"\xff\xfe k\u00e9y\": 3\n");
  EXPECT_TRUE(Contains(bytes, "unknown key 'amg.\\xff\\xfe k\xc3\xa9y'")) << bytes;
  EXPECT_EQ(printable("\xe2\x82"), "\\xe2\\x82");  // a sequence cut short
  EXPECT_EQ(printable("\xe2\x82\xac"), "\xe2\x82\xac");  // the euro sign
  EXPECT_EQ(printable("a\xc2\x9b" "31m"), "a\\xc2\\x9b31m");  // C1's CSI, an escape sequence's start
  EXPECT_EQ(printable("\xe2\x80\xa8"), "\\xe2\\x80\\xa8");    // the line separator
  EXPECT_EQ(printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");    // a surrogate, not UTF-8
  EXPECT_EQ(printable("\xe0\x80\xaf"), "\\xe0\\x80\\xaf");    // an overlong '/'
}

TEST(Config, OverrideThroughAScalar) {
  const std::string e = parse_error("amg:\n  coarse_size: 10\n", {"amg.coarse_size.x=1"});
  EXPECT_TRUE(Contains(e, "--set"));
  EXPECT_TRUE(Contains(e, "coarse_size"));
}

// ---------------------------------------------------------------- files

TEST(Config, LoadMissingFile) {
  ScratchDir dir;
  const std::string path = dir.file("missing.yaml");
  const std::string e = error_of([&] { (void)load_config(path); });
  EXPECT_TRUE(Contains(e, path));
}

// The reason the system gives is said, and a name too long for any file system is not echoed whole.
TEST(Config, LoadMissingFileSaysWhyAndCutsALongName) {
  ScratchDir dir;
  EXPECT_TRUE(Contains(error_of([&] { (void)load_config(dir.file("missing.yaml")); }), "No such file or directory"));
  const std::string long_name = dir.file(std::string(5000, 'x') + ".yaml");
  const std::string e = error_of([&] { (void)load_config(long_name); });
  EXPECT_TRUE(Contains(e, "File name too long")) << e.substr(0, 200);
  EXPECT_TRUE(Contains(e, "bytes)")) << e.substr(0, 200);
  EXPECT_LT(e.size(), 1000u);
}

// A file without settings (empty, only comments, or sections without entries: a file cut after its first
// line) is refused as a truncated one, unless --set gives some.
TEST(Config, AFileWithoutSettingsIsRefusedUnlessSetGivesThem) {
  ScratchDir dir;
  const std::string path = dir.file("empty.yaml");
  for (const char* text : {"", "# only a comment\n\n", "problem:\n", "problem: ~\n", "problem: {}\nsolver:\n"}) {
    std::ofstream(path) << text;
    const std::string e = error_of([&] { (void)load_config(path); });
    EXPECT_TRUE(Contains(e, path + " holds no settings")) << e;
  }
  EXPECT_EQ(load_config(path, {"problem.size=[4,4,4]"}).problem.poisson.size, (std::vector<std::int64_t>{4, 4, 4}));
  std::ofstream(path) << "problem: {}\nsolver:\n  tolerance: 1.0e-6\n";  // one value is a setting
  EXPECT_EQ(load_config(path).solver.tolerance, 1e-6);
}

// A config file over the size limit (a data file, a device or an endless pipe given by mistake) is refused
// after reading just past the limit, naming the file, instead of filling memory.
TEST(Config, AFileLargerThanAnyConfigIsRefusedWithoutReadingItAll) {
  ScratchDir dir;
  const std::string path = dir.file("big.yaml");
  {
    std::ofstream out(path);
    const std::string comment = "# " + std::string(1000, 'x') + "\n";
    for (int k = 0; k < 17 * 1024; ++k) out << comment;  // 17 MiB of comments
  }
  const std::string e = error_of([&] { (void)load_config(path); });
  EXPECT_TRUE(Contains(e, "config file " + path + " is larger than 16 MiB")) << e.substr(0, 300);
  if (std::filesystem::exists("/dev/zero")) {
    const std::string zero = error_of([&] { (void)load_config("/dev/zero"); });
    EXPECT_TRUE(Contains(zero, "/dev/zero is larger than 16 MiB")) << zero.substr(0, 300);
  }
}

TEST(Config, LoadDirectory) {
  ScratchDir dir;
  const std::string path = dir.path().string();
  const std::string e = error_of([&] { (void)load_config(path); });
  EXPECT_TRUE(Contains(e, path));
  EXPECT_TRUE(Contains(e, "directory"));
}

// Other solvers' names and keys without their section, in a file or by --set, point at ours: `tol` was
// nearest to the section `amg`, and `coarse_size` had no hint.
TEST(Config, OtherSolversNamesAndKeysWithoutTheirSectionAreNamed) {
  EXPECT_TRUE(Contains(parse_error("solver:\n  maxiter: 10\n"), "(did you mean 'solver.max_iterations'?)"));
  EXPECT_TRUE(Contains(parse_error("tol: 1.0e-6\n"), "(did you mean 'solver.tolerance'?)"));
  EXPECT_TRUE(Contains(parse_error("", {"coarse_size=10"}), "(did you mean 'amg.coarse_size'?)"));
  EXPECT_TRUE(Contains(parse_error("", {"amg.coarse_sise=10"}), "(did you mean 'amg.coarse_size'?)"));
  EXPECT_TRUE(Contains(parse_error("ams:\n  coarse_size: 10\n"), "(did you mean 'amg'?)"));
}

// The names of docs/MIGRATING.md's libraries, as their users would write them: PyAMG's presmoother and
// improve_candidates, AMGCL's npre, hypre's max_coarse_size, PETSc's coarse_eq_limit, AmgX's max_iters.
TEST(Config, TheMigratingLibrariesNamesPointAtOurs) {
  EXPECT_TRUE(Contains(parse_error("", {"presmoother=gauss_seidel"}), "(did you mean 'amg.smoother.type'?)"));
  EXPECT_TRUE(Contains(parse_error("amg:\n  improve_candidates: 4\n"), "(did you mean 'amg.improve_near_nullspace'?)"));
  EXPECT_TRUE(Contains(parse_error("amg:\n  npre: 2\n"), "(did you mean 'amg.smoother.pre_steps'?)"));
  EXPECT_TRUE(Contains(parse_error("", {"max_coarse_size=9"}), "(did you mean 'amg.coarse_size'?)"));
  EXPECT_TRUE(Contains(parse_error("amg:\n  coarse_eq_limit: 50\n"), "(did you mean 'amg.coarse_size'?)"));
  EXPECT_TRUE(Contains(parse_error("solver:\n  max_iters: 100\n"), "(did you mean 'solver.max_iterations'?)"));
}

// A section given a value where it has a `type` (in Python amg={"smoother": "jacobi"}) names that key.
TEST(Config, ASectionGivenAValueNamesItsType) {
  const std::string e = parse_error("amg:\n  smoother: jacobi\n");
  EXPECT_TRUE(Contains(e, "cfg.yaml:2:")) << e;
  EXPECT_TRUE(Contains(e, "'amg.smoother' must be a section (a YAML map) (did you mean 'amg.smoother.type'?)"));
  EXPECT_TRUE(Contains(parse_error("problem: poisson\n"), "(did you mean 'problem.type'?)"));
  EXPECT_TRUE(LacksText(parse_error("amg: 3\n"), "did you mean"));  // amg has no type
  // A section given without its own (a top-level `smoother:`) names where it belongs.
  EXPECT_TRUE(Contains(parse_error("", {"smoother=jacobi"}), "(did you mean 'amg.smoother'?)"));
  EXPECT_TRUE(Contains(parse_error("smoother:\n  type: jacobi\n"), "(did you mean 'amg.smoother'?)"));
  EXPECT_TRUE(Contains(parse_error("", {"smoother.degree=3"}), "(did you mean 'amg.smoother'?)"));
}

// `amgsolve A.mtx` read the matrix as YAML: "the configuration must be a YAML map of sections".
TEST(Config, AMatrixMarketFileGivenAsTheConfigSaysHowToGiveIt) {
  ScratchDir dir;
  const std::string path = dir.file("A.mtx");
  std::ofstream(path) << "%%MatrixMarket matrix coordinate real symmetric\n1 1 1\n1 1 2\n";
  const std::string e = error_of([&] { (void)load_config(path); });
  EXPECT_TRUE(Contains(e, path + " is a Matrix Market file, not a config")) << e;
  EXPECT_TRUE(Contains(e, "type: matrix_market, matrix: A.mtx")) << e;
  std::ofstream(path) << "\xEF\xBB\xBF%%matrixmarket matrix coordinate real symmetric\n1 1 1\n1 1 2\n";
  EXPECT_TRUE(Contains(error_of([&] { (void)load_config(path); }), "is a Matrix Market file, not a config"));
}

TEST(Config, LoadedFileErrorsNameThePathAndLine) {
  ScratchDir dir;
  const std::string path = dir.file("bad.yaml");
  std::ofstream(path) << "problem:\n  type: poisson\n  sise: [8, 8, 8]\n";
  const std::string e = error_of([&] { (void)load_config(path); });
  EXPECT_TRUE(Contains(e, path + ":3:"));
  EXPECT_TRUE(Contains(e, "did you mean 'problem.size'"));
}

// An input file that cannot be read is said with its key and line when the config is loaded, before any
// work (a rhs of `ones` on a matrix_market problem, where rhs names a file, was reported by the reader
// later, as "cannot open Matrix Market file ones", naming neither).
TEST(Config, LoadedInputFilesMustBeReadable) {
  ScratchDir dir;
  std::ofstream(dir.file("A.mtx")) << "%%MatrixMarket matrix coordinate real symmetric\n1 1 1\n1 1 2\n";
  const std::string path = dir.file("mm.yaml");
  std::ofstream(path) << "problem:\n  type: matrix_market\n  matrix: A.mtx\n  rhs: ones\n";
  const std::string e = error_of([&] { (void)load_config(path); });
  EXPECT_TRUE(Contains(e, path + ":4:")) << e;
  EXPECT_TRUE(Contains(e, "problem.rhs " + dir.file("ones") + " cannot be read (No such file or directory): "
                          "problem.rhs names a file; left empty it takes its default")) << e;
  const std::string folder = error_of([&] { (void)load_config(path, {"problem.rhs=" + dir.path().string()}); });
  EXPECT_TRUE(Contains(folder, "--set problem.rhs " + dir.path().string() + " is a directory")) << folder;
  std::ofstream(dir.file("b.mtx")) << "%%MatrixMarket matrix array real general\n1 1\n1\n";
  EXPECT_EQ(load_config(path, {"problem.rhs=" + dir.file("b.mtx")}).problem.matrix_market.matrix, dir.file("A.mtx"));
  // Parsing text opens nothing: the files are the run's business.
  EXPECT_NO_THROW((void)parse_config("problem:\n  type: matrix_market\n  matrix: nowhere.mtx\n", "cfg.yaml"));
}

TEST(Config, LoadAppliesOverrides) {
  ScratchDir dir;
  const std::string path = dir.file("ok.yaml");
  std::ofstream(path) << "problem:\n  size: [8, 8, 8]\n";
  const Config c = load_config(path, {"problem.size=[4,5,6]"});
  EXPECT_EQ(c.source, path);
  EXPECT_EQ(c.problem.poisson.size, (std::vector<std::int64_t>{4, 5, 6}));
}

// ---------------------------------------------------------------- docs/CONFIG.md

TEST(Config, ReferenceDocumentIsUpToDate) {
  const std::string path = test::source_dir() + "/docs/CONFIG.md";
  const std::string expected = config_reference_markdown();
  const std::string regenerate = "regenerate with `build/app/amgsolve --config-reference > docs/CONFIG.md`";
  ASSERT_TRUE(std::filesystem::is_regular_file(path)) << path << " is missing; " << regenerate;
  const std::string actual = read_text(path);
  if (actual == expected) return;

  // Point at the first line that differs rather than printing both documents.
  std::istringstream a(actual), b(expected);
  std::string line_a, line_b;
  int line = 0;
  while (true) {
    ++line;
    const bool more_a = static_cast<bool>(std::getline(a, line_a));
    const bool more_b = static_cast<bool>(std::getline(b, line_b));
    if (!more_a && !more_b) break;
    if (more_a != more_b || line_a != line_b) {
      ADD_FAILURE() << "docs/CONFIG.md differs from the schema (config/schema.cpp) at line " << line << ":\n"
                    << "  file:   " << (more_a ? line_a : "(end of file)") << "\n"
                    << "  schema: " << (more_b ? line_b : "(end of document)") << "\n"
                    << regenerate;
      return;
    }
  }
  ADD_FAILURE() << "docs/CONFIG.md differs from the schema (config/schema.cpp) in line endings; " << regenerate;
}

TEST(Config, ReferenceDocumentListsEveryKey) {
  const std::string doc = config_reference_markdown();
  for (const KeySpec& k : config_schema()) {
    EXPECT_TRUE(Contains(doc, "`" + k.path + "`"));
    EXPECT_FALSE(k.doc.empty()) << k.path;
  }
}

// The ```yaml blocks of a Markdown document, each as its text.
std::vector<std::string> yaml_examples(const std::string& markdown) {
  std::vector<std::string> blocks;
  std::istringstream in(markdown);
  std::string line, block;
  bool inside = false;
  while (std::getline(in, line)) {
    if (!inside && line == "```yaml") {
      inside = true;
      block.clear();
    } else if (inside && line == "```") {
      inside = false;
      blocks.push_back(block);
    } else if (inside) {
      block += line + "\n";
    }
  }
  return blocks;
}

// The documents' YAML examples are configs the reader takes: a key renamed or removed, or a rule between
// keys added, fails here rather than in a reader's first run (their input files are not opened).
TEST(Config, TheDocumentsYamlExamplesAreValidConfigs) {
  for (const std::string doc : {"README.md", "docs/MIGRATING.md"}) {
    const std::string path = test::source_dir() + "/" + doc;
    ASSERT_TRUE(std::filesystem::is_regular_file(path)) << path;
    const std::vector<std::string> examples = yaml_examples(read_text(path));
    EXPECT_FALSE(examples.empty()) << doc << " has no ```yaml block: the test would check nothing";
    for (std::size_t k = 0; k < examples.size(); ++k) {
      const std::string name = doc + ", YAML example " + std::to_string(k + 1);
      try {
        (void)parse_config(examples[k], name);
      } catch (const InputError& e) {
        ADD_FAILURE() << e.what() << "\n" << examples[k];
      }
    }
  }
}

// The keys docs/MIGRATING.md names in its text and tables (`amg.smoother.pre_steps`) are the schema's keys
// or sections: a key renamed fails here. Names read as calls or items (`solver.solve(b)`, `solver.setup[...]`)
// and file names (`amgsolve/solver.hpp`) are not keys.
TEST(Config, TheKeysMigratingMdNamesAreTheSchemas) {
  const std::string text = read_text(test::source_dir() + "/docs/MIGRATING.md");
  std::set<std::string> keys;
  for (const KeySpec& k : config_schema()) keys.insert(k.path);
  const std::regex key_like(R"((amg|solver|problem|output)(\.[a-z_0-9]+)+)");
  int named = 0;
  for (auto m = std::sregex_iterator(text.begin(), text.end(), key_like); m != std::sregex_iterator(); ++m) {
    const auto at = static_cast<std::size_t>(m->position()), end = at + static_cast<std::size_t>(m->length());
    const auto part_of_a_name = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; };
    if (at > 0 && part_of_a_name(text[at - 1])) continue;    // params.amg.pre_smooth, amgsolve.Solver
    if (end < text.size() && (text[end] == '(' || text[end] == '[')) continue;
    const std::string path = m->str();
    if (path.ends_with(".hpp") || path.ends_with(".cpp")) continue;
    ++named;
    EXPECT_TRUE(keys.count(path) || is_config_section(path)) << "docs/MIGRATING.md names '" << path << "'";
  }
  EXPECT_GT(named, 20) << "docs/MIGRATING.md's key names were not found: the test would check nothing";
}

}  // namespace
}  // namespace amgsolve

namespace amgsolve {
namespace {

std::string config_error(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  try {
    parse_config(yaml, "cfg.yaml", overrides);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

// A key with no value is not a silent default: `size:` alone would run the 2.1 million-unknown default.
TEST(ConfigReview, KeyWithoutValueIsAnError) {
  const std::string e = config_error("problem:\n  stencil: 7pt\n  size:\n");
  EXPECT_NE(e.find("cfg.yaml:3:"), std::string::npos) << e;
  EXPECT_NE(e.find("'problem.size' has no value"), std::string::npos) << e;
  const std::string set = config_error("", {"solver.tolerance="});
  EXPECT_NE(set.find("--set solver.tolerance"), std::string::npos) << set;
  EXPECT_NE(set.find("has no value"), std::string::npos) << set;
  // An empty section is still just an empty section.
  EXPECT_NO_THROW(parse_config("problem:\namg:\n  smoother:\nsolver:\n", "cfg.yaml"));
}

// Duplicate keys are an error naming both lines (yaml-cpp alone would keep the first silently), also for a
// repeated section.
TEST(ConfigReview, DuplicateKeysNameBothLines) {
  const std::string e = config_error("solver:\n  tolerance: 1e-6\n  max_iterations: 9\n  tolerance: 1e-8\n");
  EXPECT_NE(e.find("cfg.yaml:4:"), std::string::npos) << e;
  EXPECT_NE(e.find("'solver.tolerance' is given twice (first on line 2)"), std::string::npos) << e;
  const std::string section = config_error("amg:\n  coarse_size: 10\nsolver:\n  type: pcg\namg:\n  seed: 3\n");
  EXPECT_NE(section.find("cfg.yaml:5:"), std::string::npos) << section;
  EXPECT_NE(section.find("'amg' is given twice (first on line 1)"), std::string::npos) << section;
  // Both are the file's, also where --set gives the key (it was blamed on the --set).
  const std::string with_set = config_error("problem:\n  stencil: 7pt\n  stencil: 7pt\n", {"problem.stencil=7pt"});
  EXPECT_NE(with_set.find("cfg.yaml:3: 'problem.stencil' is given twice (first on line 2)"), std::string::npos)
      << with_set;
}

TEST(ConfigReview, SecondDocumentAndNulBytesAreErrors) {
  const std::string two = config_error("solver:\n  tolerance: 1e-6\n---\nsolver:\n  tolerance: 1e-9\n");
  EXPECT_NE(two.find("a second YAML document"), std::string::npos) << two;
  EXPECT_EQ(two.rfind("cfg.yaml:3:", 0), 0u) << two;
  const std::string nul = config_error(std::string("solver:\n  tolerance: 1e-6\n\0\0\0", 30));
  EXPECT_NE(nul.find("cfg.yaml:3:"), std::string::npos) << nul;
  EXPECT_NE(nul.find("NUL bytes"), std::string::npos) << nul;
  EXPECT_NE(config_error(std::string(16, '\0')).find("NUL bytes"), std::string::npos);
}

// Found by fuzz/config.cpp: yaml-cpp 0.7's LoadAll loops forever, allocating, on these.
TEST(ConfigReview, InputsThatHungTheYamlParserAreMalformedYaml) {
  for (const char* text : {",", ",moutput.:", "- !+(.,.)", "solver:\n  tolerance: 1e-6\n,\n"}) {
    const std::string e = config_error(text);
    EXPECT_NE(e.find("cfg.yaml:"), std::string::npos) << text << ": " << e;
    EXPECT_NE(e.find("malformed YAML"), std::string::npos) << text << ": " << e;
  }
}

TEST(ConfigReview, EmptyKeyNameInSetNamesTheArgument) {
  for (const char* bad : {"problem..size=[8,8,8]", "problem.=1", ".size=1"}) {
    const std::string e = config_error("", {bad});
    EXPECT_EQ(e.rfind(std::string("--set ") + bad, 0), 0u) << e;
    EXPECT_NE(e.find("empty key name"), std::string::npos) << e;
  }
}

TEST(ConfigReview, IntegersBeyond32BitsAreRejectedWithTheLine) {
  const std::string e = config_error("solver:\n  max_iterations: 3000000000\n");
  EXPECT_NE(e.find("cfg.yaml:2:"), std::string::npos) << e;
  EXPECT_NE(e.find("solver.max_iterations"), std::string::npos) << e;
}

TEST(ConfigReview, UnknownSpgemmBackendNamesKeyAndLine) {
  const std::string e = config_error("amg:\n  coarse_size: 10\n  spgemm: magic\n");
  EXPECT_NE(e.find("cfg.yaml:3:"), std::string::npos) << e;
  EXPECT_NE(e.find("gustavson"), std::string::npos) << e;
}

TEST(ConfigReview, NonScalarKeysAreInputErrors) {
  const std::string e = config_error("amg:\n  ? [a, b]\n  : 1\n");
  EXPECT_NE(e.find("cfg.yaml:"), std::string::npos) << e;
  EXPECT_NE(e.find("plain names"), std::string::npos) << e;
}

}  // namespace
}  // namespace amgsolve

namespace amgsolve {
namespace {

TEST(ConfigMouse, WavelengthsSelectTheTissueModelAndOverridesReplaceOnlyWhatTheyGive) {
  const Config standard = parse_config("problem:\n  type: mouse\n", "cfg.yaml");
  const TissueTable model_750_800 = tissue_table(750, 800);
  const int liver = static_cast<int>(Tissue::liver);
  EXPECT_EQ(standard.problem.mouse.optics[liver][0].mua, model_750_800[liver][0].mua);
  const Config red = parse_config("problem:\n  type: mouse\n  wavelengths: [650, 700]\n", "cfg.yaml");
  const TissueTable model_650_700 = tissue_table(650, 700);
  EXPECT_EQ(red.problem.mouse.optics[liver][0].mua, model_650_700[liver][0].mua);
  // Blood absorbs far more at 650 nm than at 750 nm (deoxyhaemoglobin's red band).
  EXPECT_GT(model_650_700[liver][0].mua, 1.4 * model_750_800[liver][0].mua);
  const Config overridden = parse_config(
      "problem:\n  type: mouse\n  wavelengths: [650, 700]\n  tissues:\n    liver:\n      mua: [0.5, 0.4]\n", "cfg.yaml");
  EXPECT_EQ(overridden.problem.mouse.optics[liver][0].mua, 0.5);
  EXPECT_EQ(overridden.problem.mouse.optics[liver][1].mua, 0.4);
  EXPECT_EQ(overridden.problem.mouse.optics[liver][0].musp, model_650_700[liver][0].musp);
}

TEST(ConfigMouse, UntabulatedWavelengthNamesKeyAndLine) {
  const std::string e = parse_error("problem:\n  type: mouse\n  wavelengths: [660, 700]\n");
  EXPECT_NE(e.find("cfg.yaml:3:"), std::string::npos) << e;
  EXPECT_NE(e.find("problem.wavelengths"), std::string::npos) << e;
  EXPECT_NE(e.find("660"), std::string::npos) << e;
  // Emission is at a longer wavelength than the excitation (a Stokes shift): swapped ones are refused.
  const std::string swapped = parse_error("problem:\n  type: mouse\n  wavelengths: [800, 750]\n");
  EXPECT_NE(swapped.find("emission wavelength (750 nm) is shorter"), std::string::npos) << swapped;
  // A source's coordinate that is not finite is named as such (it read "must be pairs of numbers").
  const std::string nan = parse_error("problem:\n  type: mouse\n  sources:\n    spots: [[.nan, 0]]\n");
  EXPECT_NE(nan.find("finite coordinates in mm, got [nan, 0]"), std::string::npos) << nan;
}

}  // namespace
}  // namespace amgsolve

namespace amgsolve {
namespace {

// The solver's settings alone (the library's and the Python package's parameters): the same keys and checks
// as a config file, named "parameter KEY" in messages, and nothing but backend, amg.* and solver.*.
TEST(SolverSettings, ReadTheSameKeysAsAConfigFile) {
  const Config c = parse_solver_settings({"amg.coarse_size=77", "solver.tolerance=1e-10", "solver.precision=mixed",
                                          "amg.smoother.type=jacobi", "backend=cpu"},
                                         "parameter");
  const Config file = parse_config("amg: {coarse_size: 77, smoother: {type: jacobi}}\n"
                                   "solver: {tolerance: 1e-10, precision: mixed}\nbackend: cpu\n",
                                   "cfg.yaml");
  EXPECT_EQ(c.amg.coarse_size, 77);
  EXPECT_EQ(c.amg.coarse_size, file.amg.coarse_size);
  EXPECT_EQ(c.amg.smoother.type, file.amg.smoother.type);
  EXPECT_EQ(c.solver.tolerance, file.solver.tolerance);
  EXPECT_EQ(c.solver.precision, Precision::mixed);
  EXPECT_EQ(c.amg.spgemm, file.amg.spgemm);  // the backend's default, resolved alike
  const Config defaults = parse_solver_settings({}, "parameter");
  EXPECT_EQ(defaults.amg.coarse_size, AmgParams{}.coarse_size);
  EXPECT_EQ(defaults.solver.tolerance, SolverParams{}.tolerance);
}

TEST(SolverSettings, WrongOnesAreNamedInOneLine) {
  const auto message = [](const std::vector<std::string>& settings) {
    try {
      parse_solver_settings(settings, "parameter");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message({"problem.size=[4,4]"}),
            "parameter problem.size: not a solver parameter (the solver takes backend, amg.* and solver.*)");
  EXPECT_NE(message({"output.report=r.json"}).find("not a solver parameter"), std::string::npos);
  EXPECT_EQ(message({"amg.coarse_size=0"}).rfind("parameter amg.coarse_size: ", 0), 0u) << message({"amg.coarse_size=0"});
  EXPECT_NE(message({"amg.coarse_sise=10"}).find("coarse_size"), std::string::npos);  // unknown, with the suggestion
  // Other solvers' names, and keys without their section (Python's Solver(A, coarse_size=10)), are pointed
  // at ours: "tol" was nearest to solver.type, and the bare keys had no hint.
  EXPECT_NE(message({"solver.tol=1e-6"}).find("(did you mean 'solver.tolerance'?)"), std::string::npos)
      << message({"solver.tol=1e-6"});
  EXPECT_NE(message({"solver.maxiter=10"}).find("'solver.max_iterations'"), std::string::npos);
  EXPECT_NE(message({"amg.max_coarse=10"}).find("'amg.coarse_size'"), std::string::npos);
  EXPECT_EQ(message({"coarse_size=10"}), "parameter coarse_size: not a solver parameter (the solver takes backend, "
                                         "amg.* and solver.*) (did you mean 'amg.coarse_size'?)");
  EXPECT_NE(message({"tol=1e-6"}).find("(did you mean 'solver.tolerance'?)"), std::string::npos);
  EXPECT_NE(message({"solver.precision=quad"}).find("'quad' is not one of"), std::string::npos);
  EXPECT_NE(message({"amg.spgemm=nope"}).find("nope"), std::string::npos);
  EXPECT_NE(message({"amg.coarse_size"}).find("expected key.path=value"), std::string::npos);
  EXPECT_NE(message({"amg=5"}).find("give the section's keys"), std::string::npos);
  EXPECT_NE(message({"amg.compare_runs=3"}).find("--compare-spgemm"), std::string::npos);
}

}  // namespace
}  // namespace amgsolve
