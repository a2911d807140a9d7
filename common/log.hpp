#pragma once
// Progress output for people watching a run. Everything goes through one switch so --quiet silences
// the level table and the iteration lines without touching the algorithms.
#include <cstdarg>
#include <string>

namespace amgsolve {

void set_quiet(bool quiet);
bool is_quiet();

// printf-style line to stdout, flushed so a person sees it immediately; nothing when quiet.
void progress(const char* format, ...) __attribute__((format(printf, 1, 2)));

// "1 row", "2 rows": a count with its noun, plural with an s.
inline std::string counted(long long n, const char* noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

// A program's exit status once what it printed has reached its standard output: one that could not be
// written (a full disk, `> /dev/full`, a closed descriptor) is said on stderr as `program: error: ...` and
// turns a success into 1.
int with_standard_output_written(int status, const char* program);

}  // namespace amgsolve
