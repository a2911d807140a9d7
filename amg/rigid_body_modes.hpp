#pragma once
// The rigid-body modes of linear elasticity, the near-nullspace that smoothed aggregation carries for it
// (Vanek, Mandel & Brezina, Computing 56, 1996, section 3 and its elasticity examples): the translations and
// the infinitesimal rotations, evaluated at the nodes' coordinates.
#include <array>
#include <cstdint>
#include <string>

#include "amg/params.hpp"
#include "common/exact_sum.hpp"
#include "sparse/csr.hpp"

namespace amgsolve {

// The rigid-body modes of linear elasticity at nodes with the given coordinates (nodes x dimension, row by
// row; dimension 2 or 3), for unknowns interleaved per node: the translations and the rotations about the
// coordinates' centroid, 3 vectors in 2D, 6 in 3D. A node's unknowns are its displacements (ux, uy[, uz]:
// block_size = dimension) or, for beams, plates and shells, those and its rotations (theta_z in 2D,
// theta_x, theta_y, theta_z in 3D: block_size 3 or 6), which a rotation about axis e turns by e.
// An InputError for another block_size.
NearNullspaceVectors rigid_body_modes(const Vector<double>& coordinates, int dimension, int block_size = 0);
// What rigid_body_modes checks first, on all the nodes or some: 2 or 3 dimensions, finite coordinates, a
// whole number of points, a block size that fits (0 taken as the dimension); an InputError otherwise. The
// number of rotations.
int require_rigid_body_input(const Vector<double>& coordinates, int dimension, int& block_size);
// Where nodes without rotational unknowns (block_size = dimension) give a rotation that is no mode, why: all
// at one place in 2D, all on one line along an axis in 3D (the rotation about it moves none of them). Empty
// otherwise. Checked on all the nodes, before their modes are formed.
std::string vanishing_rotation_problem(const Vector<double>& coordinates, int dimension, int block_size);
// The same about a given centre: some of the nodes (a rank's), the centroid being that of them all.
NearNullspaceVectors rigid_body_modes(const Vector<double>& coordinates, int dimension, int block_size,
                                      const std::array<double, 3>& centre);
// The sums of the nodes' coordinates along each axis, exact (so that the ranks' sums add up to one process's
// whatever the split), and the centroid of `nodes` nodes from those sums' values.
std::array<ExactSum, 3> coordinate_sums(const Vector<double>& coordinates, int dimension);
std::array<double, 3> centroid(const std::array<double, 3>& sums, std::int64_t nodes);

}  // namespace amgsolve
