// JSON output and atomic files: what is written reads back equal; failed writes leave nothing behind.
// (The VTK writers are tested in test_vtk.cpp, built when VTK is.)
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <thread>
#include <vector>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "output/report.hpp"
#include "output/vtk_writer.hpp"
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

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Where the file system has unnamed files (O_TMPFILE), an output has no name until it is put in place, in a
// batch too, so that a process killed meanwhile (SIGKILL, the OOM killer) leaves nothing beside its targets.
TEST(AtomicFile, AnOutputHasNoNameUntilItIsPutInPlace) {
  test::ScratchDir dir;
  const int probe = ::open(dir.path().c_str(), O_TMPFILE | O_WRONLY, 0600);
  if (probe < 0) GTEST_SKIP() << "this file system has no unnamed files (O_TMPFILE): outputs are staged by name";
  ::close(probe);
  {
    OutputBatch batch;
    for (const char* name : {"a.json", "b.json"}) {
      AtomicFile f(dir.file(name));
      std::ofstream(f.temp_path()) << name;
      f.commit();
    }
    EXPECT_TRUE(std::filesystem::is_empty(dir.path())) << "staged by a name before the batch's commit";
    batch.commit();
  }
  EXPECT_EQ(read_all(dir.file("a.json")), "a.json");
  EXPECT_EQ(read_all(dir.file("b.json")), "b.json");
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"a.json", "b.json"}));
  // A file replaced keeps its permissions through the unnamed file.
  std::filesystem::permissions(dir.file("a.json"), std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  {
    AtomicFile f(dir.file("a.json"));
    std::ofstream(f.temp_path()) << "again";
    f.commit();
  }
  EXPECT_EQ(read_all(dir.file("a.json")), "again");
  EXPECT_EQ(std::filesystem::status(dir.file("a.json")).permissions(),
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
}

TEST(AtomicFile, RequireWritableNamesTheMissingDirectory) {
  try {
    require_writable("/nonexistent-dir/r.json", "report file");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir"), std::string::npos);
  }
}

void write_through(const std::string& path, const std::string& text) {
  AtomicFile f(path);
  std::ofstream(f.temp_path()) << text;
  f.commit();
}

// A descriptor of the process (/dev/stdout, /dev/fd/N) may be a regular file a shell redirected (`>`, no
// O_APPEND), holding what the run printed: the output goes through the descriptor, after those lines and
// before the ones printed later, never renamed over the file, and its text is not asked for a mark
// (`--report /dev/stdout > run.log` lost run.log's progress lines).
TEST(AtomicFile, ADescriptorIsWrittenThroughAtItsPlace) {
  test::ScratchDir dir;
  const std::string log = dir.file("run.log");
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  const auto print = [fd](const std::string& line) { ASSERT_EQ(::write(fd, line.data(), line.size()), static_cast<ssize_t>(line.size())); };
  print("progress line\n");
  for (const std::string& path : {"/dev/fd/" + std::to_string(fd), "/proc/self/fd/" + std::to_string(fd)}) {
    EXPECT_NO_THROW(require_writable(path, "report file", OutputMark{"{\n  \"amgsolve\":", true})) << path;
    write_through(path, "{report}\n");
    print("written\n");
  }
  ::close(fd);
  EXPECT_EQ(read_all(log), "progress line\n{report}\nwritten\n{report}\nwritten\n");
  EXPECT_EQ(std::filesystem::status(log).type(), std::filesystem::file_type::regular);
}

// A device is written into, never replaced: /dev/null stays the character device it is.
TEST(AtomicFile, DeviceIsWrittenThroughNotReplaced) {
  write_through("/dev/null", "report");
  std::error_code ec;
  EXPECT_EQ(std::filesystem::status("/dev/null", ec).type(), std::filesystem::file_type::character);
}

// The device's write error arrives, naming the output and its reason, and no temporary file is left anywhere.
TEST(AtomicFile, DeviceWriteErrorIsReported) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full on this system";
  try {
    write_through("/dev/full", "report");
    FAIL() << "writing to /dev/full succeeded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot write output file /dev/full: No space left"), std::string::npos)
        << e.what();
  }
}

// A symbolic link is followed: its target is replaced, the link stays a link.
TEST(AtomicFile, SymbolicLinkIsFollowed) {
  test::ScratchDir dir;
  std::filesystem::create_symlink("target.json", dir.file("link.json"));
  write_through(dir.file("link.json"), "first");
  write_through(dir.file("link.json"), "second");
  EXPECT_TRUE(std::filesystem::is_symlink(dir.file("link.json")));
  EXPECT_EQ(read_all(dir.file("target.json")), "second");
}

// A FIFO gets the data, whole, when a reader opens it.
TEST(AtomicFile, FifoReceivesTheData) {
  test::ScratchDir dir;
  const std::string fifo = dir.file("pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string received;
  std::thread reader([&] { received = read_all(fifo); });
  write_through(fifo, "through the pipe");
  reader.join();
  EXPECT_EQ(received, "through the pipe");
  EXPECT_EQ(std::filesystem::status(fifo).type(), std::filesystem::file_type::fifo);
}

// A FIFO that nobody reads yet: the wait for a reader is said on the standard error (a run that finished its
// work would otherwise sit silent), then the data goes to the reader that comes.
TEST(AtomicFile, AFifoWithoutReaderSaysItWaits) {
  test::ScratchDir dir;
  const std::string fifo = dir.file("pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  int err[2];
  ASSERT_EQ(::pipe(err), 0);
  std::fflush(stderr);
  const int saved = ::dup(STDERR_FILENO);
  ::dup2(err[1], STDERR_FILENO);
  std::thread writer([&] { write_through(fifo, "to a late reader"); });
  // The note's line, read as the writer prints it (60 s at most: a writer that says nothing fails the test).
  std::string note;
  pollfd ready{err[0], POLLIN, 0};
  for (char c = 0; c != '\n' && ::poll(&ready, 1, 60000) == 1 && ::read(err[0], &c, 1) == 1;) note += c;
  std::fflush(stderr);
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  ::close(err[1]);
  const std::string received = read_all(fifo);  // the reader comes: the writer goes on
  writer.join();
  ::close(err[0]);
  EXPECT_NE(note.find("waiting for a process to read " + fifo + " (a FIFO)"), std::string::npos) << note;
  EXPECT_EQ(received, "to a late reader");
}

// An anonymous pipe (a shell's `| ...` or `>(...)`: /dev/stdout, /dev/fd/N) is written through too. Its link
// /proc/self/fd/N reads "pipe:[N]", which names no file: following it by hand led to "cannot create files in
// directory /proc/self/fd".
TEST(AtomicFile, AnAnonymousPipeReceivesTheData) {
  int ends[2];
  ASSERT_EQ(::pipe(ends), 0);
  const std::string path = "/proc/self/fd/" + std::to_string(ends[1]);
  std::string received;
  std::thread reader([&] {
    char buffer[256];
    for (ssize_t n; (n = ::read(ends[0], buffer, sizeof buffer)) > 0;) received.append(buffer, static_cast<std::size_t>(n));
  });
  EXPECT_NO_THROW(require_writable(path, "report file", OutputMark{}));
  EXPECT_NO_THROW(write_through(path, "through an anonymous pipe"));  // the reader is joined either way
  ::close(ends[1]);
  reader.join();
  ::close(ends[0]);
  EXPECT_EQ(received, "through an anonymous pipe");
}

TEST(AtomicFile, DirectoryIsRefused) {
  test::ScratchDir dir;
  EXPECT_THROW(AtomicFile f(dir.path().string()), InputError);
  EXPECT_THROW(require_writable(dir.path().string(), "report file"), InputError);
}

// The outputs of a run land together: an uncommitted batch leaves none, a committed one all.
TEST(OutputBatch, OutputsLandTogetherOrNotAtAll) {
  test::ScratchDir dir;
  {
    OutputBatch batch;
    write_through(dir.file("a.json"), "a");
    write_through(dir.file("b.json"), "b");
    EXPECT_FALSE(std::filesystem::exists(dir.file("a.json"))) << "staged, not yet renamed";
  }  // the run failed before committing
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
  {
    OutputBatch batch;
    write_through(dir.file("a.json"), "a");
    write_through(dir.file("b.json"), "b");
    batch.commit();
  }
  EXPECT_EQ(read_all(dir.file("a.json")), "a");
  EXPECT_EQ(read_all(dir.file("b.json")), "b");
}

// A rename that fails in the middle of a batch (here: the last target became a directory holding a file;
// in practice a bind-mounted or immutable file) undoes the ones before it: the run's earlier outputs are
// the files they replaced again, a new one is gone, and no temporary or kept file is left.
TEST(OutputBatch, ARenameThatFailsPutsBackTheOnesBefore) {
  test::ScratchDir dir;
  write_through(dir.file("a.json"), "old a");
  try {
    OutputBatch batch;
    write_through(dir.file("a.json"), "new a");
    write_through(dir.file("new.json"), "new");
    write_through(dir.file("c.json"), "new c");
    std::filesystem::create_directory(dir.file("c.json"));
    std::ofstream(dir.file("c.json") + "/inside") << "keeps the directory from being replaced";
    batch.commit();
    ADD_FAILURE() << "renamed over a directory";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot write output file " + dir.file("c.json")), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("the files the run had replaced were put back"), std::string::npos) << e.what();
  }
  EXPECT_EQ(read_all(dir.file("a.json")), "old a");
  EXPECT_FALSE(std::filesystem::exists(dir.file("new.json")));
  std::vector<std::string> left;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) left.push_back(entry.path().filename());
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{"a.json", "c.json"}));
}

// What is ours is asked again just before it is replaced: a file another program wrote at the output's path
// during the run, or a link turned to another file, is not replaced (the check at the start saw neither).
TEST(AtomicFile, AFileThatBecameAnothersDuringTheRunIsNotReplaced) {
  test::ScratchDir dir;
  const OutputMark mark{"{\n  \"amgsolve\":", true};
  const std::string report = dir.file("r.json");
  {
    AtomicFile f(report, "report file", mark);
    std::ofstream(f.temp_path()) << "{\n  \"amgsolve\": 1\n}\n";
    std::ofstream(report) << "the user's notes\n";  // written while the run went on
    EXPECT_THROW(f.commit(), InputError);
  }
  EXPECT_EQ(read_all(report), "the user's notes\n");
  const std::string ours = dir.file("ours.json"), notes = dir.file("notes.txt"), link = dir.file("out.json");
  write_through(ours, "{\n  \"amgsolve\": 0\n}\n");
  write_through(notes, "more notes\n");
  std::filesystem::create_symlink(ours, link);
  {
    OutputBatch batch;
    AtomicFile f(link, "report file", mark);
    std::ofstream(f.temp_path()) << "{\n  \"amgsolve\": 1\n}\n";
    f.commit();
    std::filesystem::remove(link);
    std::filesystem::create_symlink(notes, link);
    try {
      batch.commit();
      ADD_FAILURE() << "written through a retargeted link";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("symbolic link was changed during the run"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(read_all(notes), "more notes\n");
  EXPECT_EQ(read_all(ours), "{\n  \"amgsolve\": 0\n}\n");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 4) << "no temporary file left";
}

// Only creating a file shows that a directory takes one: /proc has the permission bits but refuses.
TEST(AtomicFile, RequireWritableTriesTheDirectory) {
  if (!std::filesystem::is_directory("/proc/self")) GTEST_SKIP() << "no /proc on this system";
  EXPECT_THROW(require_writable("/proc/amgsolve-report.json", "report file"), InputError);
  test::ScratchDir dir;
  EXPECT_NO_THROW(require_writable(dir.file("r.json"), "report file"));
  EXPECT_TRUE(std::filesystem::is_empty(dir.path())) << "the probe file is removed";
}

// An output replaces only its own kind of file: one amgsolve wrote (its signature within the first bytes), an
// empty one, or a new one; never a read-only file or another program's. A file it replaces keeps its mode.
TEST(AtomicFile, AnOutputReplacesOnlyWhatIsOurs) {
  test::ScratchDir dir;
  const OutputMark signature{"{\n  \"amgsolve\":", true};
  const std::string ours = dir.file("ours.json"), theirs = dir.file("theirs.json"), empty = dir.file("empty.json");
  write_through(ours, "{\n  \"amgsolve\": \"amgsolve 0.1.0\",\n  \"x\": 1\n}\n");
  write_through(theirs, "{\"results\": [1, 2, 3]}\n");
  write_through(empty, "");
  // A file that merely names amgsolve, as a project's package.json would, is not a report amgsolve wrote.
  const std::string mentions = dir.file("package.json");
  write_through(mentions, "{\n  \"name\": \"project\",\n  \"dependencies\": {\n  \"amgsolve\": \"^0.1\"}}\n");
  EXPECT_THROW(require_writable(mentions, "report file", signature), InputError);
  // A mark that may lie anywhere in the file's head (a VTK file's field name) is found there.
  EXPECT_NO_THROW(require_writable(mentions, "report file", OutputMark{"\"dependencies\""}));
  EXPECT_NO_THROW(require_writable(ours, "report file", signature));
  EXPECT_NO_THROW(require_writable(empty, "report file", signature));
  EXPECT_NO_THROW(require_writable(dir.file("new.json"), "report file", signature));
  EXPECT_NO_THROW(require_writable(theirs, "report file"));  // a kind without a signature
  try {
    require_writable(theirs, "report file", signature);
    ADD_FAILURE() << "another program's file would be replaced";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("theirs.json exists and is not an amgsolve report file"), std::string::npos)
        << e.what();
  }
  ASSERT_EQ(::chmod(ours.c_str(), 0444), 0);
  EXPECT_THROW(require_writable(ours, "report file", signature), InputError);
  ASSERT_EQ(::chmod(ours.c_str(), 0640), 0);
  write_through(ours, "{\n  \"amgsolve\": \"again\"\n}\n");
  struct stat after {};
  ASSERT_EQ(::stat(ours.c_str(), &after), 0);
  EXPECT_EQ(after.st_mode & 0777, 0640u) << "the replaced file keeps its permissions";
}

TEST(AtomicFile, OutputsMustNotBeInputsOrEachOther) {
  test::ScratchDir dir;
  write_through(dir.file("config.yaml"), "problem:\n");
  std::filesystem::create_symlink("config.yaml", dir.file("alias.yaml"));
  const auto error = [&](const std::vector<std::pair<std::string, std::string>>& outputs) {
    try {
      require_distinct_outputs(outputs, {dir.file("config.yaml")});
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(none)");
  };
  EXPECT_NE(error({{"report file", dir.file("config.yaml")}}).find("is the input file"), std::string::npos);
  EXPECT_NE(error({{"report file", dir.file("alias.yaml")}}).find("is the input file"), std::string::npos);
  EXPECT_NE(error({{"report file", dir.file("x")}, {"VTK file", dir.file("./x")}}).find("same file"), std::string::npos);
  // Relative, and not there yet: "x" and "./x" in the working directory (they compared unequal, and the run
  // lost every output at the end).
  EXPECT_NE(error({{"report file", "amgsolve-test-x"}, {"VTK file", "./amgsolve-test-x"}}).find("same file"),
            std::string::npos);
  EXPECT_EQ(error({{"report file", dir.file("r.json")}, {"VTK file", dir.file("v.vti")}}), "(none)");
  EXPECT_EQ(error({{"report file", "/dev/null"}, {"solution file", "/dev/null"}}), "(none)");
}

TEST(Report, HasTheDocumentedFields) {
  RunRecord run;
  run.rows = 10;
  run.nnz = 28;
  LevelInfo l0;
  l0.rows = 10;
  l0.nnz = 28;
  l0.spgemm_seconds = 0.5;
  l0.phases.galerkin = 0.25;
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
  // README's phase names, each with its seconds (the setup's only times per phase).
  const nlohmann::json& phases = j["setup"]["levels"][0]["phases"];
  for (const char* key : {"strength", "aggregation", "eigenvalues", "prolongator", "transpose", "galerkin", "smoother"})
    EXPECT_TRUE(phases.contains(key)) << key;
  EXPECT_EQ(phases.size(), 7u);
  EXPECT_EQ(phases["galerkin"].get<double>(), 0.25);
  EXPECT_EQ(j["solve"]["history"].size(), 3u);
  EXPECT_NEAR(j["solve"]["convergence_factor"].get<double>(), 0.1, 1e-12);
}

// A file name that is not UTF-8 (Latin-1's 0xfe in a config's name) is written with U+FFFD in its place: the
// report is still written, as valid JSON (the strict writer threw after the run, losing every output).
TEST(Report, AFileNameThatIsNotUtf8IsWrittenReplaced) {
  test::ScratchDir dir;
  RunRecord run;
  run.config_file = "cfg\xfe.yaml";
  write_report(dir.file("r.json"), run);
  std::ifstream written(dir.file("r.json"));
  const nlohmann::json j = nlohmann::json::parse(written);
  EXPECT_EQ(j["config"].get<std::string>(), "cfg\xef\xbf\xbd.yaml");
}

// A fluence's rounding noise at or below zero is shown at the field's least positive value, not at -38.
TEST(VtkFields, Log10ShowsNonPositiveEntriesAtTheSmallestPositiveOne) {
  const Vector<double> fluence = {1.0, 1e-3, 3e-19, -2e-19, 0.0};
  const Vector<double> shown = log10_for_display(fluence);
  ASSERT_EQ(shown.size(), fluence.size());
  EXPECT_DOUBLE_EQ(shown[0], 0.0);
  EXPECT_DOUBLE_EQ(shown[1], -3.0);
  EXPECT_DOUBLE_EQ(shown[2], std::log10(3e-19));
  EXPECT_DOUBLE_EQ(shown[3], std::log10(3e-19));
  EXPECT_DOUBLE_EQ(shown[4], std::log10(3e-19));
  EXPECT_DOUBLE_EQ(log10_for_display({0.0, -1.0})[0], -38.0);  // nothing positive: the float range's floor
}

}  // namespace
}  // namespace amgsolve
