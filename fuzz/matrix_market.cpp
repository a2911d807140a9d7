// libFuzzer target: the Matrix Market reader (sparse/matrix_market.hpp) on arbitrary text, as a matrix (pattern
// files rejected and read as ones) and as a vector. A malformed file must be an InputError naming its line,
// never a crash, a hang or a sanitizer report.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/error.hpp"
#include "sparse/matrix_market.hpp"

namespace {

// The reader allocates what the size line announces (rows + 1 offsets, a vector of rows), which is the
// file's right; the fuzzer's inputs are kept to sizes that fit its memory limit.
bool announces_a_small_size(std::string_view text) {
  try {
    const amgsolve::MatrixMarketHeader h = amgsolve::parse_matrix_market_header(text, "fuzz.mtx");
    return h.rows <= 1'000'000 && h.cols <= 1'000'000;
  } catch (const amgsolve::Error&) {
    return true;  // the readers fail at the same place
  }
}

template <class Read>
void read(Read&& read_it) {
  try {
    read_it();
  } catch (const amgsolve::InputError&) {
    // the expected answer to a malformed file
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (!announces_a_small_size(text)) return -1;  // not added to the corpus
  read([&] { (void)amgsolve::parse_matrix_market(text, "fuzz.mtx"); });
  read([&] { (void)amgsolve::parse_matrix_market(text, "fuzz.mtx", amgsolve::PatternValues::ones); });
  read([&] { (void)amgsolve::parse_matrix_market_vector(text, "fuzz.mtx"); });
  return 0;
}
