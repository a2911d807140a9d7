#pragma once
// VTK XML image data (.vti) output for grid problems, readable by ParaView. Point data arrays are the
// fields given (solution, right-hand side, aggregate ids, ...), one value per unknown; Dirichlet
// boundary points are not unknowns and are not written.
#include <string>
#include <vector>

#include "problems/problem.hpp"

namespace amgsolve {

// False in a build without VTK (libvtk9-dev was not found): the writers below then throw, and the
// application refuses output.vtk before any long work.
bool vtk_available();

struct ScalarField {
  std::string name;
  Vector<double> values;
};

struct IntegerField {
  std::string name;
  Array<Index> values;
};

// Written atomically (temporary file + rename).
void write_vti(const std::string& path, const Grid& grid, const std::vector<ScalarField>& scalars,
               const std::vector<IntegerField>& integers = {});

// Cell data on a box of voxels, for problems whose unknowns are the voxels inside a domain (the mouse):
// each field holds one value per unknown and is scattered to its voxel (as float: fluences span many
// decades but need no more than 7 digits for viewing); voxels outside the domain are blanked
// (vtkGhostType = HIDDENCELL, so ParaView draws only the animal) and hold NaN, or 0 in integer fields.
// A `mask` integer field (1 inside) allows a Threshold filter in any VTK reader. Written atomically.
void write_voxel_vti(const std::string& path, const VoxelDomain& domain, const std::vector<ScalarField>& scalars,
                     const std::vector<IntegerField>& integers = {});

}  // namespace amgsolve
