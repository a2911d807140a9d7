#pragma once
// Memory accounting: what the machine has, and what this process used at its peak. Problems estimate
// their footprint before allocating and refuse with a message when it would not fit.
#include <cstdint>
#include <string>

namespace amgsolve {

// Bytes the OS says can be allocated without swapping (MemAvailable), or 0 if unknown.
std::uint64_t available_memory_bytes();

// Peak resident set size of this process so far (VmHWM), or 0 if unknown.
std::uint64_t peak_resident_bytes();

// "1.23 GiB", "512 MiB", ...
std::string format_bytes(std::uint64_t bytes);

// Throws InputError naming `what` if `bytes` exceeds the available memory.
void require_memory(std::uint64_t bytes, const std::string& what);

}  // namespace amgsolve
