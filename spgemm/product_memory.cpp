#include "spgemm/product_memory.hpp"

#include "common/memory.hpp"

namespace amgsolve {

void require_product_memory(std::uint64_t bytes, const std::string& what) {
  if (bytes > kUncheckedProductBytes) require_memory(bytes, what);
}

}  // namespace amgsolve
