#include "common/environment.hpp"

#include <omp.h>

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <string>

#include "common/error.hpp"

namespace amgsolve {

std::optional<long long> integer_from_environment(const char* name, long long min, long long max) {
  const char* text = std::getenv(name);
  if (!text || !*text) return std::nullopt;
  const char* end = text + std::strlen(text);
  long long value = 0;
  const auto [stop, error] = std::from_chars(text, end, value);
  if (error != std::errc() || stop != end || value < min || value > max)
    throw InputError(std::string(name) + "='" + printable(text) + "' is not a whole number from " + std::to_string(min) +
                     " to " + std::to_string(max));
  return value;
}

namespace {

// Whether OMP_NUM_THREADS is what OpenMP reads as a thread count: whole numbers of at least 1, comma
// separated (one per nesting level), spaces around them allowed. Unset, empty or blank counts as unset.
bool valid_thread_setting(const char* text) {
  if (!text) return true;
  const std::string s = text;
  if (s.find_first_not_of(" \t") == std::string::npos) return true;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = s.find(',', start);
    std::string part = s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    part.erase(0, part.find_first_not_of(" \t"));
    part.erase(part.find_last_not_of(" \t") + 1);
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos ||
        part.find_first_not_of('0') == std::string::npos)
      return false;
    if (comma == std::string::npos) return true;
    start = comma + 1;
  }
}

}  // namespace

void require_supported_thread_count(const std::string& alternative) {
  // libgomp warns of a malformed value and runs on every core: refused here instead, as a value too large is.
  if (const char* text = std::getenv("OMP_NUM_THREADS"); !valid_thread_setting(text))
    throw InputError("OMP_NUM_THREADS='" + printable(text) + "' is not a thread count (a whole number of at least "
                     "1; set it so" + (alternative.empty() ? "" : ", or " + alternative) + ")");
  const int threads = omp_get_max_threads();  // reads the setting; starts no thread
  if (threads > kMaxThreads)
    throw InputError("OMP_NUM_THREADS asks for " + std::to_string(threads) + " threads; amgsolve runs on at most " +
                     std::to_string(kMaxThreads) + " (set it lower" + (alternative.empty() ? "" : ", or " + alternative) +
                     ")");
}

}  // namespace amgsolve
