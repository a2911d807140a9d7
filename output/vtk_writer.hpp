#pragma once
// VTK XML output, readable by ParaView: image data (.vti) of a grid problem's point data (the fields given:
// solution, right-hand side, aggregate ids, ..., one value per unknown; Dirichlet boundary points are not
// unknowns and are not written), of a voxel domain's cell data (the mouse), and of a camera's picture;
// and the skin of a voxel domain as PolyData (.vtp).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "common/output_mark.hpp"
#include "problems/problem.hpp"

namespace amgsolve {

// Every VTK file amgsolve writes carries a field-data array of this name (what require_writable looks for
// before it replaces a file).
inline constexpr OutputMark kVtkMark{"Name=\"amgsolve\""};

// False in a build without VTK (libvtk9-dev was not found): the writers below then throw, and the
// application refuses output.vtk before any long work.
bool vtk_available();

struct ScalarField {
  std::string name;
  Vector<double> values;
};

// log10 of a field that is positive in exact arithmetic (a fluence), for a log-scale view: an entry that
// rounding left at or a hair below zero (far from the source, -2e-19) is shown at the field's smallest
// positive value, not as an outlier such as log10(1e-38) that would stretch the colour scale; 1e-38 where
// no entry is positive.
inline Vector<double> log10_for_display(const Vector<double>& field) {
  double floor = std::numeric_limits<double>::infinity();
  for (const double v : field)
    if (v > 0) floor = std::min(floor, v);
  if (!std::isfinite(floor)) floor = 1e-38;
  Vector<double> out(field.size());
  for (std::size_t i = 0; i < field.size(); ++i) out[i] = std::log10(std::max(field[i], floor));
  return out;
}

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
// A `mask` integer field (1 inside) allows a Threshold filter in any VTK reader. `frame`, when given,
// says in words what the axes are (field data `coordinate_frame`). Written atomically.
void write_voxel_vti(const std::string& path, const VoxelDomain& domain, const std::vector<ScalarField>& scalars,
                     const std::vector<IntegerField>& integers = {}, const std::string& frame = {});

// The skin as VTK PolyData (.vtp): one quad per boundary face of the domain, with cell data, one value per
// face (in `skin` order), plus `area` (the true skin area each face stands for, mm^2) and `direction`
// (0..5: -z, -y, -x, +x, +y, +z). Written atomically.
void write_skin_vtp(const std::string& path, const VoxelDomain& domain, const std::vector<SkinFace>& skin,
                    const std::vector<ScalarField>& per_face, const std::string& frame);

// A picture: nx x ny pixels of edge `pixel` (mm) with their lower-left corner at `origin` (x, y) and
// height z, one value per pixel (x fastest, NaN where nothing is seen) in each field. Written atomically.
struct PixelGrid {
  std::array<Index, 2> size{};
  std::array<double, 3> origin{};
  double pixel = 1.0;
};
void write_picture_vti(const std::string& path, const PixelGrid& grid, const std::vector<ScalarField>& pixels,
                       const std::string& frame);

}  // namespace amgsolve
