#pragma once
// The benchmarks' command lines read as amgsolve's: a bad argument is one line, `program: error: ...
// (see --help)`, and exit 1 (CLI11 alone prints two lines and exits with its own codes); --help prints its
// text and exits 0.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <optional>

namespace amgsolve {

// std::nullopt when the arguments were read (go on), else the status to exit with. `prints`: whether this
// process says anything (under mpirun rank 0 alone does).
inline std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv, const char* program,
                                             bool prints = true) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help
    return prints ? app.exit(e) : 0;
  } catch (const CLI::ParseError& e) {
    if (prints) std::fprintf(stderr, "%s: error: %s (see --help)\n", program, e.what());
    return 1;
  }
  return std::nullopt;
}

}  // namespace amgsolve
