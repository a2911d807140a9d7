#pragma once
// A system's near-nullspace as the run reads or makes it (problem.near_nullspace, the rigid-body modes of
// problem.coordinates or of the elasticity problem's nodes), whole or by rows over the ranks.
#include "config/config.hpp"

namespace amgsolve {

// The near-nullspace into the setup's parameters (config.amg), with amg.block_size the nodes' dimension, and
// a system refused where it cannot be set up, before the matrix is read or made. Collective where the run
// is distributed by rows.
void attach_near_nullspace(Config& config);

}  // namespace amgsolve
