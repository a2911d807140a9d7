#pragma once
// Allocator for the large arrays of sparse matrices and vectors.
//
// Two costs dominate naive std::vector use at the sizes AMG works with (hundreds of MB per level):
//  * first-touch page faults, one per 4 KiB page, which on virtual machines cost microseconds each
//    (measured here: 1 GiB touched page by page 1-3 s, populated in one madvise call about 0.5 s);
//  * value-initialisation: resize() zero-fills memory that is overwritten right after.
// Blocks of at least kLargeBlock bytes are therefore mmap'ed and populated with MADV_POPULATE_WRITE,
// and construct() default-initialises, so resize(n) leaves trivial elements uninitialised (write before
// you read, or use assign / the fill constructor).
#include <cstddef>
#include <new>
#include <utility>
#include <vector>

namespace amgsolve {

inline constexpr std::size_t kLargeBlock = std::size_t{4} << 20;

void* allocate_large(std::size_t bytes);            // throws std::bad_alloc
void deallocate_large(void* p, std::size_t bytes) noexcept;

template <class T>
struct LargeArrayAllocator {
  using value_type = T;

  LargeArrayAllocator() noexcept = default;
  template <class U>
  LargeArrayAllocator(const LargeArrayAllocator<U>&) noexcept {}

  T* allocate(std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    if (bytes >= kLargeBlock) return static_cast<T*>(allocate_large(bytes));
    return static_cast<T*>(::operator new(bytes, std::align_val_t{alignof(T) > 64 ? alignof(T) : 64}));
  }
  void deallocate(T* p, std::size_t n) noexcept {
    const std::size_t bytes = n * sizeof(T);
    if (bytes >= kLargeBlock)
      deallocate_large(p, bytes);
    else
      ::operator delete(p, std::align_val_t{alignof(T) > 64 ? alignof(T) : 64});
  }

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
