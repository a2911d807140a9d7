#include "common/allocator.hpp"

#include <sys/mman.h>

#include <cerrno>
#include <cstdint>

namespace amgsolve {
namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;

std::size_t round_up(std::size_t bytes, std::size_t to) { return (bytes + to - 1) / to * to; }

}  // namespace

void* allocate_large(std::size_t bytes) {
  const std::size_t size = round_up(bytes, kHugePage);
  // Over-allocate by 2 MiB so the block starts on a huge-page boundary (the kernel may then use THP).
  void* raw = ::mmap(nullptr, size + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const auto start = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t aligned = round_up(start, kHugePage);
  if (aligned > start) ::munmap(raw, aligned - start);
  const std::uintptr_t end = aligned + size;
  const std::uintptr_t raw_end = start + size + kHugePage;
  if (raw_end > end) ::munmap(reinterpret_cast<void*>(end), raw_end - end);
  void* p = reinterpret_cast<void*>(aligned);
  // No MADV_HUGEPAGE: on the virtual machines measured here (THP in madvise mode) it made setup slower
  // (more system time in compaction), while populating in one call did not hurt.
#ifdef MADV_POPULATE_WRITE
  // Fault everything in with one call (Linux >= 5.14). ENOMEM here is out of memory now, as a
  // bad_alloc the program can report, rather than a kill at some later first touch.
  if (::madvise(p, size, MADV_POPULATE_WRITE) != 0 && errno == ENOMEM) {
    ::munmap(p, size);
    throw std::bad_alloc();
  }
#endif
  return p;
}

void deallocate_large(void* p, std::size_t bytes) noexcept { ::munmap(p, round_up(bytes, kHugePage)); }

}  // namespace amgsolve
