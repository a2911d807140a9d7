#include "amg/rigid_body_modes.hpp"

#include <cmath>
#include <memory>
#include <string>
#include <utility>

#include "common/error.hpp"

namespace amgsolve {

int require_rigid_body_input(const Vector<double>& coordinates, int dimension, int& block_size) {
  if (dimension != 2 && dimension != 3)
    throw InputError("rigid-body modes need coordinates in 2 or 3 dimensions, not " + std::to_string(dimension));
  const int rotations = dimension == 2 ? 1 : 3;
  if (block_size == 0) block_size = dimension;
  if (block_size != dimension && block_size != dimension + rotations)
    throw InputError("rigid-body modes in " + std::to_string(dimension) + " dimensions are for nodes of " +
                     std::to_string(dimension) + " unknowns (displacements) or " + std::to_string(dimension + rotations) +
                     " (and rotations), not " + std::to_string(block_size));
  if (coordinates.size() % static_cast<std::size_t>(dimension) != 0)
    throw InputError("rigid-body modes: " + std::to_string(coordinates.size()) + " coordinates are no whole number of " +
                     std::to_string(dimension) + "-dimensional points");
  for (double c : coordinates)
    if (!std::isfinite(c)) throw InputError("rigid-body modes: a coordinate is not finite");
  return rotations;
}

std::string vanishing_rotation_problem(const Vector<double>& coordinates, int dimension, int block_size) {
  if (block_size != dimension || coordinates.empty()) return "";
  const auto d = static_cast<std::size_t>(dimension);
  std::array<bool, 3> fixed{true, true, true};  // every node's coordinate along the axis is the first node's
  for (std::size_t k = d; k < coordinates.size(); ++k)
    fixed[k % d] = fixed[k % d] && coordinates[k] == coordinates[k % d];
  if (dimension == 2)
    return fixed[0] && fixed[1] ? "the points all lie at one place: their rotation is no rigid-body mode" : "";
  const char* axes = "xyz";
  for (std::size_t a = 0; a < 3; ++a)
    if (fixed[(a + 1) % 3] && fixed[(a + 2) % 3])
      return std::string("the points all lie on one line along the ") + axes[a] + " axis: the rotation about it is "
             "no rigid-body mode";
  return "";
}

std::array<ExactSum, 3> coordinate_sums(const Vector<double>& coordinates, int dimension) {
  if (dimension != 2 && dimension != 3)
    throw InputError("coordinates in 2 or 3 dimensions are needed, not " + std::to_string(dimension));
  std::array<ExactSum, 3> sums;
  const auto d = static_cast<std::size_t>(dimension);
  for (std::size_t k = 0; k < coordinates.size(); ++k) sums[k % d].add(coordinates[k]);
  return sums;
}

std::array<double, 3> centroid(const std::array<double, 3>& sums, std::int64_t nodes) {
  const auto n = static_cast<double>(nodes);
  return {sums[0] / n, sums[1] / n, sums[2] / n};
}

namespace {

// The modes of checked input (require_rigid_body_input) about `centre`.
NearNullspaceVectors modes_about(const Vector<double>& coordinates, int dimension, int block_size, int rotations,
                                 const std::array<double, 3>& centre) {
  const std::size_t nodes = coordinates.size() / static_cast<std::size_t>(dimension);
  const int modes = dimension + rotations;
  const std::size_t block = static_cast<std::size_t>(block_size);
  auto values = std::make_shared<Vector<double>>(nodes * block * modes, 0.0);
  for (std::size_t n = 0; n < nodes; ++n) {
    const double x = coordinates[n * dimension] - centre[0], y = coordinates[n * dimension + 1] - centre[1];
    double* ux = values->data() + n * block * modes;  // the node's rows: ux, uy[, uz][, rotations]
    double* uy = ux + modes;
    ux[0] = 1;
    uy[1] = 1;
    if (dimension == 2) {  // the rotation (-y, x), which turns a rotational unknown theta_z by 1
      ux[2] = -y;
      uy[2] = x;
      if (block_size == 3) uy[modes + 2] = 1;
      continue;
    }
    const double z = coordinates[n * dimension + 2] - centre[2];
    double* uz = uy + modes;
    uz[2] = 1;
    // about x: (0, -z, y); about y: (z, 0, -x); about z: (-y, x, 0)
    uy[3] = -z, uz[3] = y;
    ux[4] = z, uz[4] = -x;
    ux[5] = -y, uy[5] = x;
    if (block_size == 6)  // theta_x, theta_y, theta_z turned by the rotation about their own axis
      for (int axis = 0; axis < 3; ++axis) uz[(axis + 1) * modes + 3 + axis] = 1;
  }
  return {modes, std::move(values)};
}

}  // namespace

NearNullspaceVectors rigid_body_modes(const Vector<double>& coordinates, int dimension, int block_size) {
  const int rotations = require_rigid_body_input(coordinates, dimension, block_size);
  if (coordinates.empty()) throw InputError("rigid-body modes: no points given");
  // About the centroid, so that the rotations are not nearly translations far from the origin.
  const std::array<ExactSum, 3> sums = coordinate_sums(coordinates, dimension);
  const auto nodes = static_cast<std::int64_t>(coordinates.size() / static_cast<std::size_t>(dimension));
  return modes_about(coordinates, dimension, block_size, rotations,
                     centroid({sums[0].value(), sums[1].value(), sums[2].value()}, nodes));
}

NearNullspaceVectors rigid_body_modes(const Vector<double>& coordinates, int dimension, int block_size,
                                      const std::array<double, 3>& centre) {
  const int rotations = require_rigid_body_input(coordinates, dimension, block_size);
  return modes_about(coordinates, dimension, block_size, rotations, centre);
}

}  // namespace amgsolve
