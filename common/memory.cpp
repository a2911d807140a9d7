#include "common/memory.hpp"

#include <omp.h>
#include <sys/resource.h>

#include <algorithm>
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

// A number of bytes from a one-line file (cgroup limits and usage); 0 for "max", a missing file or no number.
std::uint64_t read_bytes_file(const std::string& path) {
  std::ifstream in(path);
  std::uint64_t bytes = 0;
  return (in >> bytes) ? bytes : 0;
}

// A "key value" line of a cgroup's memory.stat, in bytes; 0 where it is missing.
std::uint64_t stat_bytes(const std::string& file, const std::string& key) {
  std::ifstream in(file);
  std::string name;
  std::uint64_t value = 0;
  while (in >> name >> value)
    if (name == key) return value;
  return 0;
}

// What this process's memory control group still allows, or 0 for no limit: a container's limit may be
// below the machine's MemAvailable, and the kernel kills a process that passes it. Its page cache (file
// pages) counts as free, as MemAvailable counts it, or a group that has read many files would seem full.
std::uint64_t cgroup_headroom_bytes() {
  std::ifstream groups("/proc/self/cgroup");
  std::string line;
  std::string folder, limit_file, usage_file, prefix;  // v2: "0::/path"; v1: "N:...memory...:/path"
  while (std::getline(groups, line)) {
    const std::size_t colon = line.find(':'), second = line.find(':', colon + 1);
    if (colon == std::string::npos || second == std::string::npos) continue;
    const std::string controllers = line.substr(colon + 1, second - colon - 1), path = line.substr(second + 1);
    if (controllers.empty() && line.rfind("0:", 0) == 0 && folder.empty()) {
      folder = "/sys/fs/cgroup" + path, limit_file = "memory.max", usage_file = "memory.current", prefix = "";
    } else if (("," + controllers + ",").find(",memory,") != std::string::npos) {
      folder = "/sys/fs/cgroup/memory" + path, limit_file = "memory.limit_in_bytes";
      usage_file = "memory.usage_in_bytes", prefix = "total_";
    }
  }
  if (folder.empty()) return 0;
  const std::uint64_t limit = read_bytes_file(folder + "/" + limit_file);
  if (limit == 0 || limit >= (std::uint64_t{1} << 60)) return 0;  // "max", or v1's huge "no limit"
  const std::string stat = folder + "/memory.stat";
  const std::uint64_t cache = stat_bytes(stat, prefix + "inactive_file") + stat_bytes(stat, prefix + "active_file");
  const std::uint64_t usage = read_bytes_file(folder + "/" + usage_file);
  const std::uint64_t used = usage > cache ? usage - cache : 0;
  return limit > used ? limit - used : 1;
}

// What the address-space limit (ulimit -v) leaves beyond what the process maps already, or 0 for none.
// Address space is not memory: each OpenMP thread not started yet will map a stack and, where it
// allocates, a malloc arena that glibc reserves 64 MiB at a time (unless fit_arenas_to_address_limit
// bounded their number); those are set aside too (the setup of 7-point 100^3, 484 MiB resident, needed
// about 1 GB of address space on 2 threads). Threads that run already are in VmSize; the main thread has
// the main arena and stack.
constexpr std::uint64_t kThreadStack = std::uint64_t{8} << 20;
constexpr std::uint64_t kArena = std::uint64_t{64} << 20;
constexpr std::uint64_t kPerThread = kThreadStack + kArena;  // where every thread has an arena of its own
// The arenas (the main one counted) fit_arenas_to_address_limit leaves under ulimit -v; 0: glibc's own limit.
std::uint64_t arena_limit = 0;

// The address space threads [running, wanted) will map: their stacks, and the arenas they add.
std::uint64_t threads_address_space(std::uint64_t running, std::uint64_t wanted) {
  if (wanted <= running) return 0;
  if (arena_limit == 0) return kPerThread * (wanted - running);
  // The arenas mapped for `threads` threads: one each but the main thread's (the heap), up to the limit.
  const auto arenas = [](std::uint64_t threads) { return std::min(threads, arena_limit) - 1; };
  return kThreadStack * (wanted - running) + kArena * (arenas(wanted) - arenas(running));
}

std::uint64_t address_space_headroom_bytes() {
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 0;
  // (read_proc_kb reads the number in KiB: the thread count times 1024)
  const std::uint64_t running = std::max<std::uint64_t>(1, read_proc_kb("/proc/self/status", "Threads") / 1024);
  const std::uint64_t wanted = static_cast<std::uint64_t>(omp_get_max_threads());
  const std::uint64_t mapped = read_proc_kb("/proc/self/status", "VmSize") + threads_address_space(running, wanted);
  return limit.rlim_cur > mapped ? limit.rlim_cur - mapped : 1;
}

// What makes room under ulimit -v; where there are several threads, what they map is often what leaves none.
std::string address_space_remedies() {
  const int threads = omp_get_max_threads();
  if (threads <= 1) return "raise it, or choose a smaller problem";
  const auto n = static_cast<std::uint64_t>(threads);
  return "raise it, choose a smaller problem, or run fewer threads (--threads): the " + std::to_string(threads) +
         " map about " + format_bytes(threads_address_space(1, n)) + " of it";
}

// The smaller of two bounds where 0 stands for "unknown" (no bound).
std::uint64_t least_known(std::uint64_t a, std::uint64_t b) { return a == 0 ? b : b == 0 ? a : std::min(a, b); }

// What the machine has free, or what the control group allows where that is less (0: unknown).
std::uint64_t resident_headroom_bytes() {
  return least_known(read_proc_kb("/proc/meminfo", "MemAvailable"), cgroup_headroom_bytes());
}

// A run maps more address space than it keeps resident: arrays sized for an upper bound and never touched
// whole, and a heap that keep_freed_memory never trims. What the shipped configs map beyond what they had
// mapped at the check is 0.8-1.5 times their memory estimate (docs/BENCHMARKS.md, "Memory"), so under
// ulimit -v a run is let start only with this much room.
constexpr double kAddressSpacePerResidentByte = 1.5;

}  // namespace

// The least of what the machine has free, what the control group allows and what the address-space limit
// leaves: a pre-check against MemAvailable alone let a run under `ulimit -v` or in a container start the
// setup and die there (std::bad_alloc inside a parallel region not run through common/thread_errors.hpp ends
// the process).
std::uint64_t available_memory_bytes() { return least_known(resident_headroom_bytes(), address_space_headroom_bytes()); }

bool fit_arenas_to_address_limit() {
#if defined(__GLIBC__)
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return false;
  constexpr int kArenasUnderLimit = 4;  // the threads' scratch is allocated once a region: little to contend for
  if (mallopt(M_ARENA_MAX, kArenasUnderLimit) != 1) return false;
  arena_limit = kArenasUnderLimit;
  return true;
#else
  return false;
#endif
}

bool keep_freed_memory() {
#if defined(__GLIBC__)
  // mallopt returns 1 on success. No mmap()ed chunks: every block comes from the heap, whose freed
  // memory is reused; a trim threshold no heap reaches: the heap's top is never given back.
  return mallopt(M_MMAP_MAX, 0) == 1 && mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max()) == 1;
#else
  return false;
#endif
}

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

namespace {

int ranks_on_node = 1;

// 1 byte stands for none: the limit is used up already (the headroom functions above)
std::string amount(std::uint64_t available) {
  return available <= 1 ? std::string("none") : "only " + format_bytes(available);
}

// require_memory where `sharers` processes of this node each need `bytes` at once.
void require_memory_shared(std::uint64_t bytes, const std::string& what, int sharers) {
  const std::uint64_t together = saturating_bytes(static_cast<double>(bytes) * sharers);
  if (const std::uint64_t resident = resident_headroom_bytes(); resident != 0 && together > resident)
    throw MemoryLimitError(what + " needs about " + format_bytes(bytes) + " of memory" +
                           (sharers > 1 ? ", about " + format_bytes(together) + " for the " + std::to_string(sharers) +
                                              " ranks on this node together,"
                                        : "") +
                           " but " + amount(resident) +
                           " is left (the machine's free memory and the control group's limit counted)");
  const double mapped = kAddressSpacePerResidentByte * static_cast<double>(bytes);
  if (const std::uint64_t address = address_space_headroom_bytes(); address != 0 && mapped > static_cast<double>(address))
    throw MemoryLimitError(what + " needs about " + format_bytes(bytes) + " of memory, about " +
                     format_bytes(static_cast<std::uint64_t>(mapped)) + " of address space, but ulimit -v leaves " +
                     amount(address) + " (" + address_space_remedies() + ")");
}

}  // namespace

void require_memory(std::uint64_t bytes, const std::string& what) { require_memory_shared(bytes, what, 1); }

void set_ranks_on_this_node(int ranks) { ranks_on_node = std::max(1, ranks); }
int ranks_on_this_node() { return ranks_on_node; }

void require_memory_of_each_rank(std::uint64_t bytes, const std::string& what) {
  require_memory_shared(bytes, what, ranks_on_node);
}

}  // namespace amgsolve
