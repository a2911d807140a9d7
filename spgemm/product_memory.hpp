#pragma once
// The memory a product needs, checked before it is allocated. An allocation that fails inside an OpenMP
// region surfaces at best as a bare std::bad_alloc after it (common/thread_errors.hpp), which names nothing; one
// that succeeds under overcommit is killed when the threads touch its pages. So the product's arrays, once the
// symbolic pass knows their size, and a backend's per-thread workspaces are checked against the memory left
// first (common/memory.hpp), and a product that cannot fit gets a one-line error naming it.
#include <cstdint>
#include <string>

#include "common/memory.hpp"
#include "common/parallel.hpp"
#include "sparse/csr.hpp"

namespace amgsolve {

// Below this, an allocation is not worth reading /proc for: it is the size of a few pages of a product.
inline constexpr std::uint64_t kUncheckedProductBytes = std::uint64_t{64} << 20;

// Throws MemoryLimitError naming what describe() says (e.g. "gustavson's dense accumulators") if `bytes` do
// not fit; below kUncheckedProductBytes neither the check nor the description is made (small products are
// microseconds long).
template <class Describe>
void require_product_memory(std::uint64_t bytes, Describe&& describe) {
  if (bytes > kUncheckedProductBytes) require_memory(bytes, describe());
}

// Checks that one array per thread (max_threads() of them) of `length` entries, `bytes_per_entry` each, fits:
// the dense accumulators and markers that span a product's columns. The error names them as
// "what (threads of length unit)".
inline void require_thread_arrays(std::uint64_t length, std::uint64_t bytes_per_entry, const std::string& what,
                                  const char* unit) {
  const auto threads = static_cast<std::uint64_t>(max_threads());
  require_product_memory(threads * length * bytes_per_entry, [&] {
    return what + " (" + std::to_string(threads) + " of " + std::to_string(length) + " " + unit + ")";
  });
}

// Row lengths to offsets (offsets_from_row_lengths), then C's arrays sized for its entries, after checking
// that they fit; `backend` names the product's backend in the error.
template <class Value>
void allocate_product(CsrMatrix<Value>& C, const char* backend) {
  offsets_from_row_lengths(C);
  const auto entries = static_cast<std::uint64_t>(C.nnz());
  require_product_memory(entries * (sizeof(Index) + sizeof(Value)), [&] {
    return std::string(backend) + "'s product (" + std::to_string(C.rows) + " x " + std::to_string(C.cols) + ", " +
           std::to_string(entries) + " nonzeros)";
  });
  C.col.resize(static_cast<std::size_t>(entries));
  C.val.resize(static_cast<std::size_t>(entries));
}

}  // namespace amgsolve
