#pragma once
// A procedural voxel mouse: body, head, limbs and tail, and the internal organs, built from ellipsoids
// and tapered cylinders with the dimensions of a 20-25 g laboratory mouse (head-body length about 9 cm,
// volume about 20 cm^3; organ sizes after the anatomy of the Digimouse atlas, Dogdas et al., Phys. Med.
// Biol. 52 (2007) 577, and organ masses of the adult mouse: liver 1.2-1.5 g, heart 0.12 g, brain 0.4 g).
//
// Coordinates in mm: x from the nose (negative) to the tail (positive), y to the animal's left, z up
// (dorsal). The animal lies prone, so the back faces +z, where the laser scan illuminates it.
// At 0.28 mm voxels the animal has about 0.9 million voxels, the size of mouse280 in Gremse et al. 2015.
#include <array>
#include <cstdint>
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
  Point3 lower() const;  // bounding box
  Point3 upper() const;
};

struct PhantomParams {
  double voxel_size = 0.28;  // mm
  bool limbs = true;         // four legs
  bool tail = false;         // a 6 cm tail (long and thin: it stretches the bounding box)
  double tumour_radius = 0;  // mm; 0: no tumour
  Point3 tumour_centre = {8.0, 4.0, 5.0};
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
