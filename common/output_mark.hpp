#pragma once
#include <cstddef>
#include <string_view>

namespace amgsolve {

// What marks a file as amgsolve's output of a kind: `text` at the very start of the file (`leading`: a
// report's first key, a CSV's header), or anywhere within its first kSignatureBytes (a field named so).
struct OutputMark {
  std::string_view text;
  bool leading = false;
};
inline constexpr std::size_t kSignatureBytes = 4096;

}  // namespace amgsolve
