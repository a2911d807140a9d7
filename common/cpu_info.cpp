#include "common/cpu_info.hpp"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <algorithm>
#include <limits>
#include <string>

#include "common/environment.hpp"
#include "common/error.hpp"

namespace amgsolve {
namespace {

// A positive whole number of bytes from the variable, else 0 (unset, or not such a number: "2M", "-1" and
// "1e6" are ignored rather than misread; a cache size falls back to the system's instead of failing).
std::size_t from_environment(const char* name) {
  try {
    return static_cast<std::size_t>(
        integer_from_environment(name, 1, std::numeric_limits<long long>::max()).value_or(0));
  } catch (const InputError&) {
    return 0;
  }
}

// "2048K" / "64" / "1M" from a sysfs cache attribute, in bytes; 0 if absent.
std::size_t from_sysfs(const std::string& path) {
  std::ifstream in(path);
  std::string text;
  if (!(in >> text) || text.empty()) return 0;
  std::size_t scale = 1;
  if (text.back() == 'K') scale = 1024;
  if (text.back() == 'M') scale = 1024 * 1024;
  return static_cast<std::size_t>(std::strtoull(text.c_str(), nullptr, 10)) * scale;
}

std::size_t first_of(std::size_t a, std::size_t b, std::size_t c, std::size_t fallback) {
  return a ? a : b ? b : c ? c : fallback;
}

}  // namespace

std::size_t l2_cache_bytes() {
  static const std::size_t bytes =
      first_of(from_environment("AMGSOLVE_L2_BYTES"), from_sysfs("/sys/devices/system/cpu/cpu0/cache/index2/size"),
               static_cast<std::size_t>(std::max(0L, sysconf(_SC_LEVEL2_CACHE_SIZE))), std::size_t{1} << 20);
  return bytes;
}

std::size_t last_level_cache_bytes() {
  static const std::size_t bytes = [] {
    // The largest data or unified cache sysfs lists, or sysconf's L3 where sysfs lists less.
    std::size_t largest = static_cast<std::size_t>(std::max(0L, sysconf(_SC_LEVEL3_CACHE_SIZE)));
    for (int index = 0; index < 8; ++index) {
      std::string cache = "/sys/devices/system/cpu/cpu0/cache/index";
      cache += std::to_string(index);  // (literal + to_string: GCC 12's -Warray-bounds false alarm at -O3)
      std::ifstream type(cache + "/type");
      std::string kind;
      if (!(type >> kind)) break;
      if (kind != "Instruction") largest = std::max(largest, from_sysfs(cache + "/size"));
    }
    return first_of(from_environment("AMGSOLVE_LLC_BYTES"), largest, 0, std::size_t{32} << 20);
  }();
  return bytes;
}

std::size_t cache_line_bytes() {
  static const std::size_t bytes = first_of(
      from_environment("AMGSOLVE_CACHE_LINE_BYTES"),
      from_sysfs("/sys/devices/system/cpu/cpu0/cache/index0/coherency_line_size"),
      static_cast<std::size_t>(std::max(0L, sysconf(_SC_LEVEL1_DCACHE_LINESIZE))), 64);
  return bytes;
}

#if defined(__x86_64__)
bool cpu_has_avx2() { return __builtin_cpu_supports("avx2"); }
bool cpu_has_avx512f() { return __builtin_cpu_supports("avx512f"); }
bool cpu_has_avx512bw() { return __builtin_cpu_supports("avx512bw"); }
#else
bool cpu_has_avx2() { return false; }
bool cpu_has_avx512f() { return false; }
bool cpu_has_avx512bw() { return false; }
#endif

}  // namespace amgsolve
