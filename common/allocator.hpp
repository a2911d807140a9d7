#pragma once
// Allocator for the large arrays of sparse matrices and vectors.
//
// std::vector value-initialises on resize(n): for the hundreds of megabytes of an AMG setup that is a
// serial memset over memory that is overwritten right after, and it takes the page faults of fresh
// memory on one thread. This allocator default-initialises instead, so resize(n) leaves trivial
// elements uninitialised (write before you read, or use assign / the fill constructor), and the first
// touch happens in the parallel loops that fill the arrays. Measured on 7-point Poisson 128^3 with
// 2 threads: Gustavson A*A symbolic + numeric 0.4-1.2 s this way against 0.5-2.9 s with the memory
// populated up front (MADV_POPULATE_WRITE), 3 runs each on a noisy virtual machine.
// Blocks are 64-byte aligned (cache lines, AVX-512 vectors).
#include <cstddef>
#include <new>
#include <utility>
#include <vector>

namespace amgsolve {

template <class T>
struct LargeArrayAllocator {
  using value_type = T;
  static constexpr std::align_val_t alignment{alignof(T) > 64 ? alignof(T) : 64};

  LargeArrayAllocator() noexcept = default;
  template <class U>
  LargeArrayAllocator(const LargeArrayAllocator<U>&) noexcept {}

  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), alignment)); }
  void deallocate(T* p, std::size_t) noexcept { ::operator delete(p, alignment); }

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
