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

// Keeps memory this process frees for its own next allocations instead of returning it to the OS:
// glibc's malloc then serves large blocks from its heap rather than from fresh mmap()s and no longer
// trims the heap's top (the mallopt settings MPI libraries make for the same reason). An AMG setup
// frees and allocates hundreds of megabytes of temporaries; fresh memory costs a page fault per 4 KiB
// on first touch, which on this project's VMs is about 2 us a page (the setup's gain: docs/BENCHMARKS.md).
// The price: the resident size does not drop after a phase frees its memory. Call it first thing in main(); false where it is not available
// (other C libraries), which changes only speed.
bool keep_freed_memory();
// Under an address-space limit (ulimit -v, common on clusters), glibc's malloc gives each thread an arena of
// 64 MiB of address space: 64 threads would take 4 GiB of the limit before any work. This bounds the arenas
// to a few, shared by the threads, where such a limit is set, and counts them so in the memory pre-checks
// (available_memory_bytes). Call it first thing in main(), before threads start; false where no limit is set
// or the C library has no such setting.
bool fit_arenas_to_address_limit();

// Throws MemoryLimitError (an InputError) naming `what` if `bytes` exceeds the available memory.
void require_memory(std::uint64_t bytes, const std::string& what);

// The MPI ranks on this node, which draw on its free memory at the same time (1 for one process): set by the
// program once MPI has started.
void set_ranks_on_this_node(int ranks);
int ranks_on_this_node();
// As require_memory, for `bytes` that each rank on this node needs at once (its share of a distributed
// problem): the node's free memory must hold that many times `bytes`, or N ranks that each pass their own
// check run the node out of memory together (the kernel then kills one, and no message says why). The
// address-space limit (ulimit -v) is each process's own: `bytes` is counted once there.
void require_memory_of_each_rank(std::uint64_t bytes, const std::string& what);

// An estimate of bytes made in double (where sizes multiply past 2^64) as a byte count: the largest one
// where it is beyond (no machine has that much: require_memory then refuses it).
inline std::uint64_t saturating_bytes(double bytes) {
  return !(bytes < 1.8e19) ? std::uint64_t(-1) : bytes > 0 ? static_cast<std::uint64_t>(bytes) : 0;  // NaN: beyond
}

}  // namespace amgsolve
