#pragma once
// Output files appear whole or not at all, and an output never destroys what is not its own:
//   * a regular file (or a new one) is written to a temporary file without a name in the target's folder
//     (O_TMPFILE), linked in as "<target>.tmp-<pid>" and renamed over the target only by commit(): a run
//     that dies in any way leaves nothing (where the file system has no such files, the named file from the
//     start, removed by the destructor if anything throws before commit(), and by the signals below);
//   * a symbolic link is followed: the file it finally points to is the target that gets replaced;
//   * a device or a FIFO (/dev/null, /dev/full, a pipe), or one of the process's descriptors (/dev/stdout,
//     /dev/fd/N: perhaps a regular file a shell redirected, holding the run's printed lines), is written
//     through: the data goes to a temporary
//     file in the system's temporary folder and commit() copies it into the device, reporting its write
//     errors (ENOSPC on /dev/full), since renaming over it would replace the special file with a regular one;
//   * a directory is refused;
//   * a regular file that is replaced keeps its permissions.
// While an OutputBatch is open, commit() only stages the file: the batch's commit() renames them all at the
// end of a run, and a batch that ends without committing removes them all, so a run that fails while
// writing its last output leaves none of its outputs behind. If one rename fails, those done before it are
// undone (the files they replaced were kept as hard links until the batch was in place), and a signal that
// would end the run waits until the batch is in place or undone.
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/output_mark.hpp"

namespace amgsolve {

// A run that ends by SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE or SIGXFSZ (where their action was the
// default: a library user's own handlers are left alone) removes the temporary files of its unfinished
// outputs first. So can a program that
// ends abruptly otherwise (app/main.cpp's terminate handler): this is async-signal-safe.
void remove_pending_temporary_files() noexcept;

class AtomicFile {
 public:
  // what and mark: the kind of output, as require_writable takes them; the target is checked again to be
  // ours just before it is replaced (a file that appeared or changed during the run is not).
  explicit AtomicFile(std::string path, std::string what = "output file", OutputMark mark = {});
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Where to write the data (open it by this path): a temporary regular file, unnamed in the target's folder
  // (/proc/self/fd/N) or named beside it, or in the temporary folder for a device or FIFO.
  const std::string& temp_path() const { return temp_; }
  const std::string& path() const { return path_; }
  // The path for a message about writing the data: a device's or descriptor's data is staged in the
  // temporary folder first, so a full disk there is not blamed on the device ("/dev/stdout (staged in
  // /tmp/...)").
  std::string described() const { return through_ ? path_ + " (staged in " + temp_ + ")" : path_; }

  // Moves the temporary file to the target (or hands it to the open OutputBatch). Throws amgsolve::Error
  // on failure.
  void commit();

 private:
  std::string path_;    // as the user gave it (for messages)
  std::string what_;
  OutputMark mark_;
  std::string target_;  // what gets replaced: the path with its symbolic links followed
  std::string temp_;
  bool through_ = false;  // a device, FIFO or descriptor: copied into, not renamed over
  bool committed_ = false;
};

// The outputs of one run, committed together (see above). Batches nest: the innermost one stages.
class OutputBatch {
 public:
  OutputBatch();
  ~OutputBatch();
  OutputBatch(const OutputBatch&) = delete;
  OutputBatch& operator=(const OutputBatch&) = delete;

  // Renames every staged file onto its target. Throws amgsolve::Error if one fails (the rest are removed).
  void commit();

 private:
  friend class AtomicFile;
  static OutputBatch*& current();
  struct Staged {
    std::string temp, target, shown;  // shown: the path as the user gave it
    std::string what;
    OutputMark mark;
    bool through;
  };
  std::vector<Staged> staged_;
  OutputBatch* outer_;
  bool committed_ = false;
};

// Throws InputError if `path` cannot be written: a missing directory, a directory that takes no new file
// (no permission, a read-only file system, /proc), a directory as the path, a device that is not writable;
// or if it would replace a file that is not ours: a read-only one, or (with a `mark`) a non-empty file
// without it. Called before long computations so that a bad output path fails in a second, not after the
// solve.
void require_writable(const std::string& path, const std::string& what, OutputMark mark = {});

// Throws InputError if two of `outputs` ((what, path) pairs) are the same file, or one of them is one of
// `inputs` (the files the run reads). Devices such as /dev/null may be given to several outputs.
void require_distinct_outputs(const std::vector<std::pair<std::string, std::string>>& outputs,
                              const std::vector<std::string>& inputs);

}  // namespace amgsolve
