#include "common/log.hpp"

#include <atomic>
#include <cstdio>

namespace amgsolve {
namespace {
std::atomic<bool> quiet_flag{false};
}

void set_quiet(bool quiet) { quiet_flag = quiet; }
bool is_quiet() { return quiet_flag; }

void progress(const char* format, ...) {
  if (quiet_flag) return;
  va_list args;
  va_start(args, format);
  std::vprintf(format, args);
  va_end(args);
  std::fflush(stdout);
}

}  // namespace amgsolve
