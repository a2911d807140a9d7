#pragma once
// The library's Parameters of a configuration: its backend, amg.* and solver.* (the rest says what to solve
// and where to write it). Header-only, so that the config library does not depend on the solver's.
#include "amgsolve/solver.hpp"
#include "config/config.hpp"

namespace amgsolve {

inline Parameters solver_parameters(const Config& config) {
  Parameters p;
  p.backend = config.backend_choice;
  p.amg = config.amg;
  p.solver = config.solver;
  return p;
}

}  // namespace amgsolve
