// End-to-end tests of the amgsolve program: every kind of bad input fails with exit status 1, exactly one
// line on stderr naming the file, key or line at fault, and no output file; good input writes a complete
// report (and VTK file / solution vector) and exits 0, or 3 when the tolerance is not reached.
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "amg/rigid_body_modes.hpp"
#include "app/run.hpp"
#include "output/vtk_writer.hpp"
#include "sparse/matrix_market.hpp"
#include "common/device.hpp"
#include "sparse/sliced_ellpack.hpp"
#include "test_support.hpp"

namespace amgsolve {
namespace {

using nlohmann::json;
using test::ScratchDir;

const std::string kSmallConfig = std::string(AMGSOLVE_SOURCE_DIR) + "/configs/poisson-small.yaml";

struct RunResult {
  int status = -1;  // exit status, -1 if the program did not exit normally
  std::string out, err;
};

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string write_text(const ScratchDir& dir, const std::string& name, const std::string& text) {
  const std::string path = dir.file(name);
  std::ofstream(path) << text;
  return path;
}

// Single-quoted for /bin/sh.
std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Runs amgsolve with `args` in `dir` (so stray relative outputs would land there), capturing stdout and
// stderr through files that are removed again before returning.
// `environment`: VAR=VALUE settings for this run.
// `launcher`: a command the program runs under (setpriv, to run it as another user).
RunResult run(const ScratchDir& dir, const std::vector<std::string>& args, const std::string& environment = "",
              const std::string& launcher = "") {
  const std::string out_path = dir.file(".stdout"), err_path = dir.file(".stderr");
  std::string command = "cd " + quote(dir.path().string()) + " && " + (environment.empty() ? "" : "env " + environment + " ") +
                        launcher + quote(AMGSOLVE_BINARY);
  for (const std::string& a : args) command.append(" ").append(quote(a));
  command += " </dev/null >" + quote(out_path) + " 2>" + quote(err_path);
  const int raw = std::system(command.c_str());
  RunResult r;
  r.status = (raw != -1 && WIFEXITED(raw)) ? WEXITSTATUS(raw) : -1;
  r.out = read_text(out_path);
  r.err = read_text(err_path);
  std::filesystem::remove(out_path);
  std::filesystem::remove(err_path);
  return r;
}

// Whether the program starts under `launcher` (an address-space limit a sanitizer's shadow memory exceeds).
bool starts_under(const ScratchDir& dir, const std::string& launcher) {
  return run(dir, {"--version"}, "", launcher).status == 0;
}

int line_count(const std::string& text) {
  int lines = 0;
  for (char c : text) lines += c == '\n' ? 1 : 0;
  if (!text.empty() && text.back() != '\n') ++lines;
  return lines;
}

// Names of the files (recursively, relative) in the scratch directory.
std::set<std::string> files_in(const ScratchDir& dir) {
  std::set<std::string> names;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir.path()))
    if (!entry.is_directory()) names.insert(entry.path().lexically_relative(dir.path()).string());
  return names;
}

// A clean failure: exit status 1, exactly one line on stderr containing every `expected` part, and no
// file in the scratch directory but the test's own `inputs` (no report, VTK, solution or temporary file).
::testing::AssertionResult FailedCleanly(const RunResult& r, const ScratchDir& dir, const std::set<std::string>& inputs,
                                         const std::vector<std::string>& expected) {
  std::ostringstream problems;
  if (r.status != kExitError) problems << "  exit status " << r.status << ", expected " << kExitError << "\n";
  if (line_count(r.err) != 1 || r.err.back() != '\n')
    problems << "  stderr has " << line_count(r.err) << " lines, expected exactly one (newline-terminated)\n";
  for (const std::string& part : expected)
    if (r.err.find(part) == std::string::npos) problems << "  stderr does not contain \"" << part << "\"\n";
  for (const std::string& name : files_in(dir))
    if (!inputs.contains(name)) problems << "  a failed run left the file " << name << " behind\n";
  if (problems.str().empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\n"
                                       << problems.str() << "stderr:\n"
                                       << r.err << "stdout:\n"
                                       << r.out;
}

// The value at a dotted path of the report; fails the test (and returns null) when it is missing.
json field(const json& j, const std::string& path) {
  const json* node = &j;
  std::istringstream parts(path);
  std::string part;
  while (std::getline(parts, part, '.')) {
    if (!node->is_object() || !node->contains(part)) {
      ADD_FAILURE() << "report has no field " << path;
      return nullptr;
    }
    node = &node->at(part);
  }
  return *node;
}

json read_report(const std::string& path) {
  const std::string text = read_text(path);
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    ADD_FAILURE() << path << " is not valid JSON:\n" << text;
    return json::object();
  }
  return j;
}

// `--vtk dir/name`, or nothing in a build without VTK (where any --vtk is refused: BuiltWithoutVtk).
std::vector<std::string> vtk_flag(const ScratchDir& dir, const std::string& name) {
  if (!vtk_available()) return {};
  return {"--vtk", dir.file(name)};
}

// The output flags of a bad-input run: report and VTK file in the scratch directory.
std::vector<std::string> with_outputs(const ScratchDir& dir, std::vector<std::string> args) {
  args.insert(args.end(), {"--report", dir.file("R.json")});
  for (std::string& flag : vtk_flag(dir, "V.vti")) args.push_back(std::move(flag));
  return args;
}

// A config for a matrix_market problem on dir/A.mtx, written to dir/cfg.yaml.
std::string matrix_config(const ScratchDir& dir) {
  return write_text(dir, "cfg.yaml", "problem:\n  type: matrix_market\n  matrix: " + dir.file("A.mtx") + "\n");
}

// Writes `matrix` as dir/A.mtx and runs it as a matrix_market problem, asking for a report and a solution
// file in the scratch directory (VTK is not available for matrices).
RunResult run_matrix(const ScratchDir& dir, const std::string& matrix, std::vector<std::string> extra = {}) {
  write_text(dir, "A.mtx", matrix);
  std::vector<std::string> args = {matrix_config(dir), "--report", dir.file("R.json"), "--set",
                                   "output.solution=" + dir.file("x.mtx")};
  args.insert(args.end(), extra.begin(), extra.end());
  return run(dir, args);
}

const std::set<std::string> kMatrixInputs = {"cfg.yaml", "A.mtx"};

// The Matrix Market text of an n x 1 array.
std::string array_vector(const std::vector<double>& values) {
  std::ostringstream b;
  b << "%%MatrixMarket matrix array real general\n" << values.size() << " 1\n";
  for (double v : values) b << v << "\n";
  return b.str();
}

// 1D Laplacian tridiag(-1, 2, -1) of order n in symmetric coordinate format (lower triangle).
std::string laplacian_1d(int n) {
  std::ostringstream m;
  m << "%%MatrixMarket matrix coordinate real symmetric\n"
    << "% 1D Laplacian\n"
    << n << " " << n << " " << (2 * n - 1) << "\n";
  for (int i = 1; i <= n; ++i) {
    m << i << " " << i << " 2\n";
    if (i < n) m << i + 1 << " " << i << " -1\n";
  }
  return m.str();
}

// ================================================================ bad input

TEST(Cli, MissingConfigFile) {
  ScratchDir dir;
  const std::string missing = dir.file("missing.yaml");
  const RunResult r = run(dir, with_outputs(dir, {missing}));
  EXPECT_TRUE(FailedCleanly(r, dir, {}, {missing}));
}

TEST(Cli, NoConfigFileGiven) {
  ScratchDir dir;
  const RunResult r = run(dir, {});
  EXPECT_TRUE(FailedCleanly(r, dir, {}, {"no config file"}));
}

TEST(Cli, MalformedYaml) {
  ScratchDir dir;
  const std::string cfg = write_text(dir, "cfg.yaml",
                                     "problem:\n"           // 1
                                     "  type: poisson\n"    // 2
                                     "  stencil: 7pt: x\n"  // 3
                                     "  size: [8, 8, 8]\n");
  const RunResult r = run(dir, with_outputs(dir, {cfg}));
  EXPECT_TRUE(FailedCleanly(r, dir, {"cfg.yaml"}, {cfg + ":3:", "malformed YAML"}));
}

TEST(Cli, UnknownKey) {
  ScratchDir dir;
  const std::string cfg = write_text(dir, "cfg.yaml",
                                     "problem:\n"             // 1
                                     "  size: [8, 8, 8]\n"    // 2
                                     "amg:\n"                 // 3
                                     "  coarse_szie: 10\n");  // 4
  const RunResult r = run(dir, with_outputs(dir, {cfg}));
  EXPECT_TRUE(FailedCleanly(r, dir, {"cfg.yaml"}, {cfg + ":4:", "amg.coarse_szie", "amg.coarse_size"}));
}

TEST(Cli, UnknownKeyInSet) {
  ScratchDir dir;
  const RunResult r = run(dir, with_outputs(dir, {kSmallConfig, "--set", "solver.tolerence=1e-6"}));
  EXPECT_TRUE(FailedCleanly(r, dir, {}, {"--set", "solver.tolerence"}));
}

TEST(Cli, WrongType) {
  ScratchDir dir;
  const std::string cfg = write_text(dir, "cfg.yaml",
                                     "problem:\n"             // 1
                                     "  size: [8, 8, 8]\n"    // 2
                                     "amg:\n"                 // 3
                                     "  coarse_size: abc\n"); // 4
  const RunResult r = run(dir, with_outputs(dir, {cfg}));
  EXPECT_TRUE(FailedCleanly(r, dir, {"cfg.yaml"}, {cfg + ":4:", "amg.coarse_size", "abc"}));
}

TEST(Cli, NegativeSize) {
  ScratchDir dir;
  const std::string cfg = write_text(dir, "cfg.yaml",
                                     "problem:\n"                 // 1
                                     "  type: poisson\n"          // 2
                                     "  size: [-4, 8, 8]\n");     // 3
  const RunResult r = run(dir, with_outputs(dir, {cfg}));
  EXPECT_TRUE(FailedCleanly(r, dir, {"cfg.yaml"}, {cfg + ":3:", "problem.size", "-4"}));
}

TEST(Cli, ZeroSize) {
  ScratchDir dir;
  const RunResult r = run(dir, with_outputs(dir, {kSmallConfig, "--set", "problem.size=[0,8,8]"}));
  EXPECT_TRUE(FailedCleanly(r, dir, {}, {"--set", "problem.size"}));
}

TEST(Cli, SizeBeyondThe32BitIndexLimit) {
  ScratchDir dir;  // 2000^3 = 8e9 unknowns
  const RunResult r = run(dir, with_outputs(dir, {kSmallConfig, "--set", "problem.size=[2000,2000,2000]"}));
  EXPECT_TRUE(FailedCleanly(r, dir, {}, {"problem.size", "32-bit"}));
}

TEST(Cli, SizeBeyondTheAvailableMemory) {
  ScratchDir dir;  // 1200^3 = 1.7e9 unknowns fit 32-bit indices but need some 800 GiB
  const RunResult r = run(dir, with_outputs(dir, {kSmallConfig, "--set", "problem.size=[1200,1200,1200]"}));
  EXPECT_TRUE(FailedCleanly(r, dir, {}, {"memory"}));
}

// Under ulimit -v (common on clusters) 64 threads, what a many-core node starts by default, share a few
// malloc arenas: a small problem runs within 2 GB of address space (each thread's 64 MiB arena had taken
// 4 GiB of it before any work). 512 threads' stacks alone exceed it: refused, naming the threads.
TEST(Cli, ManyThreadsRunUnderAnAddressSpaceLimit) {
  if (std::system("prlimit --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "no prlimit (util-linux) to set the limit";
  ScratchDir dir;
  const std::string limit = "prlimit --as=2000000000 ";
  if (!starts_under(dir, limit)) GTEST_SKIP() << "the program cannot start under a 2 GB address-space limit (a sanitizer's build)";
  const RunResult r = run(dir, {kSmallConfig, "--threads", "64", "--quiet", "--vtk", ""}, "", limit);
  EXPECT_EQ(r.status, 0) << r.err;
  const RunResult many = run(dir, {kSmallConfig, "--threads", "512", "--vtk", ""}, "", limit);
  EXPECT_TRUE(FailedCleanly(many, dir, {}, {"ulimit -v leaves", "run fewer threads (--threads): the 512 map about"}));
}

// Threads beyond the cores are said in a line of their own (each waits for the others at every barrier: a
// run many times slower); threads within them are not.
TEST(Cli, ThreadsBeyondTheCoresAreSaid) {
  const unsigned cores = std::thread::hardware_concurrency();
  if (cores == 0) GTEST_SKIP() << "the core count is unknown";
  ScratchDir dir;
  const std::string beyond = std::to_string(cores + 1);
  const RunResult over = run(dir, {kSmallConfig, "--threads", beyond, "--vtk", ""});
  EXPECT_EQ(over.status, 0) << over.err;
  EXPECT_NE(over.out.find("\n  oversubscribed: " + beyond + " threads on " + std::to_string(cores) + " core"),
            std::string::npos)
      << over.out;
  const RunResult within = run(dir, {kSmallConfig, "--threads", "1", "--vtk", ""});
  EXPECT_EQ(within.status, 0) << within.err;
  EXPECT_EQ(within.out.find("oversubscribed"), std::string::npos) << within.out;
}

// A folder given where the VTK file goes is named as one, whatever its name (it was told to use a .vti name).
TEST(Cli, ADirectoryGivenForTheVtkFileIsNamedAsOne) {
  if (!vtk_available()) GTEST_SKIP() << "built without VTK";
  ScratchDir dir;
  std::filesystem::create_directory(dir.file("views"));
  const RunResult r = run(dir, {kSmallConfig, "--vtk", "views"});
  EXPECT_TRUE(FailedCleanly(r, dir, {"views"}, {"--vtk: views is a directory; give a .vti file's name"}));
}

TEST(Cli, GpuRequestedWithoutADeviceFailsBeforeTheSetup) {
  if (gpu_status().usable()) GTEST_SKIP() << "a GPU is present: the request is honoured";
  ScratchDir dir;
  const RunResult r = run(dir, with_outputs(dir, {kSmallConfig, "--set", "backend=cuda"}));
  EXPECT_TRUE(FailedCleanly(r, dir, {}, {"--set backend", "needs a GPU"}));
  EXPECT_EQ(r.out.find("AMG setup"), std::string::npos) << "no setup before the error";
}

TEST(Cli, RetiredDeviceKeysFailNamingTheBackendKey) {
  for (const char* key : {"amg.device=gpu", "solver.device=cpu"}) {
    ScratchDir dir;
    const RunResult r = run(dir, with_outputs(dir, {kSmallConfig, "--set", key}));
    const std::string name = std::string(key).substr(0, std::string(key).find('='));
    EXPECT_TRUE(FailedCleanly(r, dir, {}, {name, "replaced by the top-level key `backend`"}));
  }
}

TEST(Cli, AutoBackendWithoutAGpuRunsOnTheCpu) {
  if (gpu_status().usable()) GTEST_SKIP() << "a GPU is present: auto picks it";
  ScratchDir dir;
  const RunResult r = run(dir, {kSmallConfig, "--quiet", "--set", "backend=auto", "--report", dir.file("R.json")});
  ASSERT_EQ(r.status, kExitOk) << r.err;
  const json report = read_report(dir.file("R.json"));
  EXPECT_EQ(field(report, "backend").get<std::string>(), "cpu");
  EXPECT_EQ(field(report, "setup.spmv_format").get<std::string>(), sliced_ellpack_vector_units() ? "sliced-ellpack" : "csr");
  const json levels = field(report, "setup.levels");
  for (const json& level : levels) {
    ASSERT_EQ(level.at("spmv_formats").size(), 3u);
    EXPECT_EQ(level.at("spmv_formats")[0].at("format"), "csr");
    EXPECT_GT(level.at("spmv_formats")[2].at("bytes").get<double>(), 0.0);
  }
}

TEST(Cli, UnknownSpgemmBackend) {
  ScratchDir dir;
  const RunResult r = run(dir, with_outputs(dir, {kSmallConfig, "--set", "amg.spgemm=nosuch"}));
  EXPECT_TRUE(FailedCleanly(r, dir, {}, {"nosuch", "it has", "gustavson"}));
}

TEST(Cli, ReportDirectoryMissing) {
  ScratchDir dir;
  const std::string report = dir.file("no/such/dir/R.json");
  const RunResult r = run(dir, {kSmallConfig, "--report", report});
  EXPECT_TRUE(FailedCleanly(r, dir, {}, {report}));
}

// An output option whose path was forgotten does not take the next option as its path (CLI11 would: `--report
// --quiet` wrote the report into a file named "--quiet"); a file whose name starts with '-' is written as ./-name.
TEST(Cli, AnOptionIsNotTakenAsAnOutputsPath) {
  ScratchDir dir;
  RunResult r = run(dir, {kSmallConfig, "--report", "--quiet"});
  EXPECT_TRUE(FailedCleanly(r, dir, {}, {"--report", "'--quiet' is an option, not a file name"}));
  r = run(dir, {kSmallConfig, "--vtk", "--set", "problem.size=[4,4,4]"});
  EXPECT_TRUE(FailedCleanly(r, dir, {}, {"--vtk", "'--set' is an option"}));
  r = run(dir, {kSmallConfig, "--quiet", "--report", "./-R.json"});
  EXPECT_EQ(r.status, kExitOk) << r.err;
  EXPECT_TRUE(std::filesystem::exists(dir.file("-R.json")));
}

// No output overwrites an input or another output: refused by name before any work.
TEST(Cli, OutputOntoTheConfigOrAnotherOutputIsRefused) {
  ScratchDir dir;
  const std::string cfg = write_text(dir, "cfg.yaml", read_text(kSmallConfig));
  RunResult r = run(dir, {cfg, "--report", cfg});
  EXPECT_TRUE(FailedCleanly(r, dir, {"cfg.yaml"}, {"report file", "is the input file"}));
  EXPECT_EQ(read_text(cfg), read_text(kSmallConfig)) << "the config is untouched";
  r = run(dir, {cfg, "--report", dir.file("R.json"), "--set", "output.solution=" + dir.file("R.json")});
  EXPECT_TRUE(FailedCleanly(r, dir, {"cfg.yaml"}, {"same file"}));
  EXPECT_EQ(r.out.find("AMG setup"), std::string::npos) << "no setup before the error";
}

// An output replaces only a file amgsolve wrote (or an empty one): another program's report, solution or VTK
// file, or a read-only one, is named and left as it was, before any work.
TEST(Cli, AnOutputNeverReplacesAFileThatIsNotOurs) {
  ScratchDir dir;
  const std::string notes = write_text(dir, "notes.json", "{\"mine\": true}\n");
  RunResult r = run(dir, {kSmallConfig, "--report", notes});
  EXPECT_TRUE(FailedCleanly(r, dir, {"notes.json"}, {"notes.json", "not an amgsolve report file"}));
  EXPECT_EQ(read_text(notes), "{\"mine\": true}\n");
  const std::string vector = write_text(dir, "x.mtx", array_vector({1, 2, 3}));
  r = run(dir, {kSmallConfig, "--set", "output.solution=" + vector});
  EXPECT_TRUE(FailedCleanly(r, dir, {"notes.json", "x.mtx"}, {"x.mtx", "not an amgsolve solution file"}));
  EXPECT_EQ(r.out.find("AMG setup"), std::string::npos) << "no setup before the error";
  // Its own outputs it replaces, run after run, and the permissions they were given stay.
  const std::string report = dir.file("R.json"), solution = dir.file("x2.mtx");
  for (int round = 0; round < 2; ++round) {
    r = run(dir, {kSmallConfig, "--quiet", "--report", report, "--set", "output.solution=" + solution});
    ASSERT_EQ(r.status, kExitOk) << r.err;
    if (round == 0) std::filesystem::permissions(report, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  }
  EXPECT_EQ(std::filesystem::status(report).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  std::filesystem::permissions(report, std::filesystem::perms::owner_read);
  r = run(dir, {kSmallConfig, "--report", report});
  EXPECT_TRUE(FailedCleanly(r, dir, {"notes.json", "x.mtx", "R.json", "x2.mtx"}, {"R.json", "read-only"}));
}

// Files of another user: one read-only to this user (mode 644, another owner) would be replaced by the rename,
// changing hands; one in a directory with the sticky bit cannot be replaced at all, which the run found only
// after its solve. Both are refused before any work. Run as root, the program is started as the user nobody.
TEST(Cli, AnOutputOfAnotherUserIsRefusedBeforeAnyWork) {
  const std::string as_nobody = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
  ScratchDir dir;
  if (::geteuid() != 0 || run(dir, {kSmallConfig, "--quiet", "--report", "", "--vtk", ""}, "", as_nobody).status != kExitOk)
    GTEST_SKIP() << "needs root, setpriv, and the program and its config readable by the user nobody";
  const std::string report = dir.file("R.json");
  ASSERT_EQ(run(dir, {kSmallConfig, "--quiet", "--report", report}).status, kExitOk);  // root's report
  const std::string before = read_text(report);
  namespace fs = std::filesystem;
  fs::permissions(dir.path(), fs::perms::all);  // 0777: the others may create files here
  fs::permissions(report, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
  RunResult r = run(dir, {kSmallConfig, "--report", report}, "", as_nobody);
  EXPECT_TRUE(FailedCleanly(r, dir, {"R.json"}, {"R.json exists and is read-only to this user"}));
  fs::permissions(dir.path(), fs::perms::all | fs::perms::sticky_bit);  // 1777, as /tmp
  fs::permissions(report, fs::perms::all & ~(fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec));
  r = run(dir, {kSmallConfig, "--report", report}, "", as_nobody);
  EXPECT_TRUE(FailedCleanly(r, dir, {"R.json"}, {"R.json belongs to another user, in a directory with the sticky bit"}));
  EXPECT_EQ(read_text(report), before);
  struct stat owner {};
  ASSERT_EQ(::stat(report.c_str(), &owner), 0);
  EXPECT_EQ(owner.st_uid, 0u) << "still root's";
  // Root replaces another user's report of ours, which stays that user's.
  ASSERT_EQ(::chown(report.c_str(), 65534, 65534), 0);
  ASSERT_EQ(run(dir, {kSmallConfig, "--quiet", "--report", report}).status, kExitOk);
  ASSERT_EQ(::stat(report.c_str(), &owner), 0);
  EXPECT_EQ(owner.st_uid, 65534u) << "still nobody's";
  EXPECT_NE(read_text(report), "") << "replaced";
}

// Output names the run could not create are said before any work: a name too long for the file system (found
// after the solve), a control character (a line break split the one-line error, or went into a file's name),
// a file where a directory should be ("does not exist"), and a name that is only the extension.
TEST(Cli, OutputNamesThatCannotBeCreatedAreSaidBeforeAnyWork) {
  ScratchDir dir;
  RunResult r = run(dir, {kSmallConfig, "--report", std::string(300, 'a') + ".json"});
  EXPECT_TRUE(FailedCleanly(r, dir, {}, {"report file aaaa", "the name is too long for the file system"}));
  EXPECT_EQ(r.out.find("AMG setup"), std::string::npos) << "no setup before the error";
  r = run(dir, {kSmallConfig, "--vtk", "a\nb.vti"});
  EXPECT_TRUE(FailedCleanly(r, dir, {}, {"VTK file a\\x0ab.vti: a file name must not hold control characters"}));
  r = run(dir, {kSmallConfig, "--report", "R\x1b[31m.json"});
  EXPECT_TRUE(FailedCleanly(r, dir, {}, {"report file R\\x1b[31m.json: a file name must not hold control characters"}));
  write_text(dir, "notes.txt", "mine\n");
  r = run(dir, {kSmallConfig, "--report", "notes.txt/R.json"});
  EXPECT_TRUE(FailedCleanly(r, dir, {"notes.txt"}, {"report file notes.txt/R.json: notes.txt is not a directory"}));
  r = run(dir, {kSmallConfig, "--report", "missing/R.json"});  // from a config, this would not be its folder
  EXPECT_TRUE(FailedCleanly(r, dir, {"notes.txt"},
                            {"report file missing/R.json: directory missing does not exist (a relative output path "
                             "is taken from the working directory, "}));
  r = run(dir, {kSmallConfig, "--vtk", ".vti"});
  EXPECT_TRUE(FailedCleanly(r, dir, {"notes.txt"}, {"--vtk: .vti has no name before its .vti extension"}));
}

// --compare-spgemm with --set amg.compare_spgemm=false ran without saying which one won.
TEST(Cli, CompareSpgemmGivenTwoWaysIsRefused) {
  ScratchDir dir;
  RunResult r = run(dir, {kSmallConfig, "--compare-spgemm", "--set", "amg.compare_spgemm=false"});
  EXPECT_TRUE(FailedCleanly(r, dir, {}, {"--compare-spgemm and --set amg.compare_spgemm=false both given"}));
  r = run(dir, {kSmallConfig, "--compare-spgemm", "--set", "amg={compare_spgemm: false}"});
  EXPECT_TRUE(FailedCleanly(r, dir, {}, {"--compare-spgemm and --set amg={compare_spgemm: false} both given"}));
}

// --set takes one KEY=VALUE: a config named after it is still the config, and a stray argument is one line.
TEST(Cli, SetBeforeTheConfigKeepsTheConfig) {
  ScratchDir dir;
  const RunResult r = run(dir, {"--set", "amg.coarse_size=12", kSmallConfig, "--quiet", "--report", dir.file("R.json")});
  ASSERT_EQ(r.status, kExitOk) << r.err;
  const json report = json::parse(read_text(dir.file("R.json")));
  EXPECT_EQ(report["setup"]["levels"].back()["rows"].get<int>() <= 12, true);
  EXPECT_EQ(report["overrides"], json::array({"amg.coarse_size=12"})) << "the report says what the run was";
  const RunResult stray = run(dir, {"--set", "amg.coarse_size=12", "amg.seed=3", kSmallConfig, "--quiet"});
  EXPECT_TRUE(FailedCleanly(stray, dir, {"R.json"}, {"one KEY=VALUE per --set"}));
  // The stray arguments in the order given (CLI11 lists them backwards), an option given twice in words.
  const RunResult two = run(dir, {kSmallConfig, "first", "second"});
  EXPECT_TRUE(FailedCleanly(two, dir, {"R.json"}, {"amgsolve: error: not expected: first second ("}));
  const RunResult twice = run(dir, {kSmallConfig, "--threads", "2", "--threads", "3"});
  EXPECT_TRUE(FailedCleanly(twice, dir, {"R.json"}, {"amgsolve: error: --threads is given 2 times: give it once ("}));
}

// --report '' and --vtk '' write no report and no VTK file where the config asks for them.
TEST(Cli, EmptyReportAndVtkOptionsWriteNone) {
  ScratchDir dir;
  const std::string cfg = write_text(dir, "cfg.yaml",
                                     read_text(kSmallConfig) + "\noutput:\n  report: " + dir.file("config.json") +
                                         "\n  vtk: " + dir.file("config.vti") + "\n");
  RunResult r = run(dir, {cfg, "--quiet", "--report", "", "--vtk", ""});
  ASSERT_EQ(r.status, kExitOk) << r.err;
  EXPECT_EQ(files_in(dir), (std::set<std::string>{"cfg.yaml"}));
  r = run(dir, {cfg, "--quiet"});
  ASSERT_EQ(r.status, kExitOk) << r.err;
  std::set<std::string> written{"cfg.yaml", "config.json"};
  if (vtk_available()) written.insert("config.vti");
  EXPECT_EQ(files_in(dir), written);
}

// More threads than OpenMP can start crashed inside its runtime: refused in one line (--threads still rules).
TEST(Cli, ThreadCountBeyondTheLimitIsRefused) {
  ScratchDir dir;
  RunResult r = run(dir, {kSmallConfig, "--quiet"}, "OMP_NUM_THREADS=100000");
  EXPECT_TRUE(FailedCleanly(r, dir, {}, {"OMP_NUM_THREADS", "4096"}));
  r = run(dir, {kSmallConfig, "--quiet", "--threads", "2"}, "OMP_NUM_THREADS=100000");
  EXPECT_EQ(r.status, kExitOk) << r.err;
}

// A value OpenMP cannot read ran on every core after libgomp's warning: refused (libgomp's own line, which it
// prints as it starts, comes first); a list for nested levels is OpenMP's and runs.
TEST(Cli, ThreadCountThatIsNoNumberIsRefused) {
  ScratchDir dir;
  for (const char* value : {"abc", "0", "1.5", "2,"}) {
    const RunResult r = run(dir, {kSmallConfig, "--quiet", "--report", "", "--vtk", ""},
                            std::string("OMP_NUM_THREADS='") + value + "'");
    EXPECT_EQ(r.status, kExitError) << value;
    EXPECT_NE(r.err.find(std::string("amgsolve: error: OMP_NUM_THREADS='") + value + "' is not a thread count"),
              std::string::npos)
        << r.err;
  }
  const RunResult nested = run(dir, {kSmallConfig, "--quiet", "--report", "", "--vtk", ""}, "OMP_NUM_THREADS=2,1");
  EXPECT_EQ(nested.status, kExitOk) << nested.err;
}

// A report onto a device is written into it: /dev/null stays /dev/null.
TEST(Cli, ReportOntoDevNullKeepsTheDevice) {
  ScratchDir dir;
  const RunResult r = run(dir, {kSmallConfig, "--quiet", "--report", "/dev/null"});
  EXPECT_EQ(r.status, kExitOk) << r.err;
  EXPECT_EQ(std::filesystem::status("/dev/null").type(), std::filesystem::file_type::character);
}

// When one output cannot be written (a link to /dev/full), none of the run's outputs is left behind.
TEST(Cli, OneFailedOutputLeavesNone) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full on this system";
  ScratchDir dir;
  std::filesystem::create_symlink("/dev/full", dir.file("full.json"));
  const RunResult r = run(dir, {kSmallConfig, "--quiet", "--report", dir.file("full.json"), "--set",
                                "output.solution=" + dir.file("x.mtx")});
  EXPECT_TRUE(FailedCleanly(r, dir, {"full.json"}, {"cannot write report file " + dir.file("full.json"), "No space left"}));
}

TEST(Cli, VtkNeedsVtiExtension) {
  if (!vtk_available()) GTEST_SKIP() << "built without VTK";
  ScratchDir dir;
  RunResult r = run(dir, {kSmallConfig, "--report", dir.file("R.json"), "--vtk", dir.file("V.vtk")});
  EXPECT_TRUE(FailedCleanly(r, dir, {}, {"--vtk: ", ".vti"}));  // named as the user gave it
  r = run(dir, {kSmallConfig, "--report", dir.file("R.json"), "--set", "output.vtk=" + dir.file("V.vtk")});
  EXPECT_TRUE(FailedCleanly(r, dir, {}, {"output.vtk: ", ".vti"}));
}

// The device machine's build has no VTK: a .vti request is refused at once, by name, and nothing is written.
TEST(Cli, BuiltWithoutVtkRefusesVtkOutputBeforeSolving) {
  if (vtk_available()) GTEST_SKIP() << "this build has VTK (the test is for builds without it)";
  ScratchDir dir;
  const RunResult r = run(dir, {kSmallConfig, "--report", dir.file("R.json"), "--vtk", dir.file("V.vti")});
  EXPECT_TRUE(FailedCleanly(r, dir, {}, {"output.vtk", "built without VTK"}));
}

TEST(Cli, VtkWithMatrixMarketProblem) {
  if (!vtk_available()) GTEST_SKIP() << "built without VTK";
  ScratchDir dir;
  const RunResult r = run_matrix(dir, laplacian_1d(10), {"--vtk", dir.file("V.vti")});
  EXPECT_TRUE(FailedCleanly(r, dir, kMatrixInputs, {"--vtk: ", "VTK output needs a grid"}));
}

// ---------------------------------------------------------------- bad Matrix Market files

// A FIFO as the matrix is refused by name before it is opened: nobody writes to it, and opening it to see
// whether it can be read would wait for ever.
TEST(Cli, AFifoAsTheMatrixIsRefusedNotWaitedOn) {
  ScratchDir dir;
  ASSERT_EQ(::mkfifo(dir.file("A.mtx").c_str(), 0600), 0);
  const RunResult r = run(dir, {matrix_config(dir), "--quiet"});
  EXPECT_TRUE(FailedCleanly(r, dir, kMatrixInputs, {"problem.matrix", "A.mtx is a pipe, not a file"}));
}

// A matrix with no rows has nothing to solve; a device is no file (/dev/zero would be read forever).
TEST(Cli, MatrixEmptyOrADevice) {
  ScratchDir dir;
  RunResult r = run_matrix(dir, "%%MatrixMarket matrix coordinate real symmetric\n0 0 0\n");
  EXPECT_TRUE(FailedCleanly(r, dir, kMatrixInputs, {"A.mtx", "empty"}));
  if (!std::filesystem::exists("/dev/zero")) GTEST_SKIP() << "no /dev/zero on this system";
  r = run(dir, {matrix_config(dir), "--set", "problem.matrix=/dev/zero"});
  EXPECT_TRUE(FailedCleanly(r, dir, kMatrixInputs, {"/dev/zero", "is a device"}));
}

// The solution is plain text: a .gz name, which it would not honour, is refused before any work.
TEST(Cli, CompressedSolutionNameIsRefused) {
  ScratchDir dir;
  const RunResult r = run(dir, {kSmallConfig, "--set", "output.solution=" + dir.file("x.mtx.gz")});
  EXPECT_TRUE(FailedCleanly(r, dir, {}, {"x.mtx.gz", "not be compressed"}));
}

TEST(Cli, MatrixMalformedBanner) {
  ScratchDir dir;
  const RunResult r = run_matrix(dir,
                                 "%%MatrixMarket matrix coordinat real symmetric\n"
                                 "2 2 2\n"
                                 "1 1 4\n"
                                 "2 2 4\n");
  EXPECT_TRUE(FailedCleanly(r, dir, kMatrixInputs, {dir.file("A.mtx") + ":1:", "coordinat"}));
}

TEST(Cli, MatrixMissingBanner) {
  ScratchDir dir;
  const RunResult r = run_matrix(dir, "2 2 2\n1 1 4\n2 2 4\n");
  EXPECT_TRUE(FailedCleanly(r, dir, kMatrixInputs, {dir.file("A.mtx") + ":1:", "MatrixMarket"}));
}

TEST(Cli, MatrixIndexOutOfRange) {
  ScratchDir dir;
  const RunResult r = run_matrix(dir,
                                 "%%MatrixMarket matrix coordinate real symmetric\n"  // 1
                                 "% a comment line\n"                                 // 2
                                 "3 3 4\n"                                            // 3
                                 "1 1 4\n"                                            // 4
                                 "2 2 4\n"                                            // 5
                                 "5 2 -1\n"                                           // 6
                                 "3 3 4\n");                                          // 7
  EXPECT_TRUE(FailedCleanly(r, dir, kMatrixInputs, {dir.file("A.mtx") + ":6:", "row index 5", "out of range"}));
}

// ---- systems (amg.block_size, problem.near_nullspace, problem.coordinates)

// A 2D elasticity problem (test::elasticity_2d) as dir/A.mtx and its nodes' coordinates as dir/xy.mtx (a
// dense array); `columns` coordinates per node (a third column of zeros for 3).
void write_elasticity(const ScratchDir& dir, Index nx, Index ny, int columns = 2) {
  Vector<double> xy;
  write_matrix_market(dir.file("A.mtx"), test::elasticity_2d(nx, ny, xy), true);
  std::ostringstream points;
  points << "%%MatrixMarket matrix array real general\n" << xy.size() / 2 << " " << columns << "\n";
  for (int c = 0; c < columns; ++c)  // column by column, as the array format lists them
    for (std::size_t n = 0; n < xy.size() / 2; ++n) points << (c < 2 ? xy[2 * n + c] : 0.0) << "\n";
  write_text(dir, "xy.mtx", points.str());
}

TEST(Cli, ElasticityWithCoordinatesSolvesWithTheRigidBodyModes) {
  const ScratchDir dir;
  write_elasticity(dir, 48, 12);
  const std::string cfg = matrix_config(dir);
  const RunResult scalar = run(dir, {cfg, "--report", dir.file("scalar.json")});
  const RunResult rigid = run(dir, {cfg, "--report", dir.file("rigid.json"), "--set", "problem.coordinates=xy.mtx"});
  ASSERT_EQ(scalar.status, 0) << scalar.err;
  ASSERT_EQ(rigid.status, 0) << rigid.err;
  EXPECT_NE(rigid.out.find("system: 2 unknowns per node, 3 near-nullspace vectors"), std::string::npos) << rigid.out;
  const json s = read_report(dir.file("scalar.json")), r = read_report(dir.file("rigid.json"));
  EXPECT_EQ(field(r, "setup.block_size"), 2);
  EXPECT_EQ(field(r, "setup.near_nullspace_vectors"), 3);
  EXPECT_EQ(field(s, "setup.near_nullspace_vectors"), 1);
  EXPECT_LT(3 * field(r, "solve.iterations").get<int>(), field(s, "solve.iterations").get<int>());
}

// A dense rows x columns Matrix Market array of `values` (row by row), every digit kept.
std::string dense_array(const std::vector<double>& values, std::size_t columns) {
  std::ostringstream m;
  m << std::setprecision(17) << "%%MatrixMarket matrix array real general\n" << values.size() / columns << " "
    << columns << "\n";
  for (std::size_t c = 0; c < columns; ++c)  // the array format lists column by column
    for (std::size_t r = 0; r < values.size() / columns; ++r) m << values[r * columns + c] << "\n";
  return m.str();
}

TEST(Cli, ANearNullspaceFileIsTheSameAsItsCoordinates) {
  const ScratchDir dir;
  write_elasticity(dir, 24, 8);
  Vector<double> xy;
  test::elasticity_2d(24, 8, xy);
  const NearNullspaceVectors modes = rigid_body_modes(xy, 2);
  write_text(dir, "B.mtx", dense_array(std::vector<double>(modes.values->begin(), modes.values->end()), 3));
  const std::string cfg = matrix_config(dir);
  const RunResult from_file = run(dir, {cfg, "--report", dir.file("file.json"), "--set", "problem.near_nullspace=B.mtx",
                                        "--set", "amg.block_size=2"});
  const RunResult from_points = run(dir, {cfg, "--report", dir.file("points.json"), "--set", "problem.coordinates=xy.mtx"});
  ASSERT_EQ(from_file.status, 0) << from_file.err;
  ASSERT_EQ(from_points.status, 0) << from_points.err;
  const json f = read_report(dir.file("file.json")), p = read_report(dir.file("points.json"));
  EXPECT_EQ(field(f, "setup.near_nullspace_vectors"), 3);
  EXPECT_EQ(field(f, "solve.history"), field(p, "solve.history"));
}

// A body held nowhere (singular): its rigid-body modes from full-precision coordinates are found to be the
// nullspace, and loads in equilibrium solve to the solution orthogonal to them; a load with a net force is
// refused before the setup, naming its file.
TEST(Cli, AFloatingBodySolvesOnItsRangeAndRefusesANetForce) {
  const ScratchDir dir;
  Vector<double> xy;
  const CsrMatrix<double> A = test::elasticity_2d(48, 12, xy, test::Support::floating);
  write_matrix_market(dir.file("A.mtx"), A, true);
  write_text(dir, "xy.mtx", dense_array(std::vector<double>(xy.begin(), xy.end()), 2));
  // Loads pulling the two ends apart: equal and opposite, no net force or moment.
  std::vector<double> stretch(static_cast<std::size_t>(A.rows), 0.0), pull(stretch.size(), 0.0);
  const double right = xy[xy.size() - 2];  // the last node's x
  for (std::size_t node = 0; node < xy.size() / 2; ++node) {
    if (xy[2 * node] == 0.0) stretch[2 * node] = -1.0;
    if (xy[2 * node] == right) stretch[2 * node] = 1.0;
    pull[2 * node] = 1.0;  // the whole body to the right: a net force
  }
  write_text(dir, "stretch.mtx", array_vector(stretch));
  write_text(dir, "pull.mtx", array_vector(pull));
  const std::string cfg = matrix_config(dir);
  const RunResult solved = run(dir, {cfg, "--report", dir.file("R.json"), "--set", "problem.coordinates=xy.mtx",
                                     "--set", "problem.rhs=stretch.mtx"});
  ASSERT_EQ(solved.status, 0) << solved.err;
  EXPECT_NE(solved.out.find("singular: A maps 3 combinations of the near-nullspace vectors to zero"), std::string::npos)
      << solved.out;
  const json r = read_report(dir.file("R.json"));
  EXPECT_EQ(field(r, "setup.nullspace"), "near_nullspace");
  EXPECT_EQ(field(r, "setup.nullspace_vectors"), 3);
  EXPECT_TRUE(field(r, "solve.converged").get<bool>());
  const std::set<std::string> inputs = {"cfg.yaml", "A.mtx", "xy.mtx", "stretch.mtx", "pull.mtx", "R.json"};
  EXPECT_TRUE(FailedCleanly(run(dir, {cfg, "--set", "problem.coordinates=xy.mtx", "--set", "problem.rhs=pull.mtx"}),
                            dir, inputs, {"the right-hand side pull.mtx is inconsistent with the singular matrix"}));
  // Declared nullspaces of the wrong kind name the key.
  EXPECT_TRUE(FailedCleanly(run(dir, {cfg, "--set", "problem.coordinates=xy.mtx", "--set", "amg.nullspace=constant"}),
                            dir, inputs, {"amg.nullspace constant is a scalar problem's"}));
  EXPECT_TRUE(FailedCleanly(run(dir, {cfg, "--set", "amg.nullspace=near_nullspace"}), dir, inputs,
                            {"amg.nullspace near_nullspace is a system's"}));
}

// The shipped elasticity config, made small: a system set up with its rigid-body modes, its report saying
// so, the VTK file the displacement's components; inputs that make no body are refused naming their key.
TEST(Cli, TheElasticityCantileverIsASystem) {
  const ScratchDir dir;
  const std::string cfg = std::string(AMGSOLVE_SOURCE_DIR) + "/configs/elasticity.yaml";
  std::vector<std::string> args = {cfg, "--set", "problem.box=[16,4,4]", "--report", dir.file("R.json")};
  for (std::string& flag : vtk_flag(dir, "E.vti")) args.push_back(std::move(flag));
  const RunResult r = run(dir, args);
  ASSERT_EQ(r.status, kExitOk) << r.err;
  EXPECT_NE(r.out.find("system: 3 unknowns per node, 6 near-nullspace vectors"), std::string::npos) << r.out;
  const json report = read_report(dir.file("R.json"));
  EXPECT_EQ(field(report, "problem.type"), "elasticity");
  EXPECT_EQ(field(report, "problem.rows"), 3 * 16 * 5 * 5);
  EXPECT_EQ(field(report, "setup.block_size"), 3);
  EXPECT_EQ(field(report, "setup.near_nullspace_vectors"), 6);
  EXPECT_TRUE(field(report, "solve.converged").get<bool>());
  if (vtk_available()) {
    const std::string vti = read_text(dir.file("E.vti"));
    for (const char* name : {"displacement_x", "displacement_y", "displacement_z", "displacement_magnitude", "aggregate"})
      EXPECT_NE(vti.find(name), std::string::npos) << name;
  }
  // Plane strain, the block size given as the dimension: the same kind of run.
  const RunResult plane = run(dir, {cfg, "--quiet", "--set", "problem.box=[16,4]", "--set", "amg.block_size=2",
                                    "--report", dir.file("P.json")});
  ASSERT_EQ(plane.status, kExitOk) << plane.err;
  const json plane_report = read_report(dir.file("P.json"));
  EXPECT_EQ(field(plane_report, "setup.block_size"), 2);
  EXPECT_EQ(field(plane_report, "setup.near_nullspace_vectors"), 3);
  // A slender beam, still clamped: no nullspace is looked for (its rotations, which bend it so easily, were
  // refused as "a structure free to move"). A few iterations, for the setup is what is tested.
  const RunResult slender = run(dir, {cfg, "--quiet", "--set", "problem.box=[3000,1]", "--set",
                                      "solver.max_iterations=5", "--report", dir.file("S.json")});
  EXPECT_EQ(slender.status, kExitNotConverged) << slender.err;
  EXPECT_EQ(field(read_report(dir.file("S.json")), "setup.near_nullspace_vectors"), 3);
  std::set<std::string> none = {"R.json", "P.json", "S.json"};  // the good runs' outputs, untouched by the refused ones
  if (vtk_available()) none.insert("E.vti");
  EXPECT_TRUE(FailedCleanly(run(dir, {cfg, "--set", "problem.box=[16]"}), dir, none, {"problem.box"}));
  EXPECT_TRUE(FailedCleanly(run(dir, {cfg, "--set", "problem.poisson_ratio=0.5"}), dir, none, {"problem.poisson_ratio"}));
  EXPECT_TRUE(FailedCleanly(run(dir, {cfg, "--set", "amg.block_size=2"}), dir, none,
                            {"amg.block_size is 2, but an elasticity problem in 3D has 3 unknowns per node"}));
  EXPECT_TRUE(FailedCleanly(run(dir, {cfg, "--set", "problem.size=[4,4,4]"}), dir, none, {"problem.size"}));
}

TEST(Cli, SystemInputsThatDoNotFit) {
  const ScratchDir dir;
  write_elasticity(dir, 8, 4);
  write_elasticity(dir, 8, 4, 4);  // xy.mtx with 4 columns
  write_text(dir, "B.mtx", array_vector(std::vector<double>(72, 1.0)));  // 72 rows of vectors for 80
  const std::set<std::string> inputs = {"cfg.yaml", "A.mtx", "xy.mtx", "B.mtx"};
  const std::string cfg = matrix_config(dir);
  EXPECT_TRUE(FailedCleanly(run(dir, {cfg, "--set", "problem.coordinates=xy.mtx"}), dir, inputs,
                            {"problem.coordinates", "xy.mtx", "has 4 columns"}));
  write_elasticity(dir, 8, 4, 3);
  EXPECT_TRUE(FailedCleanly(run(dir, {cfg, "--set", "problem.coordinates=xy.mtx"}), dir, inputs,
                            {"problem.coordinates", "xy.mtx has 40 nodes of 3 unknowns, but the matrix has 80 rows"}));
  EXPECT_TRUE(FailedCleanly(run(dir, {cfg, "--set", "problem.coordinates=xy.mtx", "--set", "amg.block_size=2"}), dir,
                            inputs, {"problem.coordinates: xy.mtx: rigid-body modes in 3 dimensions are for nodes of 3 unknowns "
                                     "(displacements) or 6 (and rotations), not 2"}));
  EXPECT_TRUE(FailedCleanly(run(dir, {cfg, "--set", "problem.coordinates=xy.mtx", "--set",
                                      "problem.near_nullspace=xy.mtx"}),
                            dir, inputs, {"problem.near_nullspace and problem.coordinates: give one of them"}));
  EXPECT_TRUE(FailedCleanly(run(dir, {cfg, "--set", "problem.near_nullspace=B.mtx"}), dir, inputs,
                            {"problem.near_nullspace", "B.mtx", "has 72 rows, the matrix 80"}));
  EXPECT_TRUE(FailedCleanly(run(dir, {cfg, "--set", "amg.block_size=3"}), dir, inputs,
                            {"amg.block_size is 3, but the matrix has 80 rows"}));
  EXPECT_TRUE(FailedCleanly(run(dir, {kSmallConfig, "--set", "problem.coordinates=xy.mtx"}), dir, inputs,
                            {"problem.coordinates"}));
  write_text(dir, "B.mtx", dense_array(std::vector<double>(80 * 65, 1.0), 65));
  EXPECT_TRUE(FailedCleanly(run(dir, {cfg, "--set", "problem.near_nullspace=B.mtx"}), dir, inputs,
                            {"problem.near_nullspace", "B.mtx", "has 65 columns; 1 to 64 vectors are needed"}));
  write_text(dir, "xy.mtx", "%%MatrixMarket matrix array real general\n0 2\n");
  EXPECT_TRUE(FailedCleanly(run(dir, {cfg, "--set", "problem.coordinates=xy.mtx"}), dir, inputs,
                            {"problem.coordinates", "xy.mtx"}));
  // The 40 nodes all at one point: no rotation to carry, said of the file (it was "the near-nullspace's
  // vector 3 is zero on every row", naming neither).
  write_text(dir, "xy.mtx", dense_array(std::vector<double>(40 * 2, 1.0), 2));
  EXPECT_TRUE(FailedCleanly(run(dir, {cfg, "--set", "problem.coordinates=xy.mtx"}), dir, inputs,
                            {"problem.coordinates: xy.mtx: the points all lie at one place"}));
}

TEST(Cli, MatrixNotSquare) {
  ScratchDir dir;
  const RunResult r = run_matrix(dir,
                                 "%%MatrixMarket matrix coordinate real general\n"
                                 "2 3 2\n"
                                 "1 1 4\n"
                                 "2 2 4\n");
  EXPECT_TRUE(FailedCleanly(r, dir, kMatrixInputs, {dir.file("A.mtx"), "not square"}));
}

TEST(Cli, MatrixNotSymmetric) {
  ScratchDir dir;
  const RunResult r = run_matrix(dir,
                                 "%%MatrixMarket matrix coordinate real general\n"
                                 "2 2 4\n"
                                 "1 1 4\n"
                                 "1 2 1\n"
                                 "2 1 2\n"
                                 "2 2 4\n");
  EXPECT_TRUE(FailedCleanly(r, dir, kMatrixInputs, {dir.file("A.mtx"), "not symmetric"}));
}

TEST(Cli, MatrixZeroDiagonal) {
  ScratchDir dir;
  const RunResult r = run_matrix(dir,
                                 "%%MatrixMarket matrix coordinate real symmetric\n"
                                 "2 2 3\n"
                                 "1 1 4\n"
                                 "2 1 -1\n"
                                 "2 2 0\n");
  EXPECT_TRUE(FailedCleanly(r, dir, kMatrixInputs, {dir.file("A.mtx"), "diagonal entry 2", "zero"}));
}

TEST(Cli, MatrixMissingDiagonal) {
  ScratchDir dir;
  const RunResult r = run_matrix(dir,
                                 "%%MatrixMarket matrix coordinate real symmetric\n"
                                 "2 2 2\n"
                                 "1 1 4\n"
                                 "2 1 -1\n");
  EXPECT_TRUE(FailedCleanly(r, dir, kMatrixInputs, {dir.file("A.mtx"), "diagonal entry 2"}));
}

TEST(Cli, MatrixNegativeDiagonal) {
  ScratchDir dir;
  const RunResult r = run_matrix(dir,
                                 "%%MatrixMarket matrix coordinate real symmetric\n"
                                 "2 2 2\n"
                                 "1 1 4\n"
                                 "2 2 -1\n");
  EXPECT_TRUE(FailedCleanly(r, dir, kMatrixInputs, {dir.file("A.mtx"), "diagonal entry 2", "negative"}));
}

TEST(Cli, MatrixTooFewEntries) {
  ScratchDir dir;
  const RunResult r = run_matrix(dir,
                                 "%%MatrixMarket matrix coordinate real symmetric\n"
                                 "2 2 3\n"
                                 "1 1 4\n"
                                 "2 2 4\n");
  EXPECT_TRUE(FailedCleanly(r, dir, kMatrixInputs, {dir.file("A.mtx") + ":", "2 of 3 entries"}));
}

TEST(Cli, MatrixNaNValue) {
  ScratchDir dir;
  const RunResult r = run_matrix(dir,
                                 "%%MatrixMarket matrix coordinate real symmetric\n"  // 1
                                 "2 2 2\n"                                            // 2
                                 "1 1 4\n"                                            // 3
                                 "2 2 nan\n");                                        // 4
  EXPECT_TRUE(FailedCleanly(r, dir, kMatrixInputs, {dir.file("A.mtx") + ":4:", "not finite"}));
}

TEST(Cli, MatrixIndefinite) {
  ScratchDir dir;  // [[1, 2], [2, 1]]: symmetric, positive diagonal, eigenvalues 3 and -1
  const RunResult r = run_matrix(dir,
                                 "%%MatrixMarket matrix coordinate real symmetric\n"
                                 "2 2 3\n"
                                 "1 1 1\n"
                                 "2 1 2\n"
                                 "2 2 1\n");
  EXPECT_TRUE(
      FailedCleanly(r, dir, kMatrixInputs, {"problem.matrix " + dir.file("A.mtx") + ": ", "not positive definite"}));
}

// An entry the float cycle of solver.precision: mixed cannot hold is the file's fault: the message names it.
TEST(Cli, MatrixBeyondFloatsRangeForMixedPrecisionNamesTheFile) {
  ScratchDir dir;
  const RunResult r = run_matrix(dir,
                                 "%%MatrixMarket matrix coordinate real symmetric\n"
                                 "3 3 4\n"
                                 "1 1 1e30\n"
                                 "2 2 1\n"
                                 "3 3 1e-30\n"
                                 "2 1 1e-20\n",
                                 {"--set", "solver.precision=mixed"});
  EXPECT_TRUE(FailedCleanly(r, dir, kMatrixInputs,
                            {"problem.matrix " + dir.file("A.mtx") + ": entry (3, 3)", "solver.precision: double"}));
}

// A diagonal spanning more than double holds is the file's fault too, said as such (it was called "not SPD").
TEST(Cli, MatrixWhoseDiagonalSpansBeyondDoubleNamesTheFile) {
  ScratchDir dir;
  const RunResult r = run_matrix(dir,
                                 "%%MatrixMarket matrix coordinate real symmetric\n"
                                 "2 2 2\n"
                                 "1 1 1e-200\n"
                                 "2 2 1e200\n");
  EXPECT_TRUE(FailedCleanly(r, dir, kMatrixInputs,
                            {"problem.matrix " + dir.file("A.mtx") + ": A's diagonal entry in row 1, 1e-200",
                             "spans more than double holds"}));
}

// Indefinite with a positive diagonal, large enough for a multilevel hierarchy: tridiag(-1, 1.5, -1) has
// eigenvalues 1.5 - 2 cos(k pi / 51), some negative. Whichever stage notices (coarse factorisation,
// spectral estimate, PCG), the message must say what is wrong with the input, and name its file.
TEST(Cli, MatrixIndefiniteMultilevel) {
  ScratchDir dir;
  const int n = 50;
  std::ostringstream m;
  m << "%%MatrixMarket matrix coordinate real symmetric\n" << n << " " << n << " " << (2 * n - 1) << "\n";
  for (int i = 1; i <= n; ++i) {
    m << i << " " << i << " 1.5\n";
    if (i < n) m << i + 1 << " " << i << " -1\n";
  }
  const RunResult r = run_matrix(dir, m.str(), {"--set", "amg.coarse_size=10"});
  EXPECT_TRUE(
      FailedCleanly(r, dir, kMatrixInputs, {"problem.matrix " + dir.file("A.mtx") + ": ", "not positive definite"}));
}

// Indefinite where only PCG notices (p^T A p < 0 at iteration 4; the setup's checks pass: a positive
// diagonal, positive coarse pivots): its message names the file too.
TEST(Cli, MatrixIndefiniteFoundByPcgNamesTheFile) {
  ScratchDir dir;
  const int n = 400;  // tridiagonal: 2 on the diagonal, +-1.05 beside it, the signs alternating
  std::ostringstream m;
  m << "%%MatrixMarket matrix coordinate real symmetric\n" << n << " " << n << " " << (2 * n - 1) << "\n";
  for (int i = 1; i <= n; ++i) {
    m << i << " " << i << " 2\n";
    if (i < n) m << i + 1 << " " << i << (i % 2 ? " 1.05\n" : " -1.05\n");
  }
  const RunResult r = run_matrix(dir, m.str(), {"--set", "amg.coarse_size=10"});
  EXPECT_TRUE(FailedCleanly(r, dir, kMatrixInputs,
                            {"problem.matrix " + dir.file("A.mtx") + ": PCG breakdown", "not positive definite"}));
}

TEST(Cli, RhsFileOfWrongLength) {
  ScratchDir dir;
  write_text(dir, "b.mtx", "%%MatrixMarket matrix array real general\n3 1\n1\n1\n1\n");
  write_text(dir, "A.mtx", laplacian_1d(4));
  const std::string cfg = write_text(
      dir, "cfg.yaml",
      "problem:\n  type: matrix_market\n  matrix: " + dir.file("A.mtx") + "\n  rhs: " + dir.file("b.mtx") + "\n");
  const RunResult r = run(dir, {cfg, "--report", dir.file("R.json")});
  EXPECT_TRUE(FailedCleanly(r, dir, {"cfg.yaml", "A.mtx", "b.mtx"}, {dir.file("b.mtx"), "3"}));
  // A header announcing 2^31 - 1 entries is refused from the header, at once (it was read into 16 GiB).
  write_text(dir, "b.mtx", "%%MatrixMarket matrix array real general\n2147483647 1\n1\n");
  const RunResult huge = run(dir, {cfg, "--report", dir.file("R.json")});
  EXPECT_TRUE(FailedCleanly(huge, dir, {"cfg.yaml", "A.mtx", "b.mtx"}, {dir.file("b.mtx"), "2147483647 rows"}));
}

// Several right-hand sides (load cases): a column of no value, no columns, and a singular matrix's column
// that does not sum to zero are refused before the setup, naming the file (and the column).
TEST(Cli, LoadCasesThatDoNotFit) {
  ScratchDir dir;
  write_text(dir, "A.mtx", laplacian_1d(4));
  const std::string cfg = write_text(
      dir, "cfg.yaml",
      "problem:\n  type: matrix_market\n  matrix: " + dir.file("A.mtx") + "\n  rhs: " + dir.file("b.mtx") + "\n");
  const std::set<std::string> inputs = {"cfg.yaml", "A.mtx", "b.mtx"};
  write_text(dir, "b.mtx", "%%MatrixMarket matrix array real general\n4 2\n1\n1\n1\n1\n1\nnan\n1\n1\n");
  EXPECT_TRUE(FailedCleanly(run(dir, {cfg}), dir, inputs, {dir.file("b.mtx"), "not finite"}));
  write_text(dir, "b.mtx", "%%MatrixMarket matrix array real general\n4 0\n");
  EXPECT_TRUE(FailedCleanly(run(dir, {cfg}), dir, inputs, {dir.file("b.mtx"), "0 columns"}));
  // A path graph's Laplacian (rows summing to zero): singular, each b must sum to zero; the second does not.
  write_text(dir, "A.mtx", "%%MatrixMarket matrix coordinate real symmetric\n4 4 7\n1 1 1\n2 2 2\n3 3 2\n4 4 1\n"
                           "2 1 -1\n3 2 -1\n4 3 -1\n");
  write_text(dir, "b.mtx", "%%MatrixMarket matrix array real general\n4 2\n1\n-1\n1\n-1\n1\n1\n1\n-1\n");
  EXPECT_TRUE(FailedCleanly(run(dir, {cfg}), dir, inputs, {dir.file("b.mtx") + ", column 2, is inconsistent"}));
  // Initial guesses (problem.x0): one per right-hand side, a column each.
  write_text(dir, "b.mtx", "%%MatrixMarket matrix array real general\n4 2\n1\n1\n1\n1\n2\n2\n2\n2\n");
  write_text(dir, "x0.mtx", "%%MatrixMarket matrix array real general\n4 1\n0\n0\n0\n0\n");
  const std::set<std::string> with_x0 = {"cfg.yaml", "A.mtx", "b.mtx", "x0.mtx"};
  EXPECT_TRUE(FailedCleanly(run(dir, {cfg, "--set", "problem.x0=" + dir.file("x0.mtx")}), dir, with_x0,
                            {dir.file("x0.mtx"), "initial guess has 1 column(s)", "2"}));
  write_text(dir, "x0.mtx", "%%MatrixMarket matrix array real general\n1 4\n0\n0\n0\n0\n");
  EXPECT_TRUE(FailedCleanly(run(dir, {cfg, "--set", "problem.x0=" + dir.file("x0.mtx")}), dir, with_x0,
                            {dir.file("x0.mtx"), "initial guess is 1 x 4, a row"}));
}

// ================================================================ good input

// ---------------------------------------------------------------- mouse

// A coarse mouse config (1 mm voxels, 2 sources) with `extra` YAML lines appended under problem:.
std::string mouse_config(const ScratchDir& dir, const std::string& extra = "") {
  return write_text(dir, "cfg.yaml",
                    "problem:\n"               // 1
                    "  type: mouse\n"          // 2
                    "  voxel_size: 1.0\n"      // 3
                    "  sources:\n"             // 4
                    "    scan_grid: [2, 1]\n"  // 5
                    + extra);
}

TEST(Cli, MouseUnknownTissue) {
  ScratchDir dir;
  const std::string cfg = mouse_config(dir, "  tissues:\n    livre:\n      mua: [0.1, 0.1]\n");  // line 7
  const RunResult r = run(dir, with_outputs(dir, {cfg}));
  EXPECT_TRUE(FailedCleanly(r, dir, {"cfg.yaml"}, {cfg + ":7:", "problem.tissues.livre", "problem.tissues.liver"}));
}

TEST(Cli, MouseZeroOpticalProperty) {
  ScratchDir dir;
  const std::string cfg = mouse_config(dir, "  tissues:\n    liver:\n      musp: [0.5, 0]\n");  // line 8
  const RunResult r = run(dir, with_outputs(dir, {cfg}));
  EXPECT_TRUE(FailedCleanly(r, dir, {"cfg.yaml"}, {cfg + ":8:", "problem.tissues.liver.musp", "> 0"}));
}

TEST(Cli, MouseSourceOutsideTheAnimal) {
  ScratchDir dir;
  const std::string cfg = mouse_config(dir, "    spots: [[0, 0], [5, 30]]\n");
  const RunResult r = run(dir, with_outputs(dir, {cfg}));
  EXPECT_TRUE(FailedCleanly(r, dir, {"cfg.yaml"}, {"spot 2", "[5, 30]", "misses the animal"}));
}

// Voxels coarser than 2 mm resolve too little of the animal: the key's bound says so (docs/CONFIG.md).
TEST(Cli, MouseVoxelSizeGivesAnEmptyAnimal) {
  ScratchDir dir;
  const std::string cfg = mouse_config(dir);
  const RunResult r = run(dir, with_outputs(dir, {cfg, "--set", "problem.voxel_size=6"}));
  EXPECT_TRUE(FailedCleanly(r, dir, {"cfg.yaml"}, {"problem.voxel_size", "<= 2"}));
}

TEST(Cli, MouseVoxelSizeGivesAnEnormousAnimal) {
  ScratchDir dir;
  const std::string cfg = mouse_config(dir);
  const RunResult r = run(dir, with_outputs(dir, {cfg, "--set", "problem.voxel_size=0.002"}));
  EXPECT_TRUE(FailedCleanly(r, dir, {"cfg.yaml"}, {"problem.voxel_size"}));
}

// The VTK file of many sources is written after every solve: under a memory limit it cannot meet, refused
// before the setup, naming what writes fewer (it ran out of memory after all 512 solves, losing every output).
TEST(Cli, MouseVtkFileBeyondTheMemoryIsRefusedBeforeTheSolves) {
  if (!vtk_available()) GTEST_SKIP() << "built without VTK";
  ScratchDir dir;
  const std::string cfg = mouse_config(dir, "  fluorescence: true\n  fluorophore:\n    background: 0.001\n");
  const std::string limited = "prlimit --as=" + std::to_string(800ull << 20) + " ";
  if (!starts_under(dir, limited))
    GTEST_SKIP() << "the program cannot start under an 800 MiB address-space limit (a sanitizer's build)";
  const RunResult r = run(dir, with_outputs(dir, {cfg, "--threads", "1", "--set", "problem.voxel_size=1.12", "--set",
                                                  "problem.sources.scan_grid=[32,16]"}),
                          "", limited);
  EXPECT_TRUE(FailedCleanly(r, dir, {"cfg.yaml"}, {"VTK file", "512 source(s); output.vtk_sources writes fewer"}));
  EXPECT_EQ(r.out.find("AMG setup"), std::string::npos) << "refused before the setup";
}

TEST(Cli, MouseSolvesEverySourceAndWritesTheAnimal) {
  ScratchDir dir;
  const std::string cfg = mouse_config(dir,
                                       "  tumour: {centre: [8, -4, 5], radius: 2.5}\n"
                                       "  fluorescence: true\n"
                                       "  detectors: [[8, -4], [0, 0]]\n");
  std::vector<std::string> args = {cfg, "--report", dir.file("R.json")};
  for (std::string& flag : vtk_flag(dir, "m.vti")) args.push_back(std::move(flag));
  if (vtk_available())
    for (const std::string& set : {"output.skin=" + dir.file("skin.vtp"), "output.camera=" + dir.file("camera.vti")})
      args.insert(args.end(), {"--set", set});
  const RunResult r = run(dir, args);
  ASSERT_EQ(r.status, kExitOk) << r.err << r.out;
  const json j = read_report(dir.file("R.json"));
  EXPECT_EQ(field(j, "problem.type"), "mouse");
  const json sources = field(j, "sources");
  ASSERT_EQ(sources.size(), 2u);
  for (const json& s : sources) {
    EXPECT_TRUE(s["excitation"]["converged"].get<bool>());
    EXPECT_TRUE(s["emission"]["converged"].get<bool>());
    EXPECT_GT(s["excitation"]["iterations"].get<int>(), 0);
    // Power balance of the discrete solution: absorbed + outflow = 1 (the source power).
    EXPECT_NEAR(s["absorbed_power"].get<double>() + s["boundary_outflow"].get<double>(), 1.0, 1e-6);
  }
  // The emission wavelength has its own hierarchy; the histogram counts every row once, none above 7.
  EXPECT_TRUE(j.contains("emission_setup"));
  const json histogram = field(j, "problem.row_length_histogram");
  long long rows = 0;
  for (const json& c : histogram) rows += c.get<long long>();
  EXPECT_EQ(rows, field(j, "problem.rows").get<long long>());
  EXPECT_LE(histogram.size(), 8u);
  EXPECT_EQ(std::filesystem::exists(dir.file("m.vti")), vtk_available());
  EXPECT_EQ(std::filesystem::exists(dir.file("skin.vtp")), vtk_available());
  EXPECT_EQ(std::filesystem::exists(dir.file("camera.vti")), vtk_available());
  // The model as built: the exact Robin factor for n = 1.37, the skin's true area below its staircase's,
  // the tissue table.
  EXPECT_NEAR(field(j, "problem.mouse.robin_factor").get<double>(), 2.7586, 1e-4);
  // What the light was: the wavelengths, the source power and the fluorophore's yields.
  EXPECT_EQ(field(j, "problem.mouse.wavelengths_nm"), json::array({750, 800}));
  EXPECT_EQ(field(j, "problem.mouse.source_power").get<double>(), 1.0);
  EXPECT_TRUE(field(j, "problem.mouse.fluorescence").get<bool>());
  EXPECT_EQ(field(j, "problem.mouse.fluorophore.tumour").get<double>(), 0.01);
  EXPECT_EQ(field(j, "problem.mouse.fluorophore.background").get<double>(), 0.0);
  EXPECT_LT(field(j, "problem.mouse.skin_area_mm2").get<double>(), field(j, "problem.mouse.staircase_area_mm2").get<double>());
  EXPECT_GE(field(j, "problem.mouse.tissues").size(), 8u);
  // What the camera reads at the detectors: positive exitances and the normalised Born ratio; above the
  // tumour (the first detector) the ratio is the larger.
  for (const json& s : sources) {
    const json d = s["detectors"];
    ASSERT_EQ(d.size(), 2u);
    for (const json& reading : d) {
      EXPECT_GT(reading["excitation_exitance"].get<double>(), 0.0);
      EXPECT_DOUBLE_EQ(reading["born_ratio"].get<double>(),
                       reading["emission_exitance"].get<double>() / reading["excitation_exitance"].get<double>());
    }
    EXPECT_GT(d[0]["born_ratio"].get<double>(), d[1]["born_ratio"].get<double>());
  }
}

TEST(Cli, MouseDetectorOffTheAnimal) {
  ScratchDir dir;
  const std::string cfg = mouse_config(dir, "  detectors: [[0, 0], [0, 40]]\n");
  const RunResult r = run(dir, with_outputs(dir, {cfg}));
  EXPECT_TRUE(FailedCleanly(r, dir, {"cfg.yaml"}, {"problem.detectors", "point 2", "misses the animal"}));
}

TEST(Cli, SkinOutputNeedsAMouse) {
  ScratchDir dir;
  const std::string cfg = write_text(dir, "cfg.yaml", "problem:\n  type: poisson\n  size: [8, 8, 8]\n");
  const RunResult r = run(dir, with_outputs(dir, {cfg, "--set", "output.skin=" + dir.file("s.vtp")}));
  EXPECT_TRUE(FailedCleanly(r, dir, {"cfg.yaml"}, {"output.skin"}));
}

TEST(Cli, ListBackends) {
  ScratchDir dir;
  const RunResult r = run(dir, {"--list-backends"});
  EXPECT_EQ(r.status, kExitOk) << r.err;
  EXPECT_NE(r.out.find("gustavson"), std::string::npos) << r.out;
}

TEST(Cli, ConfigReferenceIsPrinted) {
  ScratchDir dir;
  const RunResult r = run(dir, {"--config-reference"});
  EXPECT_EQ(r.status, kExitOk) << r.err;
  EXPECT_EQ(r.out.rfind("# Configuration reference", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("`amg.spgemm`"), std::string::npos);
}

// The listings run nothing: a config, a --set, an output or the comparison given with them, or both
// listings together, are refused in one line rather than ignored (a --set with a key that does not exist
// went unnoticed).
TEST(Cli, TheListingsRefuseWhatARunTakes) {
  ScratchDir dir;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{kSmallConfig, "--list-backends"}, {"--list-backends", "--config-reference"},
        {"--config-reference", "--set", "no.such.key=1"}, {"--list-backends", "--compare-spgemm"},
        {"--config-reference", "--report", dir.file("R.json")}}) {
    const RunResult r = run(dir, args);
    EXPECT_EQ(r.status, kExitError) << args.front() << " " << args.back();
    EXPECT_NE(r.err.find("excludes"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

TEST(Cli, SmallPoissonWritesReportAndVtk) {
  ScratchDir dir;
  const std::string report_path = dir.file("R.json"), vtk_path = dir.file("V.vti");
  std::vector<std::string> args = {kSmallConfig, "--report", report_path, "--quiet"};
  for (std::string& flag : vtk_flag(dir, "V.vti")) args.push_back(std::move(flag));
  const RunResult r = run(dir, args);
  ASSERT_EQ(r.status, kExitOk) << r.err;
  EXPECT_EQ(r.out, "") << "--quiet must print nothing on stdout";
  EXPECT_EQ(r.err, "");
  const std::set<std::string> written =
      vtk_available() ? std::set<std::string>{"R.json", "V.vti"} : std::set<std::string>{"R.json"};
  EXPECT_EQ(files_in(dir), written);  // no temporary files left

  const json report = read_report(report_path);
  // poisson-small: 7-point stencil on 32^3 interior points.
  const std::int64_t n = 32;
  const std::int64_t rows = n * n * n, nnz = 7 * n * n * n - 6 * n * n;
  EXPECT_EQ(field(report, "problem.rows").get<std::int64_t>(), rows);
  EXPECT_EQ(field(report, "problem.nnz").get<std::int64_t>(), nnz);
  EXPECT_GE(field(report, "setup.seconds").get<double>(), 0.0);
  EXPECT_EQ(field(report, "setup.spgemm_backend").get<std::string>(), "gustavson");

  const json levels = field(report, "setup.levels");
  ASSERT_TRUE(levels.is_array());
  ASSERT_GE(levels.size(), 2u);  // 32768 rows with coarse_size 200 must coarsen
  double nnz_sum = 0, rows_sum = 0;
  for (std::size_t l = 0; l < levels.size(); ++l) {
    SCOPED_TRACE("level " + std::to_string(l));
    ASSERT_TRUE(levels[l].contains("rows"));
    ASSERT_TRUE(levels[l].contains("nnz"));
    ASSERT_TRUE(levels[l].contains("spgemm_seconds"));
    EXPECT_GE(levels[l].at("spgemm_seconds").get<double>(), 0.0);
    if (l > 0) {
      EXPECT_LT(levels[l].at("rows").get<std::int64_t>(), levels[l - 1].at("rows").get<std::int64_t>());
    }
    rows_sum += levels[l].at("rows").get<double>();
    nnz_sum += levels[l].at("nnz").get<double>();
  }
  EXPECT_EQ(levels[0].at("rows").get<std::int64_t>(), rows);
  EXPECT_EQ(levels[0].at("nnz").get<std::int64_t>(), nnz);
  EXPECT_LE(levels.back().at("rows").get<std::int64_t>(), 200);
  const double operator_complexity = field(report, "setup.operator_complexity").get<double>();
  const double grid_complexity = field(report, "setup.grid_complexity").get<double>();
  EXPECT_NEAR(operator_complexity, nnz_sum / static_cast<double>(nnz), 1e-12 * operator_complexity);
  EXPECT_NEAR(grid_complexity, rows_sum / static_cast<double>(rows), 1e-12 * grid_complexity);
  EXPECT_GT(operator_complexity, 1.0);
  EXPECT_GT(grid_complexity, 1.0);

  const int iterations = field(report, "solve.iterations").get<int>();
  const double relres = field(report, "solve.relative_residual").get<double>();
  EXPECT_GT(iterations, 0);
  EXPECT_LE(iterations, 200);
  EXPECT_LE(relres, 1e-8);
  EXPECT_TRUE(field(report, "solve.converged").get<bool>());
  EXPECT_GE(field(report, "solve.seconds").get<double>(), 0.0);
  const json history = field(report, "solve.history");
  ASSERT_TRUE(history.is_array());
  ASSERT_EQ(history.size(), static_cast<std::size_t>(iterations) + 1);
  EXPECT_DOUBLE_EQ(history.front().get<double>(), 1.0);  // x starts at zero
  EXPECT_EQ(history.back().get<double>(), relres);
  // The manufactured right-hand side gives the error against the known solution (discretisation-free:
  // it is the algebraic error, so it is small).
  EXPECT_LT(field(report, "solve.relative_error").get<double>(), 1e-6);

  if (!vtk_available()) return;
  const std::string vtk = read_text(vtk_path);
  EXPECT_NE(vtk.find("<VTKFile type=\"ImageData\""), std::string::npos) << vtk.substr(0, 200);
  EXPECT_NE(vtk.find("WholeExtent=\"0 31 0 31 0 31\""), std::string::npos) << vtk.substr(0, 400);
}

TEST(Cli, ProgressOutputWithoutQuiet) {
  ScratchDir dir;
  const RunResult r = run(dir, {kSmallConfig, "--set", "solver.print_every=0"});
  ASSERT_EQ(r.status, kExitOk) << r.err;
  EXPECT_NE(r.out.find("converged"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("iteration "), std::string::npos) << "print_every=0 prints only the summary";
  EXPECT_EQ(r.err, "");
  EXPECT_TRUE(files_in(dir).empty());
}

TEST(Cli, ThreadCountDoesNotChangeTheResult) {
  ScratchDir dir;
  const RunResult one = run(dir, {kSmallConfig, "--threads", "1", "--quiet", "--report", dir.file("R1.json")});
  const RunResult two = run(dir, {kSmallConfig, "--threads", "2", "--quiet", "--report", dir.file("R2.json")});
  ASSERT_EQ(one.status, kExitOk) << one.err;
  ASSERT_EQ(two.status, kExitOk) << two.err;
  const json a = read_report(dir.file("R1.json"));
  const json b = read_report(dir.file("R2.json"));
  EXPECT_EQ(field(a, "threads").get<int>(), 1);
  EXPECT_EQ(field(b, "threads").get<int>(), 2);
  // Deterministic reductions and a seed-only hierarchy: bit-identical results.
  EXPECT_EQ(field(a, "solve.iterations").get<int>(), field(b, "solve.iterations").get<int>());
  EXPECT_EQ(field(a, "solve.relative_residual").get<double>(), field(b, "solve.relative_residual").get<double>());
  EXPECT_EQ(field(a, "solve.history").get<std::vector<double>>(), field(b, "solve.history").get<std::vector<double>>());
  const json la = field(a, "setup.levels"), lb = field(b, "setup.levels");
  ASSERT_EQ(la.size(), lb.size());
  for (std::size_t l = 0; l < la.size(); ++l) {
    EXPECT_EQ(la[l].at("rows").get<std::int64_t>(), lb[l].at("rows").get<std::int64_t>()) << "level " << l;
    EXPECT_EQ(la[l].at("nnz").get<std::int64_t>(), lb[l].at("nnz").get<std::int64_t>()) << "level " << l;
  }
}

TEST(Cli, MixedPrecisionReachesTheSameToleranceWithinOneIteration) {
  ScratchDir dir;
  const RunResult d = run(dir, {kSmallConfig, "--quiet", "--report", dir.file("D.json")});
  const RunResult m = run(dir, {kSmallConfig, "--quiet", "--report", dir.file("M.json"), "--set",
                                "solver.precision=mixed"});
  ASSERT_EQ(d.status, kExitOk) << d.err;
  ASSERT_EQ(m.status, kExitOk) << m.err;
  const json a = read_report(dir.file("D.json"));
  const json b = read_report(dir.file("M.json"));
  EXPECT_EQ(field(a, "solve.precision").get<std::string>(), "double");
  EXPECT_EQ(field(b, "solve.precision").get<std::string>(), "mixed");
  EXPECT_LE(field(b, "solve.relative_residual").get<double>(), 1e-8);
  EXPECT_LE(std::abs(field(a, "solve.iterations").get<int>() - field(b, "solve.iterations").get<int>()), 1);
  // The exact solution is known: the float V-cycle must not limit the final accuracy.
  EXPECT_LT(field(b, "solve.relative_error").get<double>(), 1e-6);
  EXPECT_LT(field(b, "setup.hierarchy_bytes").get<double>(), field(a, "setup.hierarchy_bytes").get<double>());
}

TEST(Cli, CompareSpgemmChecksEveryBackendOnEveryProduct) {
  ScratchDir dir;
  const RunResult r = run(dir, {kSmallConfig, "--quiet", "--compare-spgemm", "--report", dir.file("R.json"), "--set",
                                "output.spgemm_csv=" + dir.file("C.csv"), "--set", "amg.compare_runs=4"});
  ASSERT_EQ(r.status, kExitOk) << r.err;
  const json report = read_report(dir.file("R.json"));
  const json rows = field(report, "spgemm_comparison");
  const std::size_t levels = field(report, "setup.levels").size();
  ASSERT_GE(levels, 2u);
  std::set<std::string> backends, products;
  for (const json& row : rows) {
    backends.insert(row.at("backend").get<std::string>());
    products.insert(row.at("product").get<std::string>());
    EXPECT_TRUE(row.at("agrees").get<bool>()) << row.dump();
    for (const char* key : {"level", "seconds", "gflops", "nnz"}) EXPECT_TRUE(row.contains(key)) << key;
    // amg.compare_runs timed runs after the warm-up; the reported time is their median.
    EXPECT_EQ(row.at("runs").get<int>(), 4) << row.dump();
    EXPECT_LE(row.at("min_seconds").get<double>(), row.at("seconds").get<double>()) << row.dump();
    EXPECT_LE(row.at("seconds").get<double>(), row.at("max_seconds").get<double>()) << row.dump();
  }
  EXPECT_EQ(products, (std::set<std::string>{"prolongator", "ap", "rap"}));
  EXPECT_TRUE(backends.count("gustavson") && backends.count("hash"));
  // Every non-coarsest level, every product, every backend.
  EXPECT_EQ(rows.size(), (levels - 1) * 3 * backends.size());
  std::ifstream csv(dir.file("C.csv"));
  std::string header;
  std::getline(csv, header);
  EXPECT_EQ(header, "level,product,backend,seconds,symbolic_seconds,numeric_seconds,gflops,nnz,compression_factor,"
                    "extra_bytes,agrees,max_relative_difference,external_baseline,choice,error,runs,min_seconds,"
                    "max_seconds");
  std::size_t lines = 0;
  for (std::string line; std::getline(csv, line);) ++lines;
  EXPECT_EQ(lines, rows.size());
}

// The comparison runs beside the setup: the hierarchy, and so the solve, are those of the configured
// backend (here auto, which records its choice per product), exactly as without the comparison. The rows
// mark the external baselines and carry auto's choice.
TEST(Cli, CompareSpgemmKeepsTheConfiguredBackendsHierarchy) {
  ScratchDir dir;
  const RunResult plain = run(dir, {kSmallConfig, "--quiet", "--report", dir.file("P.json"), "--set", "amg.spgemm=auto"});
  const RunResult compared = run(dir, {kSmallConfig, "--quiet", "--compare-spgemm", "--report", dir.file("C.json"),
                                       "--set", "amg.spgemm=auto"});
  ASSERT_EQ(plain.status, kExitOk) << plain.err;
  ASSERT_EQ(compared.status, kExitOk) << compared.err;
  const json p = read_report(dir.file("P.json"));
  const json c = read_report(dir.file("C.json"));
  EXPECT_EQ(field(c, "setup.spgemm_backend").get<std::string>(), "auto");
  const json& levels = field(c, "setup.levels");
  ASSERT_EQ(levels.size(), field(p, "setup.levels").size());
  std::size_t with_products = 0;
  for (std::size_t l = 0; l < levels.size(); ++l) {
    EXPECT_EQ(levels[l].at("nnz"), field(p, "setup.levels")[l].at("nnz")) << l;
    if (levels[l].contains("spgemm")) {
      ++with_products;
      EXPECT_FALSE(levels[l].at("spgemm").at("rap").at("choice").get<std::string>().empty()) << l;
    }
  }
  EXPECT_GE(with_products, 1u);
  EXPECT_EQ(field(c, "solve.iterations"), field(p, "solve.iterations"));
  EXPECT_EQ(field(c, "solve.relative_residual"), field(p, "solve.relative_residual"));  // bitwise: same hierarchy
  for (const json& row : field(c, "spgemm_comparison")) {
    const std::string backend = row.at("backend").get<std::string>();
    const bool library = backend == "eigen" || backend == "graphblas" || backend == "cusparse";
    EXPECT_EQ(row.at("external_baseline").get<bool>(), library) << backend;
    EXPECT_EQ(row.at("choice").get<std::string>().empty(), backend != "auto") << row.dump();
  }
}

TEST(Cli, CompareSpgemmKeyComparesBesideTheDefaultBackendsSetup) {
  ScratchDir dir;
  const RunResult r = run(dir, {kSmallConfig, "--report", dir.file("R.json"), "--set", "amg.compare_spgemm=true"});
  ASSERT_EQ(r.status, kExitOk) << r.err;
  EXPECT_NE(r.out.find("SpGEMM comparison"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(external baseline)"), std::string::npos) << r.out;
  const json report = read_report(dir.file("R.json"));
  EXPECT_EQ(field(report, "setup.spgemm_backend").get<std::string>(), "gustavson");
  const json rows = field(report, "spgemm_comparison");
  ASSERT_FALSE(rows.empty());
  for (const json& row : rows) EXPECT_TRUE(row.at("agrees").get<bool>()) << row.dump();
}

// A one-level hierarchy forms no product: the comparison says so, its CSV holds the header alone and the
// report an empty list (before, the table had no rows, no note, and the CSV was not written).
TEST(Cli, ACompareWithoutProductsSaysSoAndStillWritesItsFiles) {
  ScratchDir dir;
  const RunResult r = run(dir, {kSmallConfig, "--quiet", "--compare-spgemm", "--report", dir.file("R.json"), "--set",
                                "amg.coarse_size=40000", "--set", "problem.size=[16,16,16]", "--set",
                                "output.spgemm_csv=" + dir.file("C.csv")});
  ASSERT_EQ(r.status, kExitOk) << r.err;
  const json report = read_report(dir.file("R.json"));
  EXPECT_TRUE(field(report, "spgemm_comparison").empty());
  std::ifstream csv(dir.file("C.csv"));
  std::string header, row;
  ASSERT_TRUE(std::getline(csv, header)) << "the CSV is written";
  EXPECT_EQ(header.rfind("level,product,backend", 0), 0u) << header;
  EXPECT_FALSE(std::getline(csv, row)) << row;
  const RunResult shown =
      run(dir, {kSmallConfig, "--compare-spgemm", "--set", "amg.coarse_size=40000", "--set", "problem.size=[16,16,16]"});
  EXPECT_NE(shown.out.find("none: the setup formed no product"), std::string::npos) << shown.out;
}

TEST(Cli, CompareIsNotABackendName) {
  ScratchDir dir;
  const RunResult r = run(dir, with_outputs(dir, {kSmallConfig, "--set", "amg.spgemm=compare"}));
  EXPECT_TRUE(FailedCleanly(r, dir, {}, {"--set amg.spgemm", "amg.compare_spgemm: true"}));
}

// `--report /dev/stdout > run.log`: the report goes into the log after the progress lines printed before
// it and before those printed after it; the log is not replaced by the report (it was, losing the lines).
TEST(Cli, AReportToARedirectedStandardOutputKeepsTheProgressLines) {
  ScratchDir dir;
  const RunResult r = run(dir, {kSmallConfig, "--report", "/dev/stdout", "--vtk", ""});
  ASSERT_EQ(r.status, kExitOk) << r.err;
  const std::size_t report_at = r.out.find("{\n  \"amgsolve\":");
  const std::size_t converged_at = r.out.find("converged after"), said_at = r.out.find("report written to /dev/stdout");
  ASSERT_NE(report_at, std::string::npos) << r.out;
  ASSERT_NE(converged_at, std::string::npos) << r.out;
  ASSERT_NE(said_at, std::string::npos) << r.out;
  EXPECT_LT(converged_at, report_at);
  EXPECT_LT(report_at, said_at);
  const json report = json::parse(r.out.substr(report_at, said_at - report_at));
  EXPECT_TRUE(field(report, "solve.converged").get<bool>());
}

// What the run prints must arrive: a standard output that cannot be written is an error, not a success
// (with --quiet nothing is printed there, so nothing is lost).
TEST(Cli, AStandardOutputThatCannotBeWrittenIsAnError) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full on this system";
  ScratchDir dir;
  for (const bool quiet : {false, true}) {
    const std::string err = dir.file("err.txt");
    const std::string command = quote(AMGSOLVE_BINARY) + " " + quote(kSmallConfig) + (quiet ? " --quiet" : "") +
                                " --report '' --vtk '' </dev/null >/dev/full 2>" + quote(err);
    const int raw = std::system(command.c_str());
    ASSERT_TRUE(raw != -1 && WIFEXITED(raw)) << command;
    EXPECT_EQ(WEXITSTATUS(raw), quiet ? kExitOk : kExitError) << command;
    EXPECT_EQ(read_text(err), quiet ? "" : "amgsolve: error: cannot write the standard output (No space left on device)\n")
        << command;
  }
  // The help and the version too, as the listings (they said nothing and exited 0).
  for (const char* option : {"--help", "--version", "--list-backends"}) {
    const std::string err = dir.file("err.txt");
    const std::string command = quote(AMGSOLVE_BINARY) + " " + option + " </dev/null >/dev/full 2>" + quote(err);
    const int raw = std::system(command.c_str());
    ASSERT_TRUE(raw != -1 && WIFEXITED(raw)) << command;
    EXPECT_EQ(WEXITSTATUS(raw), kExitError) << command;
    EXPECT_NE(read_text(err).find("amgsolve: error: cannot write the standard output"), std::string::npos) << command;
  }
}

TEST(Cli, NotConvergedExitsThreeAndStillWritesTheReport) {
  ScratchDir dir;
  const RunResult r = run(dir, {kSmallConfig, "--quiet", "--report", dir.file("R.json"), "--set",
                                "solver.max_iterations=1", "--set", "solver.tolerance=1e-14"});
  EXPECT_EQ(r.status, kExitNotConverged) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(line_count(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("not converged"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(kSmallConfig), std::string::npos) << r.err;
  // Slow, not broken: what to try, for the smoother in use.
  EXPECT_NE(r.err.find("raise solver.max_iterations, try amg.smoother.degree: 3 or 4"), std::string::npos) << r.err;
  const RunResult jacobi = run(dir, {kSmallConfig, "--quiet", "--report", "", "--set", "solver.max_iterations=1",
                                     "--set", "solver.tolerance=1e-14", "--set", "amg.smoother.type=jacobi"});
  EXPECT_EQ(jacobi.status, kExitNotConverged) << jacobi.err;
  EXPECT_NE(jacobi.err.find("try amg.smoother.type: chebyshev"), std::string::npos) << jacobi.err;
  ASSERT_TRUE(std::filesystem::exists(dir.file("R.json")));
  const json report = read_report(dir.file("R.json"));
  EXPECT_FALSE(field(report, "solve.converged").get<bool>());
  EXPECT_EQ(field(report, "solve.iterations").get<int>(), 1);
  EXPECT_EQ(field(report, "solve.history").size(), 2u);
  EXPECT_GT(field(report, "solve.relative_residual").get<double>(), 1e-14);
}

// D L D for the 1D Neumann Laplacian L and D = diag(1 + i / n): singular, its nullspace D^-1 1 is not the
// constants (amg.nullspace: auto keeps `none`), and b = 1 is not in its range. CG cannot converge; the
// one-line error says why it did not, rather than only that.
TEST(Cli, ASingularMatrixWithBOutsideItsRangeIsNamedAsTheLikelyCause) {
  const Index n = 20000;
  char line[96];
  std::snprintf(line, sizeof line, "%%%%MatrixMarket matrix coordinate real symmetric\n%d %d %d\n", n, n, 2 * n - 1);
  std::string mtx = line;
  const auto d = [&](Index i) { return 1.0 + static_cast<double>(i) / n; };
  for (Index i = 0; i < n; ++i) {
    const double links = (i > 0 ? 1 : 0) + (i + 1 < n ? 1 : 0);
    std::snprintf(line, sizeof line, "%d %d %.17g\n", i + 1, i + 1, links * d(i) * d(i));
    mtx += line;
    if (i > 0) {
      std::snprintf(line, sizeof line, "%d %d %.17g\n", i + 1, i, -d(i) * d(i - 1));
      mtx += line;
    }
  }
  ScratchDir dir;
  const RunResult r = run_matrix(dir, mtx, {"--quiet", "--set", "solver.max_iterations=200"});
  EXPECT_EQ(r.status, kExitNotConverged) << r.err;
  EXPECT_EQ(line_count(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("singular"), std::string::npos) << r.err;
  // No iterate came below x = 0's residual (the start returned where the solve stagnated).
  EXPECT_GE(field(read_report(dir.file("R.json")), "solve.relative_residual").get<double>(), 1.0);
}

// A start far from the solution (problem.x0 of 1e150 against b = 1): its residual is 1e150 times b's, which
// the tolerance is relative to, and the iteration limit comes first. Said so, not blamed on a singular A;
// and a start whose residual leaves double's range is refused as the guess's fault.
TEST(Cli, AnUnconvergedSolveThatStartedFarAwaySaysSo) {
  ScratchDir dir;
  write_text(dir, "x0.mtx", array_vector(std::vector<double>(50, 1e150)));
  RunResult r = run_matrix(dir, laplacian_1d(50), {"--quiet", "--set", "problem.x0=" + dir.file("x0.mtx"), "--set",
                                                   "solver.max_iterations=20"});
  EXPECT_EQ(r.status, kExitNotConverged) << r.err;
  EXPECT_EQ(line_count(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("the initial guess's residual was"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("singular"), std::string::npos) << r.err;
  write_text(dir, "x0.mtx", array_vector(std::vector<double>(50, 1e308)));
  r = run_matrix(dir, laplacian_1d(50), {"--quiet", "--set", "problem.x0=" + dir.file("x0.mtx")});
  EXPECT_EQ(r.status, kExitError) << r.err;
  EXPECT_NE(r.err.find("the initial guess is too large for this matrix"), std::string::npos) << r.err;
}

// The 2D Laplacian shifted by its least eigenvalue: singular, its nullspace the smooth first eigenvector,
// and b = 1 far from its range. CG's true residual stagnates there too, but above b's: a tolerance below
// the attainable accuracy, as the stagnation alone would say, is not the cause.
TEST(Cli, AResidualStagnatingAboveTheRightHandSidesIsNotBlamedOnTheTolerance) {
  const int n = 64;
  const double shift = 4.0 - 4.0 * std::cos(M_PI / (n + 1));
  std::string mtx = "%%MatrixMarket matrix coordinate real symmetric\n" + std::to_string(n * n) + " " +
                    std::to_string(n * n) + " " + std::to_string(n * n + 2 * n * (n - 1)) + "\n";
  char line[96];
  for (int y = 0; y < n; ++y)
    for (int x = 0; x < n; ++x) {
      const int i = y * n + x + 1;
      std::snprintf(line, sizeof line, "%d %d %.17g\n", i, i, 4.0 - shift);
      mtx += line;
      if (x > 0) mtx += std::to_string(i) + " " + std::to_string(i - 1) + " -1\n";
      if (y > 0) mtx += std::to_string(i) + " " + std::to_string(i - n) + " -1\n";
    }
  ScratchDir dir;
  const RunResult r = run_matrix(dir, mtx, {"--quiet"});
  EXPECT_EQ(r.status, kExitNotConverged) << r.err;
  EXPECT_EQ(line_count(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("singular"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("tolerance is below the attainable accuracy"), std::string::npos) << r.err;
  const json report = read_report(dir.file("R.json"));
  EXPECT_TRUE(field(report, "solve.stagnated").get<bool>()) << "the case this test is about";
  EXPECT_EQ(field(report, "solve.relative_residual").get<double>(), 1.0);  // stagnated: the start, x = 0
}

// solver.absolute_tolerance: the run stops at a residual in b's units, says so when it starts, and reports both
// tolerances and the relative one it was held to (b = 1 on 32^3: ||b|| = 32^1.5).
TEST(Cli, AnAbsoluteToleranceIsHeldToAndReported) {
  ScratchDir dir;
  const double bnorm = std::pow(32.0, 1.5);
  const RunResult r = run(dir, {kSmallConfig, "--report", dir.file("R.json"), "--vtk", "", "--set", "problem.rhs=ones",
                                "--set", "solver.tolerance=1e-12", "--set", "solver.absolute_tolerance=0.01"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("solve to relative residual 1.0e-12 or residual 1.0e-02"), std::string::npos) << r.out;
  const json report = read_report(dir.file("R.json"));
  EXPECT_EQ(field(report, "solve.absolute_tolerance").get<double>(), 0.01);
  EXPECT_NEAR(field(report, "solve.effective_tolerance").get<double>(), 0.01 / bnorm, 1e-15);
  EXPECT_LE(field(report, "solve.relative_residual").get<double>(), 0.01 / bnorm);
  EXPECT_GT(field(report, "solve.relative_residual").get<double>(), 1e-12);
}

// s3rmt3m3, a cylindrical shell's stiffness matrix: SPD (its Cholesky factor exists) but so ill-conditioned
// for a hierarchy built on the constants that CG's residual is far above b's after 1,000 iterations while
// its error still falls. The one-line error does not call it only singular: it gives what helps.
TEST(Cli, AnIllConditionedSpdMatrixIsNotCalledOnlySingular) {
  AMGSOLVE_REQUIRE_SHARED_MATRIX(path, "s3rmt3m3");
  ScratchDir dir;
  write_text(dir, "cfg.yaml", "problem:\n  type: matrix_market\n  matrix: " + path + "\n");
  const RunResult r = run(dir, {dir.file("cfg.yaml"), "--quiet", "--report", dir.file("R.json"), "--set",
                                "solver.max_iterations=1000"});
  EXPECT_EQ(r.status, kExitNotConverged) << r.err;
  EXPECT_EQ(line_count(r.err), 1) << r.err;
  const json report = read_report(dir.file("R.json"));
  // (1: x = 0 returned, where the solve stagnated above it)
  ASSERT_GE(field(report, "solve.relative_residual").get<double>(), 1.0) << "the case this test is about";
  // Stagnation depends on the last digits of the iterates (another compiler, FMA): then the message says so.
  if (field(report, "solve.stagnated").get<bool>()) {
    EXPECT_NE(r.err.find("the residual stagnates above the right-hand side's"), std::string::npos) << r.err;
    return;
  }
  EXPECT_NE(r.err.find("or so ill-conditioned"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("try amg.smoother.degree: 3 or 4"), std::string::npos) << r.err;
}

TEST(Cli, MatrixMarketProblemConvergesAndWritesTheSolution) {
  ScratchDir dir;
  const int n = 50;
  write_text(dir, "A.mtx", laplacian_1d(n));
  const std::string cfg = matrix_config(dir);
  const std::string solution = dir.file("x.mtx");
  // coarse_size 10 makes the 50-row problem multilevel.
  const RunResult r = run(dir, {cfg, "--quiet", "--report", dir.file("R.json"), "--set", "amg.coarse_size=10",
                                "--set", "output.solution=" + solution});
  ASSERT_EQ(r.status, kExitOk) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(files_in(dir), (std::set<std::string>{"A.mtx", "cfg.yaml", "R.json", "x.mtx"}));

  const json report = read_report(dir.file("R.json"));
  EXPECT_EQ(field(report, "problem.type").get<std::string>(), "matrix_market");
  EXPECT_EQ(field(report, "problem.rows").get<int>(), n);
  EXPECT_EQ(field(report, "problem.nnz").get<int>(), 3 * n - 2);
  EXPECT_TRUE(field(report, "solve.converged").get<bool>());
  EXPECT_GE(field(report, "setup.levels").size(), 2u);

  // b = 1: the exact solution of tridiag(-1, 2, -1) x = 1 is x_i = i (n + 1 - i) / 2.
  const Vector<double> x = read_matrix_market_vector(solution);
  ASSERT_EQ(x.size(), static_cast<std::size_t>(n));
  double diff = 0, ref = 0;
  for (int i = 1; i <= n; ++i) {
    const double exact = 0.5 * i * (n + 1 - i);
    diff += (x[i - 1] - exact) * (x[i - 1] - exact);
    ref += exact * exact;
  }
  EXPECT_LT(std::sqrt(diff / ref), 1e-4);  // relative residual 1e-8 times condition number ~1e3
}

TEST(Cli, MatrixMarketRightHandSideFile) {
  ScratchDir dir;
  const int n = 20;
  write_text(dir, "A.mtx", laplacian_1d(n));
  write_text(dir, "b.mtx", array_vector(std::vector<double>(n, 2.0)));
  const std::string cfg = write_text(
      dir, "cfg.yaml",
      "problem:\n  type: matrix_market\n  matrix: " + dir.file("A.mtx") + "\n  rhs: " + dir.file("b.mtx") + "\n");
  const RunResult r = run(dir, {cfg, "--quiet", "--set", "output.solution=" + dir.file("x.mtx")});
  ASSERT_EQ(r.status, kExitOk) << r.err;
  // b = 2: x_i = i (n + 1 - i).
  const Vector<double> x = read_matrix_market_vector(dir.file("x.mtx"));
  ASSERT_EQ(x.size(), static_cast<std::size_t>(n));
  for (int i = 1; i <= n; ++i) EXPECT_NEAR(x[i - 1], double(i) * (n + 1 - i), 1e-5 * n * n) << "i = " << i;
}

// Several right-hand sides in one file (load cases) are solved one after another with one setup: each
// column's solution is the one a run with that column alone gives, bit for bit, to the tolerance's residual;
// the solution file holds them as columns, the report each one's solve.
TEST(Cli, LoadCasesSolveWithOneSetup) {
  ScratchDir dir;
  const int n = 3000, columns = 3;  // over amg.coarse_size: a hierarchy of several levels
  write_text(dir, "A.mtx", laplacian_1d(n));
  std::vector<double> loads(static_cast<std::size_t>(n) * columns);
  for (int i = 0; i < n; ++i)
    for (int c = 0; c < columns; ++c) loads[static_cast<std::size_t>(i) * columns + c] = std::sin(0.01 * (c + 1) * (i + 1)) + c;
  write_text(dir, "B.mtx", dense_array(loads, columns));
  const std::string cfg = write_text(
      dir, "cfg.yaml", "problem:\n  type: matrix_market\n  matrix: " + dir.file("A.mtx") + "\n  rhs: " + dir.file("B.mtx") + "\n");
  const RunResult all = run(dir, {cfg, "--report", dir.file("R.json"), "--set", "output.solution=" + dir.file("X.mtx")});
  ASSERT_EQ(all.status, kExitOk) << all.err;
  EXPECT_NE(all.out.find("load case 3 of 3: converged"), std::string::npos) << all.out;
  const std::size_t setup = all.out.find("AMG setup");
  ASSERT_NE(setup, std::string::npos) << all.out;
  EXPECT_EQ(all.out.find("AMG setup", setup + 1), std::string::npos) << "a second setup: " << all.out;
  EXPECT_NE(all.out.find("3 right-hand sides (load cases"), std::string::npos) << all.out;
  const CsrMatrix<double> X = read_matrix_market(dir.file("X.mtx"));
  ASSERT_EQ(X.rows, n);
  ASSERT_EQ(X.cols, columns);
  const json r = read_report(dir.file("R.json"));
  ASSERT_EQ(field(r, "load_cases").size(), static_cast<std::size_t>(columns));
  const CsrMatrix<double> A = read_matrix_market(dir.file("A.mtx"));
  for (int c = 0; c < columns; ++c) {
    Vector<double> b(static_cast<std::size_t>(n)), x(static_cast<std::size_t>(n), 0.0);
    for (int i = 0; i < n; ++i) b[i] = loads[static_cast<std::size_t>(i) * columns + c];
    for (Index i = 0; i < X.rows; ++i)
      for (Offset k = X.row_begin(i); k < X.row_end(i); ++k)
        if (X.col[k] == c) x[i] = X.val[k];
    EXPECT_LE(test::true_relative_residual(A, b, x), 1.01e-8) << "column " << c + 1;
    const json load_case = field(r, "load_cases")[static_cast<std::size_t>(c)];
    EXPECT_EQ(load_case["column"], c + 1);
    EXPECT_TRUE(load_case["converged"].get<bool>());
    // The column alone: the same hierarchy and solve, so the same bits.
    write_text(dir, "b.mtx", dense_array(std::vector<double>(b.begin(), b.end()), 1));
    const RunResult alone = run(dir, {cfg, "--quiet", "--set", "problem.rhs=" + dir.file("b.mtx"), "--set",
                                      "output.solution=" + dir.file("x.mtx"), "--report", dir.file("r1.json")});
    ASSERT_EQ(alone.status, kExitOk) << alone.err;
    EXPECT_EQ(read_matrix_market_vector(dir.file("x.mtx")), x) << "column " << c + 1;
    EXPECT_EQ(field(read_report(dir.file("r1.json")), "solve.history"), load_case["history"]) << "column " << c + 1;
  }
  EXPECT_EQ(field(r, "solve.history"), field(r, "load_cases")[0]["history"]);  // `solve` is the first column's
  // Started from those solutions (problem.x0), every load case meets the tolerance at once and keeps them.
  const RunResult restarted = run(dir, {cfg, "--quiet", "--set", "problem.x0=" + dir.file("X.mtx"), "--set",
                                        "output.solution=" + dir.file("X2.mtx"), "--report", dir.file("R2.json")});
  ASSERT_EQ(restarted.status, kExitOk) << restarted.err;
  const json r2 = read_report(dir.file("R2.json"));
  EXPECT_EQ(field(r2, "solve.initial_guess"), "file");
  for (const json& load_case : field(r2, "load_cases")) EXPECT_EQ(load_case["iterations"], 0);
  EXPECT_EQ(read_text(dir.file("X2.mtx")), read_text(dir.file("X.mtx")));
}

// A start from a solution to 1e-4 (problem.x0) takes fewer iterations to 1e-8 than one from zero, to the same
// residual.
TEST(Cli, AnInitialGuessFileIsWhereTheSolveStarts) {
  ScratchDir dir;
  write_text(dir, "A.mtx", laplacian_1d(3000));
  const std::string cfg = matrix_config(dir);
  const RunResult loose = run(dir, {cfg, "--quiet", "--set", "solver.tolerance=1e-4", "--set",
                                    "output.solution=" + dir.file("x0.mtx")});
  ASSERT_EQ(loose.status, kExitOk) << loose.err;
  const RunResult from_zero = run(dir, {cfg, "--quiet", "--report", dir.file("zero.json")});
  const RunResult from_x0 = run(dir, {cfg, "--quiet", "--report", dir.file("x0.json"), "--set",
                                      "problem.x0=" + dir.file("x0.mtx"), "--set", "output.solution=" + dir.file("x.mtx")});
  ASSERT_EQ(from_zero.status, kExitOk) << from_zero.err;
  ASSERT_EQ(from_x0.status, kExitOk) << from_x0.err;
  const json zero = read_report(dir.file("zero.json")), started = read_report(dir.file("x0.json"));
  EXPECT_LT(field(started, "solve.iterations").get<int>(), field(zero, "solve.iterations").get<int>());
  EXPECT_GT(field(started, "solve.iterations").get<int>(), 0);
  const Vector<double> x = read_matrix_market_vector(dir.file("x.mtx"));
  EXPECT_LE(test::true_relative_residual(read_matrix_market(dir.file("A.mtx")), Vector<double>(x.size(), 1.0), x), 1.01e-8);
}

// A config's relative problem.matrix is read from the config's folder, wherever amgsolve runs; a relative
// --set path is the user's, read from the working directory.
TEST(Cli, RelativeInputPathsAreReadFromTheConfigFolder) {
  ScratchDir dir;
  std::filesystem::create_directory(dir.file("case"));
  write_text(dir, "case/A.mtx", laplacian_1d(30));
  write_text(dir, "A.mtx", laplacian_1d(12));  // a decoy where the working directory would find it
  const std::string cfg = write_text(dir, "case/cfg.yaml", "problem:\n  type: matrix_market\n  matrix: A.mtx\n");

  RunResult r = run(dir, {cfg, "--quiet", "--report", dir.file("R.json")});
  ASSERT_EQ(r.status, kExitOk) << r.err;
  EXPECT_EQ(field(read_report(dir.file("R.json")), "problem.rows").get<int>(), 30);

  r = run(dir, {cfg, "--quiet", "--report", dir.file("R.json"), "--set", "problem.matrix=A.mtx"});
  ASSERT_EQ(r.status, kExitOk) << r.err;
  EXPECT_EQ(field(read_report(dir.file("R.json")), "problem.rows").get<int>(), 12);
}

// ---------------------------------------------------------------- singular systems

// 1D Laplacian with insulated ends (Neumann): tridiag(-1, 2, -1) with 1 in the corners, rows summing to zero.
std::string neumann_laplacian_1d(int n) {
  std::ostringstream m;
  m << "%%MatrixMarket matrix coordinate real symmetric\n" << n << " " << n << " " << (2 * n - 1) << "\n";
  for (int i = 1; i <= n; ++i) {
    m << i << " " << i << " " << (i == 1 || i == n ? 1 : 2) << "\n";
    if (i < n) m << i + 1 << " " << i << " -1\n";
  }
  return m.str();
}

TEST(Cli, SingularMatrixWithZeroSumRightHandSideIsSolvedOnItsRange) {
  ScratchDir dir;
  const int n = 60;
  write_text(dir, "A.mtx", neumann_laplacian_1d(n));
  std::vector<double> b(n);
  for (int i = 1; i <= n; ++i) b[i - 1] = i - 0.5 * (n + 1);  // sums to zero exactly
  write_text(dir, "b.mtx", array_vector(b));
  const std::string cfg = write_text(dir, "cfg.yaml", "problem:\n  type: matrix_market\n  matrix: A.mtx\n  rhs: b.mtx\n");
  const RunResult r = run(dir, {cfg, "--report", dir.file("R.json"), "--set", "amg.coarse_size=10", "--set",
                                "output.solution=" + dir.file("x.mtx")});
  ASSERT_EQ(r.status, kExitOk) << r.err;
  EXPECT_NE(r.out.find("singular: the rows sum to zero"), std::string::npos) << r.out;
  const json report = read_report(dir.file("R.json"));
  EXPECT_EQ(field(report, "setup.nullspace").get<std::string>(), "constant");
  // A x = b and x sums to zero, checked here from the file.
  const Vector<double> x = read_matrix_market_vector(dir.file("x.mtx"));
  ASSERT_EQ(x.size(), static_cast<std::size_t>(n));
  double sum = 0, res = 0, bb = 0;
  for (int i = 0; i < n; ++i) {
    const double Ax = (i == 0 || i == n - 1 ? 1 : 2) * x[i] - (i > 0 ? x[i - 1] : 0) - (i < n - 1 ? x[i + 1] : 0);
    const double bi = (i + 1) - 0.5 * (n + 1);
    res += (Ax - bi) * (Ax - bi);
    bb += bi * bi;
    sum += x[i];
  }
  EXPECT_LE(std::sqrt(res / bb), 1.01e-8);
  EXPECT_LE(std::abs(sum), 1e-9 * n);
}

TEST(Cli, SingularMatrixWithInconsistentRightHandSideFailsBeforeTheSetup) {
  ScratchDir dir;
  write_text(dir, "A.mtx", neumann_laplacian_1d(40));
  const std::string cfg = write_text(dir, "cfg.yaml", "problem:\n  type: matrix_market\n  matrix: A.mtx\n");
  const RunResult r = run(dir, {cfg, "--report", dir.file("R.json")});  // b = 1 sums to 40, not 0
  EXPECT_TRUE(FailedCleanly(r, dir, kMatrixInputs, {"right-hand side (b = 1) is inconsistent", "make b sum to zero"}));
  EXPECT_EQ(r.out.find("AMG setup"), std::string::npos) << r.out;
}

// A b whose constant part is 1.4e-6 of ||b|| (a sine plus 1e-6): inconsistent at solver.tolerance 1e-8,
// but within an absolute tolerance of 1e-2 (2e-3 of ||b|| = 5), which the check before the setup counts as
// the solve does: refused without it, solved with it.
TEST(Cli, ASingularSystemIsCheckedAgainstTheAbsoluteToleranceToo) {
  ScratchDir dir;
  const int n = 50;
  write_text(dir, "A.mtx", neumann_laplacian_1d(n));
  std::vector<double> b(n);
  for (int i = 0; i < n; ++i) b[i] = std::sin(2 * M_PI * i / n) + 1e-6;
  write_text(dir, "b.mtx", array_vector(b));
  const std::string cfg =
      write_text(dir, "cfg.yaml", "problem:\n  type: matrix_market\n  matrix: A.mtx\n  rhs: b.mtx\n");
  const RunResult refused = run(dir, {cfg, "--quiet"});
  EXPECT_EQ(refused.status, kExitError) << refused.err;
  EXPECT_NE(refused.err.find("above the solve's tolerance 1e-08"), std::string::npos) << refused.err;
  const RunResult solved = run(dir, {cfg, "--quiet", "--set", "solver.absolute_tolerance=1e-2"});
  EXPECT_EQ(solved.status, kExitOk) << solved.err;
}

TEST(Cli, NeumannPoissonNeedsAManufacturedRightHandSide) {
  ScratchDir dir;
  const std::string cfg =
      write_text(dir, "cfg.yaml", "problem:\n  stencil: 5pt\n  size: [20, 20]\n  boundary: neumann\n");
  const RunResult refused = run(dir, {cfg});
  EXPECT_TRUE(FailedCleanly(refused, dir, {"cfg.yaml"}, {"problem.rhs ones has no solution with boundary neumann"}));
  const RunResult solved = run(dir, {cfg, "--quiet", "--set", "problem.rhs=manufactured", "--report", dir.file("R.json")});
  ASSERT_EQ(solved.status, kExitOk) << solved.err;
  const json report = read_report(dir.file("R.json"));
  EXPECT_EQ(field(report, "setup.nullspace").get<std::string>(), "constant");
  EXPECT_LT(field(report, "solve.relative_error").get<double>(), 1e-6);  // against u* of zero mean
}

}  // namespace
}  // namespace amgsolve

namespace amgsolve {
namespace {

// problem.steps: one setup, then a re-setup per step on the same pattern, each step in the report.
TEST(Cli, StepsReSetUpTheHierarchyAndReportEachStep) {
  ScratchDir dir;
  const std::string config = std::string(AMGSOLVE_SOURCE_DIR) + "/configs/poisson-steps.yaml";
  const RunResult r = run(dir, {config, "--quiet", "--report", dir.file("S.json"), "--set", "problem.size=[20,20,20]",
                                "--set", "problem.steps=3", "--set", "problem.contrast=8"});
  ASSERT_EQ(r.status, kExitOk) << r.err;
  const json report = read_report(dir.file("S.json"));
  const json& steps = field(report, "steps");
  ASSERT_EQ(steps.size(), 3u);
  for (std::size_t s = 0; s < steps.size(); ++s) {
    EXPECT_EQ(steps[s].at("step").get<int>(), static_cast<int>(s) + 1);
    EXPECT_NEAR(steps[s].at("contrast").get<double>(), std::pow(8.0, (s + 1) / 3.0), 1e-9);
    EXPECT_EQ(steps[s].at("reused").get<bool>(), s > 0) << steps[s].dump();
    EXPECT_TRUE(steps[s].at("converged").get<bool>());
    EXPECT_LE(steps[s].at("relative_residual").get<double>(), 1e-8);
  }
  // The report's solve is the last step's, and so is the problem it describes; the last line sums every step's.
  EXPECT_EQ(field(report, "solve.iterations"), steps[2].at("iterations"));
  const std::string description = field(report, "problem.description").get<std::string>();
  EXPECT_NE(description.find("checkerboard coefficient 8 : 1"), std::string::npos) << description;
  // amg.keep_structure given false: every step sets up anew (a comparison with the re-setups), said so.
  const RunResult anew = run(dir, {config, "--quiet", "--report", dir.file("F.json"), "--set", "problem.size=[12,12,12]",
                                   "--set", "problem.steps=2", "--set", "amg.keep_structure=false"});
  ASSERT_EQ(anew.status, kExitOk) << anew.err;
  const json& full_steps = field(read_report(dir.file("F.json")), "steps");
  ASSERT_EQ(full_steps.size(), 2u);
  EXPECT_FALSE(full_steps[1].at("reused").get<bool>());
  EXPECT_NE(full_steps[1].at("setup_note").get<std::string>().find("amg.keep_structure is off"), std::string::npos)
      << full_steps[1].dump();
  const RunResult shown = run(dir, {config, "--report", "", "--set", "problem.size=[12,12,12]", "--set",
                                    "problem.steps=3", "--set", "problem.contrast=8"});
  ASSERT_EQ(shown.status, kExitOk) << shown.err;
  EXPECT_NE(shown.out.find("total over 3 steps: setups "), std::string::npos) << shown.out;
  // A coefficient that does not change cannot step.
  const RunResult bad = run(dir, {config, "--quiet", "--set", "problem.coefficient=constant"});
  EXPECT_EQ(bad.status, kExitError);
  EXPECT_NE(bad.err.find("problem.steps"), std::string::npos) << bad.err;
}

// solver.initial_guess: previous_step starts each step after the first from the step before's solution: the
// first step is the zero start's, the later ones (a coefficient that changes by about 2% a step) begin far
// below ||b||, take fewer iterations and still end at the tolerance.
TEST(Cli, StepsCanStartFromTheStepBeforesSolution) {
  ScratchDir dir;
  const std::string config = std::string(AMGSOLVE_SOURCE_DIR) + "/configs/poisson-steps.yaml";
  const std::vector<std::string> common = {config, "--quiet", "--set", "problem.size=[20,20,20]", "--set",
                                           "problem.steps=3", "--set", "problem.contrast=1.05"};
  const auto run_with = [&](const std::string& start, const std::string& report) {
    std::vector<std::string> args = common;
    for (const std::string& a : {std::string("--report"), dir.file(report), std::string("--set"),
                                 "solver.initial_guess=" + start})
      args.push_back(a);
    const RunResult r = run(dir, args);
    EXPECT_EQ(r.status, kExitOk) << r.err;
    return read_report(dir.file(report));
  };
  const json cold = run_with("zero", "zero.json");
  const json warm = run_with("previous_step", "warm.json");
  EXPECT_EQ(field(warm, "solve.initial_guess"), "previous_step");
  EXPECT_EQ(field(cold, "solve.initial_guess"), "zero");
  const json& cold_steps = field(cold, "steps");
  const json& warm_steps = field(warm, "steps");
  ASSERT_EQ(warm_steps.size(), 3u);
  EXPECT_EQ(warm_steps[0].at("history"), cold_steps[0].at("history"));
  for (std::size_t s = 1; s < warm_steps.size(); ++s) {
    EXPECT_EQ(cold_steps[s].at("history").front().get<double>(), 1.0);
    EXPECT_LT(warm_steps[s].at("history").front().get<double>(), 0.1) << warm_steps[s].dump();
    EXPECT_LT(warm_steps[s].at("iterations").get<int>(), cold_steps[s].at("iterations").get<int>());
    EXPECT_TRUE(warm_steps[s].at("converged").get<bool>());
    EXPECT_LE(warm_steps[s].at("relative_residual").get<double>(), 1e-8);
  }
}

}  // namespace
}  // namespace amgsolve
