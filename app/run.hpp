#pragma once
// The amgsolve application: config -> problem -> hierarchy -> solve -> report/VTK, with the progress
// output a person watches. main.cpp only parses the command line.
#include <optional>
#include <string>
#include <vector>

namespace amgsolve {

struct RunOptions {
  std::string config;
  std::vector<std::string> overrides;  // --set key.path=value
  std::optional<std::string> report;   // --report (overrides output.report; '' writes none)
  std::optional<std::string> vtk;      // --vtk (overrides output.vtk; '' writes none)
  int threads = 0;                     // --threads (0: OpenMP default)
  bool compare_spgemm = false;         // --compare-spgemm (same as amg.compare_spgemm: true)
  bool quiet = false;
};

// Exit codes of the program.
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;          // bad input or numerical failure (message on stderr)
inline constexpr int kExitNotConverged = 3;   // ran, but did not reach the tolerance

int run(const RunOptions& options);

// --list-backends: one line per registered SpGEMM backend with its device and availability.
void print_backends();

}  // namespace amgsolve
