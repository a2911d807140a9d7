#pragma once
// Output files appear whole or not at all: data is written to "<path>.tmp-<pid>" and renamed over
// <path> only by commit(). If anything throws before that, the destructor removes the temporary file,
// so a failed run never leaves a half-written report, matrix or VTK file behind.
#include <string>

namespace amgsolve {

class AtomicFile {
 public:
  explicit AtomicFile(std::string path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Where to write the data (a temporary name in the same directory as the target).
  const std::string& temp_path() const { return temp_; }
  const std::string& path() const { return path_; }

  // Atomically moves the temporary file to the target path. Throws amgsolve::Error on failure.
  void commit();

 private:
  std::string path_;
  std::string temp_;
  bool committed_ = false;
};

// Throws InputError if `path` cannot be created (missing directory, no permission). Called before long
// computations so that a typo in an output path fails in a second, not after the solve.
void require_writable(const std::string& path, const std::string& what);

}  // namespace amgsolve
