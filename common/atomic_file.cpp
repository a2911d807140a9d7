#include "common/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "common/error.hpp"

namespace amgsolve {
namespace {

namespace fs = std::filesystem;

void require_ours(const fs::path& target, const std::string& path, const std::string& what, OutputMark mark);

// The temporary file an output is written to before it is renamed onto its target.
std::string temp_name_of(const std::string& target) { return target + ".tmp-" + std::to_string(::getpid()); }

// The temporary files that exist now, for a signal that ends the run (Ctrl-C; SIGTERM, which mpirun sends
// the ranks when it is interrupted; SIGHUP from a closed terminal) to remove: a run killed while writing its
// outputs leaves nothing behind. Fixed slots, so that the handler reads them without allocating.
class PendingTemps {
 public:
  static PendingTemps& instance() {
    static PendingTemps pending;
    return pending;
  }
  // The handlers installed: a run holding only unnamed temporary files has none to remove, but its batch
  // still holds a signal back while it puts the outputs in place.
  void watch_signals() { install_handlers(); }
  void remember(const std::string& name) {
    install_handlers();
    if (name.size() >= kLength) return;  // not removed on a signal: no name that long is made here
    for (Slot& slot : slots_) {
      bool expected = false;
      if (!slot.claimed.compare_exchange_strong(expected, true)) continue;
      std::memcpy(slot.name, name.c_str(), name.size() + 1);
      slot.ready.store(true, std::memory_order_release);
      return;
    }
  }
  void forget(const std::string& name) {
    for (Slot& slot : slots_)
      if (slot.ready.load(std::memory_order_acquire) && name == slot.name) {
        slot.ready.store(false, std::memory_order_release);
        slot.claimed.store(false, std::memory_order_release);
        return;
      }
  }

 private:
  static constexpr int kSlots = 64;
  static constexpr std::size_t kLength = 4096;
  struct Slot {
    std::atomic<bool> claimed{false}, ready{false};
    char name[kLength];
  };

  // Only where the signal's action is the default: a caller's handler (Python's for SIGINT) is left alone,
  // and so is a signal the program ignores (amgsolve ignores SIGXFSZ: a write past ulimit -f then fails
  // with EFBIG, said in one line). SIGPIPE (a reader that went away) and SIGQUIT (Ctrl-\) end a run too.
  static void install_handlers() {
    static const bool installed = [] {
      for (const int signal : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGXFSZ}) {
        struct sigaction current {};
        if (sigaction(signal, nullptr, &current) != 0 || current.sa_handler != SIG_DFL) continue;
        struct sigaction action {};
        action.sa_handler = on_signal;
        sigemptyset(&action.sa_mask);
        sigaction(signal, &action, nullptr);
      }
      return true;
    }();
    (void)installed;
  }
  static void on_signal(int signal) {
    // While a batch puts its files in place (on any thread), the signal waits for it to finish: a run
    // ends with all of its outputs or none, never with some new and some old. Recorded first, then the
    // batches asked: one that ends meanwhile finds the record (end_placing), so no signal is lost.
    PendingTemps& pending = instance();
    pending.deferred_.store(signal);
    if (pending.placing_.load() > 0) return;
    if (const int recorded = pending.deferred_.exchange(0); recorded != 0) end_by(recorded);
  }
  static void end_by(int signal) {
    instance().remove_all();
    std::signal(signal, SIG_DFL);  // then end as the signal would have ended the run
    std::raise(signal);
  }

 public:
  // Between these two, a signal that would end the run is held back (see on_signal), then acted on once
  // no batch is placing (batches on several threads count).
  void begin_placing() { placing_.fetch_add(1); }
  void end_placing() {
    if (placing_.fetch_sub(1) != 1) return;
    if (const int signal = deferred_.exchange(0); signal != 0) end_by(signal);
  }

  // Async-signal-safe: unlink only.
  void remove_all() noexcept {
    for (Slot& slot : slots_)
      if (slot.ready.load(std::memory_order_acquire)) ::unlink(slot.name);
  }

 private:

  Slot slots_[kSlots];
  std::atomic<int> placing_{0};
  std::atomic<int> deferred_{0};
};

// Holds back the signals that end a run while the outputs are put in place (PendingTemps::on_signal).
class PlacingOutputs {
 public:
  PlacingOutputs() { PendingTemps::instance().begin_placing(); }
  ~PlacingOutputs() { PendingTemps::instance().end_placing(); }
  PlacingOutputs(const PlacingOutputs&) = delete;
  PlacingOutputs& operator=(const PlacingOutputs&) = delete;
};

}  // namespace

void remove_pending_temporary_files() noexcept { PendingTemps::instance().remove_all(); }

namespace {

int descriptor_of(const fs::path& path);

// An output's regular file is written, where the file system allows, to a file without a name (O_TMPFILE, in
// the target's folder), reached through its descriptor's /proc/self/fd/N and linked beside the target only
// to be renamed over it: a run that dies in any way (SIGKILL, the OOM killer, which no handler sees) leaves
// nothing behind. Elsewhere a named "<target>.tmp-<pid>", removed by the handlers of the signals that end a run.
constexpr std::string_view kUnnamedFolder = "/proc/self/fd/";

bool is_unnamed(const std::string& temp) { return temp.starts_with(kUnnamedFolder); }

// A new unnamed file in `folder`, as its /proc/self/fd/N path; "" where the kernel, the file system or a
// missing /proc gives none.
std::string unnamed_temp_in(const fs::path& folder) {
#ifdef O_TMPFILE
  const int fd = ::open(folder.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
  if (fd < 0) return "";
  std::string path = std::string(kUnnamedFolder) + std::to_string(fd);
  if (::access(path.c_str(), W_OK) == 0) return path;
  ::close(fd);
#else
  (void)folder;
#endif
  return "";
}

// Removes a temporary file and forgets it (an unnamed one: its descriptor closed, which frees it).
void remove_temp(const std::string& name) {
  if (is_unnamed(name)) {
    ::close(descriptor_of(name));
    return;
  }
  std::remove(name.c_str());
  PendingTemps::instance().forget(name);
}

// Links an unnamed temporary file beside its target, for the rename, and closes it: the name lives a moment
// (the signal handlers remove it). Throws, the file freed, where no link can be made.
std::string named_beside(const std::string& temp, const std::string& target, const std::string& shown,
                         const std::string& what) {
  std::string name = temp_name_of(target);
  for (int attempt = 0; attempt < 100; ++attempt, name += "x") {
    if (::linkat(AT_FDCWD, temp.c_str(), AT_FDCWD, name.c_str(), AT_SYMLINK_FOLLOW) == 0) {
      PendingTemps::instance().remember(name);
      remove_temp(temp);
      return name;
    }
    if (errno != EEXIST) break;  // a name an earlier run of this process number left: a little longer
  }
  const std::string reason = std::strerror(errno);
  remove_temp(temp);
  throw Error("cannot write " + what + " " + shown + ": " + reason);
}

bool is_special(const fs::path& path);
bool written_through(const fs::path& path);

// The file a path finally names: its symbolic links followed (relative ones from the link's folder), even
// where the last one points at a file that does not exist yet. A path the kernel resolves to a device, FIFO
// or pipe is kept as it is: /dev/stdout's link /proc/self/fd/1 reads "pipe:[N]", which names no file,
// but opening the path writes into the pipe.
fs::path follow_links(const fs::path& path) {
  fs::path current = path;
  for (int hops = 0; hops < 40; ++hops) {
    std::error_code ec;
    if (written_through(current) || !fs::is_symlink(fs::symlink_status(current, ec))) return current;
    const fs::path next = fs::read_symlink(current, ec);
    if (ec) return current;
    current = next.is_absolute() ? next : current.parent_path() / next;
  }
  throw InputError(path.string() + ": too many levels of symbolic links");
}

// A device, FIFO or socket: an existing file that is neither regular nor a directory.
bool is_special(const fs::path& path) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  return !ec && fs::exists(status) && !fs::is_regular_file(status) && !fs::is_directory(status);
}

// The descriptor a path names, or -1: /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N. Such a stream
// was opened by the caller, perhaps a regular file a shell redirected there (`--report /dev/stdout >
// run.log`, which already holds the run's progress lines): renaming over it would lose that file, and
// opening it anew would write at another offset than the descriptor's, over what the run prints after.
int descriptor_of(const fs::path& path) {
  const std::string p = path.lexically_normal().string();
  if (p == "/dev/stdout") return STDOUT_FILENO;
  if (p == "/dev/stderr") return STDERR_FILENO;
  for (const std::string& folder : {std::string("/dev/fd/"), std::string("/proc/self/fd/"), "/proc/" + std::to_string(::getpid()) + "/fd/"}) {
    if (!p.starts_with(folder) || p.size() == folder.size()) continue;
    int fd = -1;
    const char* end = p.data() + p.size();
    const auto [rest, error] = std::from_chars(p.data() + folder.size(), end, fd);
    return error == std::errc{} && rest == end ? fd : -1;
  }
  return -1;
}

// Writes all of `from` into descriptor fd, after what the process's own streams hold for it (where fd is, or
// shares a file with, stdout).
bool copy_into_descriptor(std::FILE* from, int fd) {
  std::fflush(nullptr);
  char buffer[1 << 16];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, from)) > 0;)
    for (std::size_t done = 0; done < n;) {
      const ssize_t wrote = ::write(fd, buffer + done, n - done);
      if (wrote < 0 && errno == EINTR) continue;
      if (wrote <= 0) return false;
      done += static_cast<std::size_t>(wrote);
    }
  return !std::ferror(from);
}

// What is written into rather than replaced: a device, FIFO or socket, or a descriptor of this process.
bool written_through(const fs::path& path) { return is_special(path) || descriptor_of(path) >= 0; }

fs::path folder_of(const fs::path& path) { return path.has_parent_path() ? path.parent_path() : fs::path("."); }

// A device or FIFO opened for writing, or -1 (errno set). Opening a FIFO that no process reads waits for one:
// that wait is said on the standard error first, so that a run that finished its work does not sit silent
// (the reader may still come; Ctrl-C ends the run, removing its temporary files).
int open_through(const std::string& target, const std::string& shown) {
  const int fd = ::open(target.c_str(), O_WRONLY | O_NONBLOCK);
  if (fd >= 0) {
    const int flags = ::fcntl(fd, F_GETFL);  // the writes then wait, as any output's, for a full pipe's reader
    if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
      const int error = errno;
      ::close(fd);
      errno = error;
      return -1;
    }
    return fd;
  }
  if (errno != ENXIO) return -1;  // ENXIO: a FIFO without a reader
  std::fprintf(stderr, "amgsolve: waiting for a process to read %s (a FIFO) to write into it; Ctrl-C ends the run\n",
               shown.c_str());
  std::fflush(stderr);
  return ::open(target.c_str(), O_WRONLY);
}

// Puts the finished temporary file in place of the target: renamed over it, or copied into a device, FIFO or
// descriptor (whose write errors are reported). The temporary file is gone afterwards either way.
void place(const std::string& temp, const std::string& target, bool through, const std::string& shown,
           const std::string& what) {
  if (!through) {
    const std::string named = is_unnamed(temp) ? named_beside(temp, target, shown, what) : temp;
    std::error_code ec;
    const fs::perms old = fs::status(target, ec).permissions();
    if (!ec && old != fs::perms::unknown) fs::permissions(named, old, ec);  // best effort: the data matters more
    // Run as root, which may replace anyone's file, the file stays its owner's (others cannot change owners).
    struct stat owner {};
    if (::geteuid() == 0 && ::stat(target.c_str(), &owner) == 0)
      (void)::chown(named.c_str(), owner.st_uid, owner.st_gid);
    if (std::rename(named.c_str(), target.c_str()) == 0) {
      PendingTemps::instance().forget(named);
      return;
    }
    const std::string reason = std::strerror(errno);
    remove_temp(named);
    throw Error("cannot write " + what + " " + shown + ": " + reason);
  }
  std::FILE* from = std::fopen(temp.c_str(), "rb");
  // A descriptor of this process is written as it is (at its offset, which the run's printing shares); a
  // device or FIFO is opened for writing.
  const int named = descriptor_of(target);
  const int fd = !from ? -1 : named >= 0 ? named : open_through(target, shown);
  bool ok = fd >= 0 && copy_into_descriptor(from, fd);
  if (named < 0 && fd >= 0) ok = ::close(fd) == 0 && ok;
  const std::string reason = std::strerror(errno);
  if (from) std::fclose(from);
  remove_temp(temp);
  if (!ok) throw Error("cannot write " + what + " " + shown + ": " + reason);
}

// Just before a regular file is put in place: its path still leads to the file it led to when the run began
// (a link retargeted meanwhile would send the output onto another file), and that file is still ours (one
// that appeared or changed meanwhile is not replaced).
void require_unchanged_target(const std::string& shown, const std::string& target, const std::string& what,
                              OutputMark mark) {
  if (follow_links(shown).string() != target)
    throw Error("cannot write " + shown + ": its symbolic link was changed during the run (it led to " + target +
                "): not replaced");
  require_ours(target, shown, what, mark);
}

// The regular files a batch has put in place, and how to undo it: each replaced file is first linked to
// "<target>.old-<pid>" (or .old-<pid>-N where that name is taken: nobody's file is removed for it), which is
// removed once the whole batch is in place or renamed back if a later file cannot be placed (a read-only or
// bind-mounted file, a file system gone). Destroyed before done() (an exception), it undoes.
class Rollback {
 public:
  Rollback() = default;
  Rollback(const Rollback&) = delete;
  Rollback& operator=(const Rollback&) = delete;
  ~Rollback() { undo(); }

  // Before `target` is replaced: keeps its present file, where it has one. A target whose state cannot be
  // read counts as existing (with no backup): it is never removed by undo().
  void before_replacing(const std::string& target) {
    std::error_code ec;
    const fs::file_status status = fs::symlink_status(target, ec);
    Replaced r{target, "", ec ? ec != std::errc::no_such_file_or_directory : fs::exists(status)};
    if (r.existed) {
      const std::string base = target + ".old-" + std::to_string(::getpid());
      for (int n = 0; n < 100 && r.backup.empty(); ++n) {
        const std::string backup = n == 0 ? base : base + "-" + std::to_string(n);
        if (::link(target.c_str(), backup.c_str()) == 0) r.backup = backup;
        else if (errno != EEXIST) break;  // no hard links here: the batch goes on without a backup
      }
    }
    replaced_.push_back(std::move(r));
  }
  // The last target could not be replaced after all: it is as it was.
  void not_replaced() {
    if (!replaced_.back().backup.empty()) ::unlink(replaced_.back().backup.c_str());
    replaced_.pop_back();
  }
  // Every file in place: the old ones go.
  void done() {
    for (const Replaced& r : replaced_)
      if (!r.backup.empty()) ::unlink(r.backup.c_str());
    replaced_.clear();
  }
  // Puts back what was replaced; returns the targets that could not be put back (their old file was not kept).
  std::string undo() noexcept {
    std::string lost;
    for (auto r = replaced_.rbegin(); r != replaced_.rend(); ++r) {
      if (!r->backup.empty() && std::rename(r->backup.c_str(), r->target.c_str()) == 0) continue;
      if (!r->existed && ::unlink(r->target.c_str()) == 0) continue;
      lost += (lost.empty() ? "" : ", ") + r->target;
    }
    replaced_.clear();
    return lost;
  }

 private:
  struct Replaced {
    std::string target, backup;  // backup: "" where the target had no file or could not be linked
    bool existed;
  };
  std::vector<Replaced> replaced_;
};

}  // namespace

AtomicFile::AtomicFile(std::string path, std::string what, OutputMark mark)
    : path_(std::move(path)), what_(std::move(what)), mark_(mark), target_(follow_links(path_).string()) {
  std::error_code ec;
  if (fs::is_directory(target_, ec)) throw InputError("cannot write " + path_ + ": it is a directory");
  through_ = written_through(target_);
  PendingTemps::instance().watch_signals();
  if (!through_) temp_ = unnamed_temp_in(folder_of(target_));
  if (!temp_.empty()) return;
  temp_ = through_ ? temp_name_of((fs::temp_directory_path(ec) / "amgsolve-output").string()) + "-" +
                         std::to_string(reinterpret_cast<std::uintptr_t>(this))
                   : temp_name_of(target_);
  PendingTemps::instance().remember(temp_);
}

AtomicFile::~AtomicFile() {
  if (!committed_) remove_temp(temp_);
}

void AtomicFile::commit() {
  committed_ = true;  // from here on the batch, or place(), disposes of the temporary file
  if (OutputBatch* batch = OutputBatch::current()) {
    batch->staged_.push_back({temp_, target_, path_, what_, mark_, through_});
    return;
  }
  if (!through_) {
    try {
      require_unchanged_target(path_, target_, what_, mark_);
    } catch (...) {
      remove_temp(temp_);
      throw;
    }
  }
  place(temp_, target_, through_, path_, what_);
}

OutputBatch*& OutputBatch::current() {
  static thread_local OutputBatch* batch = nullptr;
  return batch;
}

OutputBatch::OutputBatch() : outer_(current()) { current() = this; }

OutputBatch::~OutputBatch() {
  current() = outer_;
  if (!committed_)
    for (const Staged& s : staged_) remove_temp(s.temp);
}

void OutputBatch::commit() {
  committed_ = true;
  // Devices and FIFOs first: their writes can fail (a full device), cannot be undone, and may wait for a
  // reader (where Ctrl-C must still end the run). Then the renames, undone if one fails.
  std::stable_partition(staged_.begin(), staged_.end(), [](const Staged& s) { return s.through; });
  const auto remove_from = [this](std::size_t first) {
    for (std::size_t j = first; j < staged_.size(); ++j) remove_temp(staged_[j].temp);
  };
  // The regular files' targets from `first` on checked once more; if one fails, none of them is written.
  const auto require_unchanged_from = [&](std::size_t first) {
    try {
      for (std::size_t j = first; j < staged_.size(); ++j)
        if (!staged_[j].through)
          require_unchanged_target(staged_[j].shown, staged_[j].target, staged_[j].what, staged_[j].mark);
    } catch (...) {
      remove_from(first);
      throw;
    }
  };
  require_unchanged_from(0);  // before anything is written
  std::size_t i = 0;
  for (; i < staged_.size() && staged_[i].through; ++i) {
    try {
      // removes its temporary file if it fails
      place(staged_[i].temp, staged_[i].target, true, staged_[i].shown, staged_[i].what);
    } catch (...) {
      remove_from(i + 1);
      throw;
    }
  }
  const PlacingOutputs placing;  // a signal now waits until the renames are all done, or undone
  require_unchanged_from(i);  // again: writing into a FIFO may have waited long for its reader
  Rollback rollback;  // puts back what the renames replaced if anything below throws
  for (; i < staged_.size(); ++i) {
    const Staged& s = staged_[i];
    try {
      rollback.before_replacing(s.target);
      place(s.temp, s.target, false, s.shown, s.what);  // removes its temporary file if it fails
    } catch (const Error& e) {
      rollback.not_replaced();
      remove_from(i + 1);
      const std::string lost = rollback.undo();
      throw Error(std::string(e.what()) + (lost.empty() ? "; the files the run had replaced were put back"
                                                         : "; already replaced, and not put back: " + lost));
    } catch (...) {
      remove_from(i);
      throw;
    }
  }
  rollback.done();
}

namespace {

// Whether the file carries `mark`: starts with it, or holds it within its first kSignatureBytes.
bool carries_mark(const fs::path& file, OutputMark mark) {
  std::FILE* f = std::fopen(file.c_str(), "rb");
  if (!f) return false;
  std::string head(kSignatureBytes, '\0');
  head.resize(std::fread(head.data(), 1, head.size(), f));
  std::fclose(f);
  return mark.leading ? std::string_view(head).starts_with(mark.text) : head.find(mark.text) != std::string::npos;
}

// An existing regular file an output would replace must be ours: writable, and marked as our output of the
// kind (where the kind has a mark).
void require_ours(const fs::path& target, const std::string& path, const std::string& what, OutputMark mark) {
  std::error_code ec;
  const fs::file_status status = fs::status(target, ec);
  if (ec || !fs::is_regular_file(status)) return;
  // Read-only by its mode, or to this user (another's file of mode 644: the rename would replace it, and it
  // would change hands). access() alone would not do: it lets root write a file of mode 444.
  constexpr fs::perms writable = fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write;
  const bool read_only = (status.permissions() & writable) == fs::perms::none;
  if (read_only || ::access(target.c_str(), W_OK) != 0)
    throw InputError(what + " " + path + " exists and is read-only" + (read_only ? "" : " to this user") +
                     ": not replaced (make it writable, or choose another name)");
  // In a directory with the sticky bit (/tmp) only a file's owner, the directory's and root may replace it.
  struct stat file {}, folder {};
  const uid_t user = ::geteuid();
  if (user != 0 && ::stat(target.c_str(), &file) == 0 && ::stat(folder_of(target).c_str(), &folder) == 0 &&
      (folder.st_mode & S_ISVTX) != 0 && file.st_uid != user && folder.st_uid != user)
    throw InputError(what + " " + path + " belongs to another user, in a directory with the sticky bit (" +
                     folder_of(target).string() + "), so it cannot be replaced: choose another name");
  if (mark.text.empty() || fs::file_size(target, ec) == 0 || carries_mark(target, mark)) return;
  std::string shown;  // as it reads in a message: one line, a line break written \n
  for (const char c : mark.text) shown += c == '\n' ? std::string("\\n") : std::string(1, c);
  throw InputError(what + " " + path + " exists and is not an amgsolve " + what + " (it " +
                   (mark.leading ? "does not start with " : "lacks ") + "the mark " + shown +
                   " that amgsolve writes in it): not replaced (remove it, or choose another name)");
}

}  // namespace

void require_writable(const std::string& path, const std::string& what, OutputMark mark) {
  if (has_control_character(path))
    throw InputError(what + " " + printable(path) + ": a file name must not hold control characters");
  const fs::path target = follow_links(path);
  std::error_code ec;
  if (fs::is_directory(target, ec)) throw InputError(what + " " + path + " is a directory");
  if (written_through(target)) {
    if (::access(target.c_str(), W_OK) != 0)
      throw InputError(what + " " + path + " cannot be written: " + std::strerror(errno));
    return;
  }
  const fs::path dir = folder_of(target);
  if (!fs::is_directory(dir, ec)) {
    if (fs::exists(dir, ec)) throw InputError(what + " " + path + ": " + dir.string() + " is not a directory");
    // A relative path from a config file is taken from the working directory, not the config's folder: say so.
    const std::string from = fs::path(path).is_relative()
                                 ? " (a relative output path is taken from the working directory, " +
                                       fs::current_path(ec).string() + ")"
                                 : "";
    throw InputError(what + " " + path + ": directory " + dir.string() + " does not exist" + from);
  }
  // Only creating a file shows that the directory takes one (permissions, read-only mounts, /proc). The probe
  // is named as the temporary file the output is written to (AtomicFile), so that a name too long for the
  // file system is found here too; where an earlier run of the same process number left one, a name a
  // little longer.
  std::string probe = temp_name_of(target.string());
  int fd = -1;
  for (int attempt = 0; attempt < 100; ++attempt, probe += "x") {
    fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd >= 0 || errno != EEXIST) break;
  }
  if (fd < 0 && errno == ENAMETOOLONG)
    throw InputError(what + " " + printable(path) + ": the name is too long for the file system of " + dir.string());
  if (fd < 0) {
    throw InputError(what + " " + path + ": cannot create files in directory " + dir.string() + " (" +
                     std::strerror(errno) + ")");
  }
  ::close(fd);
  ::unlink(probe.c_str());
  require_ours(target, path, what, mark);
}

void require_distinct_outputs(const std::vector<std::pair<std::string, std::string>>& outputs,
                              const std::vector<std::string>& inputs) {
  // Two paths name the same file when they resolve to the same (device, inode), or, for files that do not
  // exist yet, to the same absolute path.
  const auto same_file = [](const std::string& a, const std::string& b) {
    const fs::path pa = follow_links(a), pb = follow_links(b);
    std::error_code ea, eb;
    if (fs::exists(pa, ea) && fs::exists(pb, eb)) return fs::equivalent(pa, pb, ea);
    // Absolute first: weakly_canonical leaves a path relative where none of it exists yet ("r.json"), and
    // makes it absolute where a part does ("./r.json"), so that the two spellings compared unequal.
    return fs::weakly_canonical(fs::absolute(pa, ea), ea) == fs::weakly_canonical(fs::absolute(pb, eb), eb);
  };
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const auto& [what, path] = outputs[i];
    for (const std::string& input : inputs)
      if (!input.empty() && same_file(path, input))
        throw InputError(what + " " + path + " is the input file " + input + ": it would be overwritten");
    if (written_through(follow_links(path))) continue;  // /dev/null may take several outputs
    for (std::size_t j = i + 1; j < outputs.size(); ++j)
      if (same_file(path, outputs[j].second))
        throw InputError(what + " " + path + " and " + outputs[j].first + " " + outputs[j].second +
                         " are the same file: one would overwrite the other");
  }
}

}  // namespace amgsolve
