#include "problems/mouse_phantom.hpp"

#include <algorithm>
#include <cmath>

#include "common/error.hpp"

namespace amgsolve {

bool Primitive::contains(const Point3& p) const {
  if (kind == Kind::ellipsoid) {
    double s = 0;
    for (int d = 0; d < 3; ++d) {
      const double t = (p[d] - centre[d]) / semi_axes[d];
      s += t * t;
    }
    return s <= 1.0;
  }
  if (p[0] < x0 || p[0] > x1) return false;
  const double r = r0 + (r1 - r0) * (p[0] - x0) / (x1 - x0);
  const double dy = p[1] - centre[1], dz = p[2] - centre[2];
  return dy * dy + dz * dz <= r * r;
}

namespace {

Point3 normalised(const Point3& v) {
  const double length = std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
  if (length == 0) return {0.0, 0.0, 1.0};  // the centre of a part: any direction
  return {v[0] / length, v[1] / length, v[2] / length};
}

// Ellipsoid: g = |t| - 1 with t = (p - c) / a vanishes on the surface; g / |grad g| is the distance to
// first order, and grad g points along t / a.
Point3 ellipsoid_gradient_direction(const Primitive& e, const Point3& p) {
  Point3 g{};
  for (int d = 0; d < 3; ++d) g[d] = (p[d] - e.centre[d]) / (e.semi_axes[d] * e.semi_axes[d]);
  return g;
}

// Cylinder: the largest of the radial excess and the two cap excesses; which one, for the normal.
struct CylinderExcess {
  double value;
  int part;  // 0 radial, 1 the cap at x0, 2 the cap at x1
};

CylinderExcess cylinder_excess(const Primitive& c, const Point3& p) {
  const double r = c.r0 + (c.r1 - c.r0) * std::clamp((p[0] - c.x0) / (c.x1 - c.x0), 0.0, 1.0);
  const double radial = std::hypot(p[1] - c.centre[1], p[2] - c.centre[2]) - r;
  CylinderExcess e{radial, 0};
  if (c.x0 - p[0] > e.value) e = {c.x0 - p[0], 1};
  if (p[0] - c.x1 > e.value) e = {p[0] - c.x1, 2};
  return e;
}

}  // namespace

double Primitive::distance(const Point3& p) const {
  if (kind == Kind::cylinder_x) return cylinder_excess(*this, p).value;
  double s = 0;
  for (int d = 0; d < 3; ++d) s += std::pow((p[d] - centre[d]) / semi_axes[d], 2);
  const double t = std::sqrt(s);
  if (t == 0) return -std::min({semi_axes[0], semi_axes[1], semi_axes[2]});
  const Point3 g = ellipsoid_gradient_direction(*this, p);
  const double gradient = std::sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]) / t;  // |grad |t||
  return (t - 1.0) / gradient;
}

Point3 Primitive::outward_normal(const Point3& p) const {
  if (kind == Kind::ellipsoid) return normalised(ellipsoid_gradient_direction(*this, p));
  const CylinderExcess e = cylinder_excess(*this, p);
  if (e.part == 1) return {-1.0, 0.0, 0.0};
  if (e.part == 2) return {1.0, 0.0, 0.0};
  const double slope = (r1 - r0) / (x1 - x0);  // the radius grows along x: the normal leans back
  const double dy = p[1] - centre[1], dz = p[2] - centre[2], rho = std::hypot(dy, dz);
  if (rho == 0) return {0.0, 0.0, 1.0};
  return normalised({-slope, dy / rho, dz / rho});
}

Point3 Primitive::lower() const {
  if (kind == Kind::ellipsoid) return {centre[0] - semi_axes[0], centre[1] - semi_axes[1], centre[2] - semi_axes[2]};
  const double r = std::max(r0, r1);
  return {x0, centre[1] - r, centre[2] - r};
}

Point3 Primitive::upper() const {
  if (kind == Kind::ellipsoid) return {centre[0] + semi_axes[0], centre[1] + semi_axes[1], centre[2] + semi_axes[2]};
  const double r = std::max(r0, r1);
  return {x1, centre[1] + r, centre[2] + r};
}

namespace {

Primitive ellipsoid(Point3 centre, Point3 semi_axes) {
  Primitive e;
  e.centre = centre;
  e.semi_axes = semi_axes;
  return e;
}

Primitive cylinder_x(double x0, double x1, double y, double z, double r0, double r1) {
  Primitive c;
  c.kind = Primitive::Kind::cylinder_x;
  c.centre = {0.0, y, z};
  c.x0 = x0;
  c.x1 = x1;
  c.r0 = r0;
  c.r1 = r1;
  return c;
}

}  // namespace

std::vector<Primitive> mouse_body(const PhantomParams& p) {
  // Trunk 68 mm x 24 mm x 18 mm and a 26 mm head: nose (x = -45) to tail base (x = 40), about 8.5 cm.
  std::vector<Primitive> body = {
      ellipsoid({6.0, 0.0, 0.0}, {34.0, 12.0, 9.0}),     // trunk
      ellipsoid({-32.0, 0.0, 1.5}, {13.0, 8.5, 7.0}),    // head
      ellipsoid({-21.0, 0.0, 0.5}, {8.0, 9.5, 7.5}),     // neck, joining head and trunk
  };
  if (p.limbs) {
    // Each leg reaches 2-3 mm up into the trunk, so the animal is one body at every voxel size (a fore leg
    // that only touched the trunk came off when voxelised).
    for (double side : {-1.0, 1.0}) {
      body.push_back(ellipsoid({-13.0, side * 6.5, -8.0}, {3.5, 2.8, 5.0}));  // fore leg
      body.push_back(ellipsoid({27.0, side * 8.0, -7.5}, {7.0, 3.8, 5.5}));   // hind leg (thigh)
    }
  }
  if (p.tail) body.push_back(cylinder_x(38.0, 98.0, 0.0, -1.0, 1.6, 0.6));
  return body;
}

std::vector<Organ> mouse_organs(const PhantomParams& p) {
  // y > 0 is the animal's right. No soft organ reaches into the spine or the skull; the brain fills the
  // skull's cavity (painted after it).
  std::vector<Organ> organs = {
      {Tissue::bone, ellipsoid({6.0, 0.0, 4.5}, {28.0, 1.3, 1.3})},             // spine
      {Tissue::lungs, ellipsoid({-13.0, -4.4, 0.0}, {6.0, 3.8, 4.6})},          // left and right lung
      {Tissue::lungs, ellipsoid({-13.0, 4.4, 0.0}, {6.0, 3.8, 4.6})},
      {Tissue::heart, ellipsoid({-13.5, -1.2, -2.5}, {4.2, 3.3, 3.3})},         // left of centre, 0.15 cm^3
      {Tissue::liver, ellipsoid({-3.0, 0.0, -2.0}, {5.5, 11.0, 5.0})},          // under the diaphragm, 1.3 cm^3
      {Tissue::stomach, ellipsoid({1.5, -5.5, 0.0}, {5.0, 4.0, 3.5})},          // left
      {Tissue::kidneys, ellipsoid({9.0, 5.5, 3.5}, {4.5, 2.6, 2.6})},           // right kidney, the cranial one
      {Tissue::kidneys, ellipsoid({10.5, -5.5, 3.5}, {4.5, 2.6, 2.6})},         // left kidney
      {Tissue::intestine, ellipsoid({22.0, 0.0, -2.0}, {12.0, 8.5, 4.5})},
      {Tissue::bone, ellipsoid({-31.0, 0.0, 3.0}, {9.0, 6.2, 4.6})},            // skull around the brain
      {Tissue::brain, ellipsoid({-30.5, 0.0, 3.0}, {7.8, 5.0, 3.5})},           // about 0.55 cm^3
  };
  if (p.tumour_radius > 0) {
    const double r = p.tumour_radius;
    organs.push_back({Tissue::tumour, ellipsoid(p.tumour_centre, {r, r, r})});
  }
  return organs;
}

bool inside_body(const std::vector<Primitive>& body, const Point3& p) {
  return std::any_of(body.begin(), body.end(), [&](const Primitive& s) { return s.contains(p); });
}

Tissue painted_tissue(const std::vector<Organ>& organs, const Point3& p) {
  Tissue tissue = Tissue::muscle;
  for (const Organ& organ : organs)
    if (organ.shape.contains(p)) tissue = organ.tissue;
  return tissue;
}

Point3 skin_normal(const std::vector<Primitive>& body, const Point3& p) {
  if (body.empty()) throw Error("skin_normal: a body without parts");
  const auto nearest = std::min_element(body.begin(), body.end(), [&](const Primitive& a, const Primitive& b) {
    return std::abs(a.distance(p)) < std::abs(b.distance(p));
  });
  return nearest->outward_normal(p);
}

std::optional<double> skin_height(const std::vector<Primitive>& body, double x, double y) {
  std::optional<double> top;
  for (const Primitive& s : body) {
    double half = -1;  // half the chord of the vertical line through the part
    double centre_z = s.centre[2];
    if (s.kind == Primitive::Kind::ellipsoid) {
      const double tx = (x - s.centre[0]) / s.semi_axes[0], ty = (y - s.centre[1]) / s.semi_axes[1];
      if (tx * tx + ty * ty <= 1.0) half = s.semi_axes[2] * std::sqrt(1.0 - tx * tx - ty * ty);
    } else if (x >= s.x0 && x <= s.x1) {
      const double r = s.r0 + (s.r1 - s.r0) * (x - s.x0) / (s.x1 - s.x0), dy = y - s.centre[1];
      if (std::abs(dy) <= r) half = std::sqrt(r * r - dy * dy);
    }
    if (half >= 0) top = std::max(top.value_or(centre_z + half), centre_z + half);
  }
  return top;
}

namespace {

// Bounding box of the body parts: lower and upper corner.
std::array<Point3, 2> body_bounds(const std::vector<Primitive>& body) {
  Point3 lo{1e300, 1e300, 1e300}, hi{-1e300, -1e300, -1e300};
  for (const Primitive& s : body)
    for (int d = 0; d < 3; ++d) {
      lo[d] = std::min(lo[d], s.lower()[d]);
      hi[d] = std::max(hi[d], s.upper()[d]);
    }
  return {lo, hi};
}

}  // namespace

std::array<Index, 3> phantom_box(const PhantomParams& p) {
  const auto [lo, hi] = body_bounds(mouse_body(p));
  std::array<Index, 3> size{};
  for (int d = 0; d < 3; ++d) {
    const double n = std::ceil((hi[d] - lo[d]) / p.voxel_size) + 2;  // one voxel of air on each side
    if (n > 2147483647.0) throw InputError("problem.voxel_size " + format_number(p.voxel_size) + " mm is too small");
    size[d] = static_cast<Index>(n);
  }
  return size;
}

Phantom build_mouse_phantom(const PhantomParams& p) {
  const std::vector<Primitive> body = mouse_body(p);
  const std::vector<Organ> organs = mouse_organs(p);
  Phantom ph;
  ph.voxel_size = p.voxel_size;
  ph.size = phantom_box(p);
  const Point3 lo = body_bounds(body)[0];
  for (int d = 0; d < 3; ++d) ph.origin[d] = lo[d] - p.voxel_size;
  ph.label.resize(static_cast<std::size_t>(ph.voxels()));
  const std::int64_t nx = ph.size[0], nxy = nx * ph.size[1];
#pragma omp parallel for schedule(static)
  for (std::int64_t v = 0; v < ph.voxels(); ++v) {
    const Point3 c = {ph.origin[0] + (v % nx + 0.5) * p.voxel_size,
                      ph.origin[1] + ((v / nx) % ph.size[1] + 0.5) * p.voxel_size,
                      ph.origin[2] + (v / nxy + 0.5) * p.voxel_size};
    ph.label[v] = static_cast<std::uint8_t>(inside_body(body, c) ? painted_tissue(organs, c) : Tissue::outside);
  }
  return ph;
}

}  // namespace amgsolve
