// JSON output and atomic files: what is written reads back equal; failed writes leave nothing behind.
// (The VTK writers are tested in test_vtk.cpp, built when VTK is.)
#include <fstream>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "output/report.hpp"
#include "test_support.hpp"

namespace amgsolve {
namespace {

TEST(AtomicFile, UncommittedFileLeavesNothing) {
  test::ScratchDir dir;
  {
    AtomicFile f(dir.file("out.json"));
    std::ofstream(f.temp_path()) << "partial";
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
  {
    AtomicFile f(dir.file("out.json"));
    std::ofstream(f.temp_path()) << "whole";
    f.commit();
  }
  std::ifstream in(dir.file("out.json"));
  std::string text;
  in >> text;
  EXPECT_EQ(text, "whole");
}

TEST(AtomicFile, RequireWritableNamesTheMissingDirectory) {
  try {
    require_writable("/nonexistent-dir/r.json", "report file");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir"), std::string::npos);
  }
}

TEST(Report, HasTheDocumentedFields) {
  RunRecord run;
  run.rows = 10;
  run.nnz = 28;
  LevelInfo l0;
  l0.rows = 10;
  l0.nnz = 28;
  l0.spgemm_seconds = 0.5;
  LevelInfo l1;
  l1.level = 1;
  l1.rows = 3;
  l1.nnz = 9;
  l1.coarsest = true;
  run.setup.levels = {l0, l1};
  run.solve.iterations = 2;
  run.solve.history = {1.0, 0.1, 0.01};
  run.solve.converged = true;
  const nlohmann::json j = report_json(run);
  for (const char* key : {"rows", "nnz"}) EXPECT_TRUE(j["problem"].contains(key)) << key;
  for (const char* key : {"seconds", "levels", "operator_complexity", "grid_complexity", "spgemm_backend"})
    EXPECT_TRUE(j["setup"].contains(key)) << key;
  for (const char* key : {"iterations", "relative_residual", "converged", "seconds", "history"})
    EXPECT_TRUE(j["solve"].contains(key)) << key;
  ASSERT_EQ(j["setup"]["levels"].size(), 2u);
  for (const auto& level : j["setup"]["levels"])
    for (const char* key : {"rows", "nnz", "spgemm_seconds"}) EXPECT_TRUE(level.contains(key)) << key;
  EXPECT_EQ(j["solve"]["history"].size(), 3u);
  EXPECT_NEAR(j["solve"]["convergence_factor"].get<double>(), 0.1, 1e-12);
}

}  // namespace
}  // namespace amgsolve
