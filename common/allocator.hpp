#pragma once
// Allocator for the large arrays of sparse matrices and vectors.
//
// std::vector value-initialises on resize(n): for the hundreds of megabytes of an AMG setup that is a
// serial memset over memory that is overwritten right after, and it takes the page faults of fresh
// memory on one thread. This allocator default-initialises instead, so resize(n) leaves trivial
// elements uninitialised (write before you read, or use assign / the fill constructor), and the first
// touch happens in the parallel loops that fill the arrays, by all threads (populating the memory up
// front was slower: docs/BENCHMARKS.md).
// Blocks are 64-byte aligned (cache lines, AVX-512 vectors), by hand: each comes from plain malloc with
// room to align it, and the malloc'd address is kept just below the aligned one. With aligned operator
// new, glibc 2.36 (Debian 12) asked for each block plus its alignment and left the small pieces it cut
// off around the block in its caches, which kept freed blocks from merging: with freed memory kept
// (keep_freed_memory) a product's columns and values, allocated again, no longer fitted the space the
// last ones left, took fresh pages and grew the heap on every repetition (tests/test_sparse.cpp,
// RepeatedArrayPairsReuseTheirPages). Plain malloc also costs small blocks less.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <new>
#include <utility>
#include <vector>

namespace amgsolve {

inline constexpr std::size_t kArrayAlignment = 64;

// `bytes` from malloc, kArrayAlignment-aligned; release with free_aligned_block.
inline void* allocate_aligned_block(std::size_t bytes) {
  constexpr std::size_t kRoom = kArrayAlignment + sizeof(void*);
  if (bytes > std::numeric_limits<std::size_t>::max() - kRoom) throw std::bad_array_new_length();
  void* raw = std::malloc(bytes + kRoom);
  if (raw == nullptr) throw std::bad_alloc();
  const std::uintptr_t aligned =
      (reinterpret_cast<std::uintptr_t>(raw) + kRoom - 1) & ~std::uintptr_t{kArrayAlignment - 1};
  reinterpret_cast<void**>(aligned)[-1] = raw;
  return reinterpret_cast<void*>(aligned);
}
inline void free_aligned_block(void* block) noexcept {
  if (block != nullptr) std::free(static_cast<void**>(block)[-1]);
}

template <class T>
struct LargeArrayAllocator {
  using value_type = T;
  static_assert(alignof(T) <= kArrayAlignment);
  LargeArrayAllocator() noexcept = default;
  template <class U>
  LargeArrayAllocator(const LargeArrayAllocator<U>&) noexcept {}
  T* allocate(std::size_t n) {
    if (n > std::numeric_limits<std::size_t>::max() / sizeof(T)) throw std::bad_array_new_length();
    return static_cast<T*>(allocate_aligned_block(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t) noexcept { free_aligned_block(p); }
  // Default-initialisation for resize(n); anything with arguments is constructed as usual.
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    if constexpr (sizeof...(Args) == 0)
      ::new (static_cast<void*>(p)) U;
    else
      ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }

  template <class U>
  bool operator==(const LargeArrayAllocator<U>&) const noexcept {
    return true;
  }
};

// The array type of every large buffer in amgsolve.
template <class T>
using Array = std::vector<T, LargeArrayAllocator<T>>;

}  // namespace amgsolve
