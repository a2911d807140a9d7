#pragma once
// A procedural voxel mouse: body, head, limbs and tail, and the internal organs, built from ellipsoids
// and tapered cylinders with the dimensions of a 20-25 g laboratory mouse (head-body length about 9 cm,
// volume about 20 cm^3; organ sizes after the anatomy of the Digimouse atlas, Dogdas et al., Phys. Med.
// Biol. 52 (2007) 577, and organ masses of the adult mouse: liver 1.2-1.5 g, heart 0.12 g, brain 0.4 g).
//
// Coordinates in mm, a right-handed frame: x from the nose (negative) to the tail (positive), z up
// (dorsal), so y points to the animal's right. The animal lies prone, so the back faces +z, where the
// laser scan illuminates it. Organs sit on their anatomical sides: heart, stomach and the lower (caudal)
// kidney on the left (-y), the upper kidney on the right (+y).
// At 0.28 mm voxels the animal has about 0.9 million voxels, the size of mouse280 in Gremse et al. 2015.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/allocator.hpp"
#include "problems/tissue_optics.hpp"
#include "sparse/csr.hpp"

namespace amgsolve {

using Point3 = std::array<double, 3>;

// An ellipsoid, or a cylinder along x whose radius tapers linearly from r0 at x0 to r1 at x1.
struct Primitive {
  enum class Kind { ellipsoid, cylinder_x } kind = Kind::ellipsoid;
  Point3 centre{};    // ellipsoid centre; cylinder: (unused x, axis y, axis z)
  Point3 semi_axes{};  // ellipsoid
  double x0 = 0, x1 = 0, r0 = 0, r1 = 0;  // cylinder

  bool contains(const Point3& p) const;
  // Signed distance to the surface to first order (negative inside), and the outward unit normal of the
  // level surface through p: exact on the surface, which is where the boundary faces ask for them.
  double distance(const Point3& p) const;
  Point3 outward_normal(const Point3& p) const;
  Point3 lower() const;  // bounding box
  Point3 upper() const;
};

struct PhantomParams {
  double voxel_size = 0.28;  // mm
  bool limbs = true;         // four legs
  bool tail = false;         // a 6 cm tail (long and thin: it stretches the bounding box)
  double tumour_radius = 0;  // mm; 0: no tumour
  Point3 tumour_centre = {8.0, -4.0, 5.0};  // under the back, left of the spine
};

struct Organ {
  Tissue tissue;
  Primitive shape;
};

// The parts of the body surface (their union is the animal) and the organs, painted in order (later
// ones win where they overlap; every organ lies inside the body).
std::vector<Primitive> mouse_body(const PhantomParams& p);
std::vector<Organ> mouse_organs(const PhantomParams& p);

// Whether p lies in the union of the body parts.
bool inside_body(const std::vector<Primitive>& body, const Point3& p);
// The tissue the organs paint at p, a point inside the body: the last organ that holds it, else muscle.
Tissue painted_tissue(const std::vector<Organ>& organs, const Point3& p);

// The outward unit normal of the skin near p: that of the body part whose surface is nearest (the union's
// surface is the nearest part's surface wherever the parts do not cross).
Point3 skin_normal(const std::vector<Primitive>& body, const Point3& p);

// The height z of the skin seen from above at (x, y): the top of the body along the vertical line (exact:
// the parts are analytic); nullopt when the line misses the animal.
std::optional<double> skin_height(const std::vector<Primitive>& body, double x, double y);

// The frame, as stated in the README and written into every VTK file of the mouse.
inline constexpr const char* kMouseFrame =
    "right-handed, mm: x from nose to tail, y to the animal's right, z dorsal (up); the animal lies prone";

struct Phantom {
  std::array<Index, 3> size{};  // voxels per direction
  Point3 origin{};              // corner of voxel (0,0,0)
  double voxel_size = 0;
  Array<std::uint8_t> label;    // Tissue per voxel (x fastest); Tissue::outside outside the animal
  std::int64_t voxels() const { return std::int64_t{size[0]} * size[1] * size[2]; }
};

// Voxels of the bounding box (with a one-voxel margin) and the animal's volume estimate, for memory checks
// before anything is allocated.
std::array<Index, 3> phantom_box(const PhantomParams& p);

Phantom build_mouse_phantom(const PhantomParams& p);

}  // namespace amgsolve
