#pragma once
// Integer settings read from environment variables (algorithm parameters of registered backends, which
// are built once per process, before any configuration is read).
#include <optional>
#include <string>

namespace amgsolve {

// The value of the variable `name`: nullopt when it is unset or empty; InputError naming the variable,
// its text and the allowed range when it is not a whole decimal integer in [min, max].
std::optional<long long> integer_from_environment(const char* name, long long min, long long max);

// The most OpenMP threads amgsolve runs on (--threads' bound): far more only fail inside the OpenMP runtime
// (OMP_NUM_THREADS=100000 crashes it at the first parallel region).
inline constexpr int kMaxThreads = 4096;

// Throws InputError when OpenMP would start more than kMaxThreads threads (OMP_NUM_THREADS): called before
// the first parallel region. `alternative`: another way to give the count, for the message ("" if none).
void require_supported_thread_count(const std::string& alternative = "");

}  // namespace amgsolve
