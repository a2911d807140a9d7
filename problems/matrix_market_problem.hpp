#pragma once
// A linear system read from Matrix Market files: the matrix must be square, symmetric and have a
// positive diagonal (checked with the offending entry named); the right-hand sides are the columns of a
// second file (several: load cases, solved one after another) or default to ones, and a third may hold
// where each solve starts. Positive definiteness itself is established by the solve: a non-positive
// pivot or p^T A p <= 0 is reported as "not positive definite".
#include <string>

namespace amgsolve {

struct MatrixMarketParams {
  std::string matrix;  // path to A.mtx
  std::string rhs;     // path to b.mtx, empty for b = 1
  std::string x0;      // path to the initial guesses (as many columns as rhs), empty to start from zero
  // A system's near-nullspace (amg/near_nullspace.hpp): its vectors (n x k), or the nodes' coordinates
  // (nodes x 2 or 3) for the rigid-body modes (amg/rigid_body_modes.hpp); empty for neither.
  std::string near_nullspace;
  std::string coordinates;
};

}  // namespace amgsolve
