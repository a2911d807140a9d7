#include "common/memory.hpp"

#include <cstdio>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <fstream>
#include <limits>
#include <sstream>

#include "common/error.hpp"

namespace amgsolve {
namespace {

// Reads "Key:   123 kB" from a /proc file; returns bytes or 0.
std::uint64_t read_proc_kb(const char* file, const std::string& key) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) == 0) {
      std::istringstream fields(line.substr(key.size() + 1));
      std::uint64_t kb = 0;
      fields >> kb;
      return kb * 1024;
    }
  }
  return 0;
}

}  // namespace

bool keep_freed_memory() {
#if defined(__GLIBC__)
  // mallopt returns 1 on success. No mmap()ed chunks: every block comes from the heap, whose freed
  // memory is reused; a trim threshold no heap reaches: the heap's top is never given back.
  return mallopt(M_MMAP_MAX, 0) == 1 && mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max()) == 1;
#else
  return false;
#endif
}

std::uint64_t available_memory_bytes() { return read_proc_kb("/proc/meminfo", "MemAvailable"); }

std::uint64_t peak_resident_bytes() { return read_proc_kb("/proc/self/status", "VmHWM"); }

std::string format_bytes(std::uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 4) {
    v /= 1024.0;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.2f %s", v, units[u]);
  return buf;
}

void require_memory(std::uint64_t bytes, const std::string& what) {
  const std::uint64_t available = available_memory_bytes();
  if (available != 0 && bytes > available) {
    throw InputError(what + " needs about " + format_bytes(bytes) + " but only " + format_bytes(available) +
                     " of memory is available");
  }
}

}  // namespace amgsolve
