#pragma once
// The execution axis: which backend the setup and the solve run on. It is chosen once, by resolve_backend(),
// from the `backend` key of a config (or the library's parameters); gpu_status() is the only place that
// asks which devices exist. Algorithm code is written over a backend and never probes the hardware.
#include <cstdint>
#include <string>

#include "common/enum_names.hpp"

namespace amgsolve {

struct GpuStatus {
  bool built_with_cuda = false;  // compiled with nvcc (AMGSOLVE_CUDA)
  int device_count = 0;          // CUDA devices visible at run time
  std::string name;              // first device's name, when there is one
  std::string unavailable_reason;  // why no GPU can be used (empty when one can)
  bool usable() const { return device_count > 0; }
};

// Queried once per process, then remembered.
GpuStatus gpu_status();

// Throws amgsolve::Error naming `what` and the reason when no GPU can be used.
void require_gpu(const std::string& what);

// Host <-> device traffic of a backend since it was made (the cpu backend's is zero): bytes each way and the
// number of copies.
struct TransferCounts {
  std::uint64_t to_device = 0, to_host = 0;
  std::uint64_t messages = 0;
  TransferCounts operator-(const TransferCounts& before) const {
    return {to_device - before.to_device, to_host - before.to_host, messages - before.messages};
  }
};

// What a run over MPI ranks has communicated on one rank (distributed/communicator.hpp counts it; zero on
// one process).
struct CommunicationStats {
  std::uint64_t halo_bytes = 0, halo_messages = 0;  // halo exchanges: sent by this rank
  std::uint64_t reductions = 0;                     // global sums
  std::uint64_t gathered_bytes = 0;                 // whole vectors gathered (the coarsest solve, the result)
  double halo_wait_seconds = 0, reduction_seconds = 0, gather_seconds = 0;
  CommunicationStats operator+(const CommunicationStats& b) const {
    return {halo_bytes + b.halo_bytes, halo_messages + b.halo_messages, reductions + b.reductions,
            gathered_bytes + b.gathered_bytes, halo_wait_seconds + b.halo_wait_seconds,
            reduction_seconds + b.reduction_seconds, gather_seconds + b.gather_seconds};
  }
  CommunicationStats operator-(const CommunicationStats& b) const {
    return {halo_bytes - b.halo_bytes, halo_messages - b.halo_messages, reductions - b.reductions,
            gathered_bytes - b.gathered_bytes, halo_wait_seconds - b.halo_wait_seconds,
            reduction_seconds - b.reduction_seconds, gather_seconds - b.gather_seconds};
  }
};

// How a distributed product meets its halo exchange (Kreutzer et al. 2011, section 5; solver.halo_exchange):
// naive overlap computes the rows that read no ghost while the messages travel; vector mode waits for them
// first, then computes every row; task mode gives the communication a thread of its own, which waits for
// the messages (driving MPI's progress) while the other threads compute those rows, then joins them. Every
// mode computes each row as the others do, so their products are the same bit for bit.
enum class HaloMode { overlap, vector, task };
inline constexpr EnumName<HaloMode> kHaloModeNames[] = {
    {"overlap", HaloMode::overlap}, {"vector", HaloMode::vector}, {"task", HaloMode::task}};
constexpr const auto& names_of(HaloMode) { return kHaloModeNames; }
inline const char* to_string(HaloMode mode) { return name_of(mode); }  // the solver.halo_exchange key's value

// The order a Gauss-Seidel sweep takes a block's rows in (amg/gauss_seidel.hpp: a step is one of each).
enum class SweepDirection { forward, backward };

// Where a backend runs: OpenMP threads on the CPU, or a CUDA GPU. (Many ranks will be a layer over either.)
enum class BackendKind { cpu, cuda };
// What a user asks for: one of them, or `auto`: cuda when a GPU can be used, else cpu.
enum class BackendChoice { cpu, cuda, automatic };
inline constexpr EnumName<BackendChoice> kBackendChoiceNames[] = {
    {"cpu", BackendChoice::cpu}, {"cuda", BackendChoice::cuda}, {"auto", BackendChoice::automatic}};
constexpr const auto& names_of(BackendChoice) { return kBackendChoiceNames; }

// The one resolution of the choice. cuda without a usable GPU throws InputError with gpu_status()'s reason,
// so a run asked to use a GPU fails at once rather than after minutes of setup.
BackendKind resolve_backend(BackendChoice choice);
// The choice a setup resolves, from the user's: `auto` is the cpu where the setup asks for what only the
// cpu backend runs (cpu_only: a system's setup, Gauss-Seidel's sweeps) or runs on several MPI ranks (each
// rank's CPU cores set up, and `auto` is the cpu on every rank alike, whether or not it sees a GPU). The
// program's schema and the library's Solver both resolve through it.
inline BackendChoice setup_choice(BackendChoice choice, bool cpu_only, bool on_ranks) {
  return (cpu_only || on_ranks) && choice == BackendChoice::automatic ? BackendChoice::cpu : choice;
}
const char* to_string(BackendKind kind);
inline const char* to_string(BackendChoice choice) { return name_of(choice); }

}  // namespace amgsolve
