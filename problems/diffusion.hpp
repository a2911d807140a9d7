#pragma once
// Diffusion approximation of light transport in tissue, discretised by finite volumes on voxels:
//
//   -div(D grad Phi) + mu_a Phi = q,   D = 1 / (3 (mu_a + mu_s'))   (fluence Phi, lengths in mm)
//
// Unknowns are the voxels inside the domain (a mask on a box of cubic voxels of edge h), one per voxel,
// numbered in voxel order (x fastest), so the matrix has at most 7 nonzeros per row and a band width of
// about one x-y slice of the domain, as the FMT matrices of Gremse et al. 2015 (mouse280, ../shared/
// papers/rmerge-gremse-2015.txt) have. The equation is integrated over each voxel:
//   coupling across an interior face   h D_f,  D_f = 2 D_i D_j / (D_i + D_j)   (harmonic mean: the flux
//                                      is continuous across a jump in D, as in series resistances)
//   absorption                         h^3 mu_a
//   boundary face (neighbour outside)  h^2 / (2 A / w + h / (2 D_i))
// The last is the Robin (partial-current) condition Phi + 2 A D dPhi/dn = 0 (boundary_reflection.hpp),
// applied half a voxel from the centre: the outward flux J satisfies J = w Phi_face / (2A) and
// J = 2 D (Phi_centre - Phi_face) / h, so J = Phi_centre / (2A / w + h / (2D)).
// w is the skin area a voxel face stands for, per unit face area. A smooth surface with outward unit
// normal n is voxelised into a staircase whose faces add up to |n|_1 = |n_x| + |n_y| + |n_z| times its
// area (up to sqrt(3), 1.41 on average over the mouse), at every voxel size; counting the loss on every face
// would overstate it by that factor and never converge to the smooth-boundary solution. With the surface's
// normal known, w = 1 / |n|_1 counts the true area; without it (a box domain) w = 1.
//
// The matrix is symmetric with a positive diagonal and non-positive off-diagonals, and every row is
// strictly diagonally dominant where mu_a > 0 or a face is on the boundary: a nonsingular M-matrix, SPD.
// Its column sums are the absorption plus the boundary conductances, so 1^T (A Phi) = 1^T q says that
// absorbed power + boundary outflow = source power exactly for the discrete solution (energy balance).
#include <array>
#include <cstdint>
#include <functional>
#include <vector>

#include "common/error.hpp"
#include "problems/boundary_reflection.hpp"
#include "problems/row_range.hpp"
#include "sparse/csr.hpp"

namespace amgsolve {

// A box of cubic voxels with a mask of the ones that carry an unknown.
struct VoxelDomain {
  std::array<Index, 3> size = {0, 0, 0};  // voxels per direction
  std::array<double, 3> origin = {0, 0, 0};  // corner of voxel (0,0,0), mm
  double voxel_size = 1.0;                 // edge h, mm
  Array<Index> unknown_of_voxel;           // per voxel (x fastest): unknown index, or -1 outside
  Array<std::int64_t> voxel_of_unknown;    // inverse map, increasing

  std::int64_t voxels() const { return std::int64_t{size[0]} * size[1] * size[2]; }
  Index unknowns() const { return static_cast<Index>(voxel_of_unknown.size()); }
  std::array<double, 3> centre(std::int64_t voxel) const;
  // The voxel containing point p (mm), or -1 when p is outside the box.
  std::int64_t voxel_at(const std::array<double, 3>& p) const;
};

// Numbers the voxels where inside[v] != 0 in voxel order.
template <class Mask>
VoxelDomain make_voxel_domain(std::array<Index, 3> size, std::array<double, 3> origin, double voxel_size,
                              const Mask& inside);

// A voxel face of a domain voxel whose neighbour is outside: a piece of the skin.
struct SkinFace {
  Index unknown = 0;
  std::uint8_t direction = 0;  // 0..5: -z, -y, -x, +x, +y, +z (kFaceDirections)
  double area = 0;             // the true skin area it stands for, w h^2 (mm^2)
  double conductance = 0;      // outflow through it = conductance * Phi[unknown]
};

// The six face directions as (axis, step), ordered by the neighbour's voxel index.
inline constexpr std::array<std::array<int, 2>, 6> kFaceDirections = {
    {{2, -1}, {1, -1}, {0, -1}, {0, 1}, {1, 1}, {2, 1}}};

// The outward unit normal of the true boundary near a point (mm), for the area weights. Called from
// several threads at once: it must only read.
using OutwardNormal = std::function<std::array<double, 3>(const std::array<double, 3>&)>;

struct DiffusionOperator {
  CsrMatrix<double> A;        // all rows, or with `rows` given only those (global column numbers)
  Vector<double> absorption;  // h^3 mu_a per unknown (the absorbed power is absorption . Phi)
  Vector<double> boundary;    // summed boundary-face conductances per unknown (outflow = boundary . Phi)
  std::vector<SkinFace> skin;  // every boundary face, by unknown and direction

  // The exitance through each skin face, W per mm^2 of skin: the power leaving through the face over its
  // area. (With no light coming back in, this is the outward partial current's transmitted part.)
  Vector<double> exitance(const Vector<double>& fluence) const;
  double exitance(std::size_t face, const Vector<double>& fluence) const {
    return skin[face].conductance * fluence[skin[face].unknown] / skin[face].area;
  }
};

// The centre of a voxel face, mm.
std::array<double, 3> face_centre(const VoxelDomain& domain, Index unknown, int direction);

// mu_a and mu_s' per unknown, in 1/mm, both > 0; robin: robin_factor() of the mismatch; normal: the
// boundary's outward normal, for the area weights w (empty: w = 1, right for a box); rows: assemble only
// those rows of A (a rank's part of a distributed problem; absorption, boundary and skin stay whole).
DiffusionOperator diffusion_operator(const VoxelDomain& domain, const Vector<double>& mua, const Vector<double>& musp,
                                     double robin, const OutwardNormal& normal = {}, const RowRange* rows = nullptr);

// The diffusion coefficient D = 1 / (3 (mu_a + mu_s')), mm.
inline double diffusion_coefficient(double mua, double musp) { return 1.0 / (3.0 * (mua + musp)); }

// ---- template definitions ----

template <class Mask>
VoxelDomain make_voxel_domain(std::array<Index, 3> size, std::array<double, 3> origin, double voxel_size,
                              const Mask& inside) {
  VoxelDomain d;
  d.size = size;
  d.origin = origin;
  d.voxel_size = voxel_size;
  d.unknown_of_voxel.resize(static_cast<std::size_t>(d.voxels()));
  std::int64_t count = 0;
  for (std::int64_t v = 0; v < d.voxels(); ++v) {
    const bool in = inside(v);
    d.unknown_of_voxel[v] = in ? static_cast<Index>(count) : Index{-1};
    count += in ? 1 : 0;
    if (count > std::int64_t{2147483647}) throw InputError("more than 2^31 - 1 voxels inside the domain");
  }
  d.voxel_of_unknown.resize(static_cast<std::size_t>(count));
  for (std::int64_t v = 0; v < d.voxels(); ++v)
    if (d.unknown_of_voxel[v] >= 0) d.voxel_of_unknown[d.unknown_of_voxel[v]] = v;
  return d;
}

}  // namespace amgsolve
