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
    throw InputError(std::string(name) + "='" + text + "' is not a whole number from " + std::to_string(min) +
                     " to " + std::to_string(max));
  return value;
}

void require_supported_thread_count(const std::string& alternative) {
  const int threads = omp_get_max_threads();  // reads the setting; starts no thread
  if (threads > kMaxThreads)
    throw InputError("OMP_NUM_THREADS asks for " + std::to_string(threads) + " threads; amgsolve runs on at most " +
                     std::to_string(kMaxThreads) + " (set it lower" + (alternative.empty() ? "" : ", or " + alternative) +
                     ")");
}

}  // namespace amgsolve
