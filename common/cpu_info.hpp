#pragma once
// Cache geometry of the CPU, for kernels that size their working sets to the cache (SpGEMM accumulator
// choice, MAGNUS chunking), and the instruction sets of the kernels chosen at run time. Read from sysfs, then sysconf; AMGSOLVE_L2_BYTES and AMGSOLVE_CACHE_LINE_BYTES
// override both (tests use tiny values to exercise the large-input code paths on small inputs).
#include <cstddef>

namespace amgsolve {

std::size_t l2_cache_bytes();    // per core; 1 MiB if nothing can be read
std::size_t cache_line_bytes();  // 64 if nothing can be read
// The last (largest) cache level, shared by the cores; AMGSOLVE_LLC_BYTES overrides (a positive byte
// count). 32 MiB if nothing can be read.
std::size_t last_level_cache_bytes();

// Whether this CPU runs AVX2, AVX-512F, AVX-512BW (false on other architectures than x86-64).
bool cpu_has_avx2();
bool cpu_has_avx512f();
bool cpu_has_avx512bw();

}  // namespace amgsolve
