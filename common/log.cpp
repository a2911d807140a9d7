#include "common/log.hpp"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace amgsolve {
namespace {
std::atomic<bool> quiet_flag{false};
std::atomic<int> first_write_error{0};  // errno of the first progress line that could not be written
}

void set_quiet(bool quiet) { quiet_flag = quiet; }
bool is_quiet() { return quiet_flag; }

void progress(const char* format, ...) {
  if (quiet_flag) return;
  va_list args;
  va_start(args, format);
  std::vprintf(format, args);
  va_end(args);
  if (std::fflush(stdout) != 0) {
    int none = 0;
    first_write_error.compare_exchange_strong(none, errno);
  }
}

int with_standard_output_written(int status, const char* program) {
  errno = 0;
  if (std::fflush(stdout) == 0 && !std::ferror(stdout)) return status;
  // A write that failed earlier left the stream's flag, and its errno with the progress line it failed on.
  const int error = errno != 0 ? errno : first_write_error != 0 ? first_write_error.load() : EIO;
  std::fprintf(stderr, "%s: error: cannot write the standard output (%s)\n", program, std::strerror(error));
  return status == 0 ? 1 : status;
}

}  // namespace amgsolve
