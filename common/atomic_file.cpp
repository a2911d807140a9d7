#include "common/atomic_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "common/error.hpp"

namespace amgsolve {

AtomicFile::AtomicFile(std::string path)
    : path_(std::move(path)), temp_(path_ + ".tmp-" + std::to_string(::getpid())) {}

AtomicFile::~AtomicFile() {
  if (!committed_) std::remove(temp_.c_str());
}

void AtomicFile::commit() {
  if (std::rename(temp_.c_str(), path_.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    std::remove(temp_.c_str());
    throw Error("cannot write " + path_ + ": " + reason);
  }
  committed_ = true;
}

void require_writable(const std::string& path, const std::string& what) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw InputError(what + " " + path + ": directory " + dir.string() + " does not exist");
  }
  if (fs::is_directory(target, ec)) throw InputError(what + " " + path + " is a directory");
  if (::access(dir.c_str(), W_OK) != 0) {
    throw InputError(what + " " + path + ": directory " + dir.string() + " is not writable");
  }
}

}  // namespace amgsolve
