#pragma once
// `rmerge-cpu` with a chosen merge width W (rmerge_cpu.cpp). The registered instance takes W from the
// environment variable AMGSOLVE_RMERGE_CPU_WIDTH, else kDefaultRMergeCpuWidth; tests and programs that
// want several widths in one process build their own instances here.
#include <memory>

#include "spgemm/spgemm.hpp"

namespace amgsolve {

inline constexpr Index kDefaultRMergeCpuWidth = 32;
inline constexpr Index kLeastRMergeCpuWidth = 2;  // W = 1 would never shorten a row
inline constexpr Index kMostRMergeCpuWidth = 65536;
inline constexpr const char* kRMergeCpuWidthVariable = "AMGSOLVE_RMERGE_CPU_WIDTH";

// Throws InputError when W is outside [kLeastRMergeCpuWidth, kMostRMergeCpuWidth].
std::unique_ptr<SpgemmBackend> make_rmerge_cpu(Index merge_width);

}  // namespace amgsolve
