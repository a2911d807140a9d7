#include "problems/mouse.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>

#include "common/error.hpp"
#include "common/memory.hpp"
#include "problems/problem.hpp"

namespace amgsolve {
namespace {

std::string format_spot(const std::array<double, 2>& s) {
  char text[64];
  std::snprintf(text, sizeof text, "[%g, %g]", s[0], s[1]);
  return text;
}

Tissue tissue_of(const Phantom& ph, std::int64_t voxel) { return static_cast<Tissue>(ph.label[voxel]); }

// One value per unknown from the tissue table.
template <class Property>
Vector<double> per_unknown(const MouseProblem& m, Property property) {
  Vector<double> out(static_cast<std::size_t>(m.domain.unknowns()));
#pragma omp parallel for schedule(static)
  for (Index u = 0; u < m.domain.unknowns(); ++u) out[u] = property(tissue_of(m.phantom, m.domain.voxel_of_unknown[u]));
  return out;
}

// The laser sources: the spots given, or the scan grid's.
double source_count(const MouseParams& p) {
  return static_cast<double>(p.spots.empty() ? p.scan_grid[0] * p.scan_grid[1] : p.spots.size());
}

void check_size(const MouseParams& p) {
  const double h = p.phantom.voxel_size;
  const std::array<Index, 3> box = phantom_box(p.phantom);
  const double box_voxels = double(box[0]) * box[1] * box[2];
  const double unknowns = mouse_voxel_estimate(p.phantom);
  char size[160];
  std::snprintf(size, sizeof size, "problem.voxel_size %g mm gives about %.3g voxels inside the animal", h, unknowns);
  if (unknowns < 500)
    throw InputError(std::string(size) + ": too coarse to resolve it (use at most 2 mm)");
  if (unknowns > 2.0e9) throw InputError(std::string(size) + ", more than the 32-bit index limit");
  // Labels and unknown numbers per box voxel, the two operators, and the fluences kept for output.
  const double bands = p.fluorescence ? 2.0 : 1.0;
  const double fluences = source_count(p);
  const double kept = 8.0 * unknowns * bands * fluences;  // the part of mouse_solve_bytes the sources grow
  const double bytes = 5.0 * box_voxels + mouse_solve_bytes(p, unknowns);
  // Which of the two keys to turn: the fluences kept for the outputs grow with the sources, the rest not.
  char what[320];
  std::snprintf(what, sizeof what,
                "the mouse at problem.voxel_size %g mm (about %.3g voxels) with %.0f source(s) (problem.sources; "
                "each source's fluence kept in %s: %s of it)",
                h, unknowns, fluences, bands > 1 ? "both bands" : "one band",
                format_bytes(saturating_bytes(kept)).c_str());
  require_memory(saturating_bytes(bytes), what);
}

[[noreturn]] void refuse_tumour(const PhantomParams& p, const char* where, const Point3& q) {
  char text[240];
  std::snprintf(text, sizeof text, "problem.tumour: the sphere at [%g, %g, %g] mm with radius %g mm %s (near [%.1f, "
                "%.1f, %.1f] mm)", p.tumour_centre[0], p.tumour_centre[1], p.tumour_centre[2], p.tumour_radius, where,
                q[0], q[1], q[2]);
  throw InputError(text);
}

// The tumour replaces the tissue where it grows, but not bone: one reaching into the spine or the skull (not
// into the brain the skull holds: the tissue the painting leaves counts, `organs` those without the tumour) is
// refused. Sampled on a lattice of a twentieth of its radius, counted in integers (a step of r / 20 may round
// to nothing).
void check_tumour_clear_of_bone(const PhantomParams& p, const std::vector<Organ>& organs) {
  constexpr int kSteps = 20;
  const double r = p.tumour_radius;
  for (int i = -kSteps; i <= kSteps; ++i)
    for (int j = -kSteps; j <= kSteps; ++j)
      for (int k = -kSteps; k <= kSteps; ++k) {
        if (i * i + j * j + k * k > kSteps * kSteps) continue;
        const Point3 q = {p.tumour_centre[0] + r * i / kSteps, p.tumour_centre[1] + r * j / kSteps,
                          p.tumour_centre[2] + r * k / kSteps};
        if (painted_tissue(organs, q) == Tissue::bone) refuse_tumour(p, "reaches into bone", q);
      }
}

// The tumour must lie in the animal: its centre and points spread evenly over its surface (a Fibonacci
// lattice of 2,000 points, about 8% of the radius apart), so that no part of it bulges out between them.
void check_tumour_inside(const PhantomParams& p) {
  constexpr int kPoints = 2000;
  const std::vector<Primitive> body = mouse_body(p);
  if (!inside_body(body, p.tumour_centre)) refuse_tumour(p, "reaches outside the animal", p.tumour_centre);
  const double golden_angle = std::numbers::pi * (3.0 - std::sqrt(5.0));
  for (int n = 0; n < kPoints; ++n) {
    const double z = 1.0 - (2.0 * n + 1.0) / kPoints, ring = std::sqrt(1.0 - z * z), phi = golden_angle * n;
    const Point3 q = {p.tumour_centre[0] + p.tumour_radius * ring * std::cos(phi),
                      p.tumour_centre[1] + p.tumour_radius * ring * std::sin(phi), p.tumour_centre[2] + p.tumour_radius * z};
    if (!inside_body(body, q)) refuse_tumour(p, "reaches outside the animal", q);
  }
}

void check_tumour(const PhantomParams& p) {
  if (p.tumour_radius <= 0) return;
  check_tumour_inside(p);
  PhantomParams without_tumour = p;
  without_tumour.tumour_radius = 0;
  check_tumour_clear_of_bone(p, mouse_organs(without_tumour));
}

// A tumour asked for must take voxels: a sphere that holds no voxel centre would leave the tissue unchanged
// (and fluorescence from it none) without a word.
void require_tumour_voxels(const PhantomParams& p, const Phantom& ph) {
  if (p.tumour_radius <= 0) return;
  const auto tumour = static_cast<std::uint8_t>(Tissue::tumour);
  if (std::find(ph.label.begin(), ph.label.end(), tumour) != ph.label.end()) return;
  char text[240];
  std::snprintf(text, sizeof text, "problem.tumour.radius: a sphere of %g mm holds no voxel centre at "
                "problem.voxel_size %g mm (make it at least about half a voxel, or 0 for no tumour)",
                p.tumour_radius, p.voxel_size);
  throw InputError(text);
}

// Detectors off the animal are refused before anything is built.
void check_detectors(const MouseParams& p) {
  const std::vector<Primitive> body = mouse_body(p.phantom);
  for (std::size_t k = 0; k < p.detectors.size(); ++k)
    if (!skin_height(body, p.detectors[k][0], p.detectors[k][1]))
      throw InputError("problem.detectors: point " + std::to_string(k + 1) + " at " + format_spot(p.detectors[k]) +
                       " mm misses the animal");
}

}  // namespace

double mouse_solve_bytes(const MouseParams& p, double unknowns) {
  const double bands = p.fluorescence ? 2.0 : 1.0;
  return 8.0 * unknowns * bands * source_count(p) +
         bands * static_cast<double>(estimated_solve_bytes(static_cast<Offset>(unknowns), static_cast<Offset>(7 * unknowns)));
}

double mouse_voxel_estimate(const PhantomParams& p) {
  double volume = 0;
  for (const Primitive& s : mouse_body(p)) {
    if (s.kind == Primitive::Kind::ellipsoid)
      volume += 4.0 / 3.0 * std::numbers::pi * s.semi_axes[0] * s.semi_axes[1] * s.semi_axes[2];
    else
      volume += std::numbers::pi * std::max(s.r0, s.r1) * std::max(s.r0, s.r1) * (s.x1 - s.x0);
  }
  return volume / (p.voxel_size * p.voxel_size * p.voxel_size);
}

std::vector<std::array<double, 2>> back_scan_grid(std::int64_t nx, std::int64_t ny) {
  // The flat part of the back: x from the shoulders to the hips, y within the width of the spine region.
  constexpr double x_lo = -16.0, x_hi = 30.0, y_lo = -5.0, y_hi = 5.0;
  std::vector<std::array<double, 2>> spots;
  for (std::int64_t j = 0; j < ny; ++j)
    for (std::int64_t i = 0; i < nx; ++i)
      spots.push_back({x_lo + (x_hi - x_lo) * (i + 0.5) / nx, y_lo + (y_hi - y_lo) * (j + 0.5) / ny});
  return spots;
}

namespace {

// Where p lies among the voxel centres along the first D axes: the index of the centre below it and the
// fraction of the way to the next, per axis; false beyond the box's centres by more than one voxel (or NaN).
template <std::size_t D>
bool among_centres(const VoxelDomain& domain, const std::array<double, D>& p, std::array<std::int64_t, D>& low,
                   std::array<double, D>& frac) {
  for (std::size_t d = 0; d < D; ++d) {
    const double t = (p[d] - domain.origin[d]) / domain.voxel_size - 0.5;  // in voxel-centre units
    if (!(t >= -1.0 && t <= domain.size[d])) return false;
    low[d] = static_cast<std::int64_t>(std::floor(t));
    frac[d] = t - static_cast<double>(low[d]);
  }
  return true;
}

}  // namespace

std::vector<std::pair<Index, double>> trilinear_weights(const VoxelDomain& domain, const Point3& p) {
  std::array<std::int64_t, 3> low{};
  std::array<double, 3> frac{};
  if (!among_centres(domain, p, low, frac)) return {};
  std::vector<std::pair<Index, double>> weights;
  double total = 0;
  for (int corner = 0; corner < 8; ++corner) {
    std::array<std::int64_t, 3> c{};
    double w = 1;
    for (int d = 0; d < 3; ++d) {
      const int up = (corner >> d) & 1;
      c[d] = low[d] + up;
      w *= up ? frac[d] : 1.0 - frac[d];
    }
    if (w == 0 || c[0] < 0 || c[1] < 0 || c[2] < 0 || c[0] >= domain.size[0] || c[1] >= domain.size[1] ||
        c[2] >= domain.size[2])
      continue;
    const Index u = domain.unknown_of_voxel[c[0] + domain.size[0] * (c[1] + std::int64_t{domain.size[1]} * c[2])];
    if (u < 0) continue;
    weights.emplace_back(u, w);
    total += w;
  }
  for (auto& [u, w] : weights) w /= total;
  std::sort(weights.begin(), weights.end());
  return weights;
}

namespace {

// The topmost voxel of the animal in the column through (x, y), or -1.
std::int64_t top_voxel(const VoxelDomain& domain, double x, double y) {
  const Point3 top = {x, y, domain.origin[2] + (domain.size[2] - 0.5) * domain.voxel_size};
  std::int64_t v = domain.voxel_at(top);
  if (v < 0) return -1;
  const std::int64_t slice = std::int64_t{domain.size[0]} * domain.size[1];
  while (v >= 0 && domain.unknown_of_voxel[v] < 0) v -= slice;
  return v;
}

}  // namespace

std::vector<LightSource> place_sources(const VoxelDomain& domain, const PhantomParams& shape,
                                       const TissueTable& optics, const std::vector<std::array<double, 2>>& spots) {
  const std::vector<Primitive> body = mouse_body(shape);
  const std::vector<Organ> organs = mouse_organs(shape);
  std::vector<LightSource> sources;
  for (std::size_t s = 0; s < spots.size(); ++s) {
    const std::string which = "problem.sources: spot " + std::to_string(s + 1) + " at " + format_spot(spots[s]) + " mm";
    const std::optional<double> skin = skin_height(body, spots[s][0], spots[s][1]);
    const std::int64_t v = top_voxel(domain, spots[s][0], spots[s][1]);
    if (!skin || v < 0) throw InputError(which + " misses the animal");
    LightSource src;
    src.spot = spots[s];
    src.surface_z = *skin;
    // The tissue where the beam enters, just under the analytic skin: not the label of the column's top voxel,
    // whose centre may lie in a deeper tissue (the skull under 0.9 mm of soft tissue) at some voxel sizes.
    const Point3 entry = {spots[s][0], spots[s][1], *skin - 1e-9 * std::max(1.0, std::abs(*skin))};
    const OpticalProperties tissue = optics[static_cast<int>(painted_tissue(organs, entry))][0];
    src.position = {spots[s][0], spots[s][1], src.surface_z - 1.0 / (tissue.mua + tissue.musp)};
    src.weights = trilinear_weights(domain, src.position);
    if (!inside_body(body, src.position) || src.weights.empty())
      throw InputError(which + ": the tissue under it is thinner than one transport mean free path");
    sources.push_back(std::move(src));
  }
  return sources;
}

Vector<double> MouseProblem::source_rhs(const LightSource& s) const {
  Vector<double> b(static_cast<std::size_t>(rows.last - rows.first), 0.0);
  for (const auto& [u, w] : s.weights)
    if (u >= rows.first && u < rows.last) b[static_cast<std::size_t>(u - rows.first)] = source_power * w;
  return b;
}

Vector<double> MouseProblem::emission_rhs(const Vector<double>& excitation_fluence) const {
  const double volume = domain.voxel_size * domain.voxel_size * domain.voxel_size;
  Vector<double> b(excitation_fluence.size());
  const std::size_t first = static_cast<std::size_t>(rows.first);
#pragma omp parallel for schedule(static)
  for (std::size_t u = 0; u < b.size(); ++u) b[u] = volume * yield[first + u] * excitation_fluence[u];
  return b;
}

Vector<double> MouseProblem::mua(int band) const {
  return per_unknown(*this, [&](Tissue t) { return optics[static_cast<int>(t)][band].mua; });
}

Vector<double> MouseProblem::musp(int band) const {
  return per_unknown(*this, [&](Tissue t) { return optics[static_cast<int>(t)][band].musp; });
}

std::vector<std::int64_t> MouseProblem::top_faces() const {
  const std::int64_t columns = std::int64_t{domain.size[0]} * domain.size[1];
  std::vector<std::int64_t> face(static_cast<std::size_t>(columns), -1);
  const std::vector<SkinFace>& skin = excitation.skin;
  constexpr std::uint8_t up = 5;  // +z in kFaceDirections
#pragma omp parallel for schedule(static)
  for (std::int64_t c = 0; c < columns; ++c) {
    for (std::int64_t v = c + (domain.size[2] - 1) * columns; v >= 0; v -= columns) {
      const Index u = domain.unknown_of_voxel[v];
      if (u < 0) continue;
      const auto at = std::lower_bound(skin.begin(), skin.end(), std::pair{u, up}, [](const SkinFace& f, auto key) {
        return std::pair{f.unknown, f.direction} < key;
      });
      face[c] = at - skin.begin();  // the topmost voxel's +z neighbour is air: the face exists
      break;
    }
  }
  return face;
}

std::array<std::int64_t, kTissueCount> tissue_voxels(const MouseProblem& m) {
  std::array<std::int64_t, kTissueCount> count{};
  for (std::int64_t v : m.domain.voxel_of_unknown) ++count[m.phantom.label[v]];
  return count;
}

namespace {

// The yield is the quantum yield (at most 1) times the fluorophore's absorption, which is part of the tissue's
// absorption at the excitation wavelength: a yield above that absorption emits more light than the tissue
// takes in (a background of 1/mm emitted 19 W from 0.5 W absorbed). Checked for the tissues of the animal.
void require_yield_within_absorption(const MouseProblem& m, const MouseParams& p) {
  const std::array<std::int64_t, kTissueCount> voxels = tissue_voxels(m);
  for (int t = 1; t < kTissueCount; ++t) {
    const bool tumour = static_cast<Tissue>(t) == Tissue::tumour;
    const double yield = tumour ? p.tumour_yield : p.background_yield, mua = p.optics[t][0].mua;
    if (voxels[static_cast<std::size_t>(t)] > 0 && yield > mua)
      throw InputError(std::string("problem.fluorophore.") + (tumour ? "tumour" : "background") + ": a yield of " +
                       format_number(yield) + "/mm is more than the " + tissue_name(static_cast<Tissue>(t)) +
                       "'s absorption at the excitation wavelength (" + format_number(mua) + "/mm), of which the "
                       "fluorophore's is part: the yield is the quantum yield (at most 1) times that absorption");
  }
}

// The top faces of the (up to) four voxel columns whose centres surround (x, y), with bilinear weights in
// the columns' centres, renormalised over the columns that hold the animal; empty where none does.
std::vector<std::pair<std::size_t, double>> bilinear_top_faces(const VoxelDomain& domain,
                                                               const std::vector<std::int64_t>& top, double x,
                                                               double y) {
  std::array<std::int64_t, 2> low{};
  std::array<double, 2> frac{};
  if (!among_centres(domain, std::array<double, 2>{x, y}, low, frac)) return {};
  for (double& f : frac) {  // on a column's centre up to rounding: that column alone, not a neighbour of 1e-16
    if (f < 1e-9) f = 0.0;
    if (f > 1.0 - 1e-9) f = 1.0;
  }
  std::vector<std::pair<std::size_t, double>> faces;
  double total = 0;
  for (int corner = 0; corner < 4; ++corner) {
    const std::int64_t cx = low[0] + (corner & 1), cy = low[1] + (corner >> 1);
    const double w = ((corner & 1) ? frac[0] : 1.0 - frac[0]) * ((corner >> 1) ? frac[1] : 1.0 - frac[1]);
    if (w == 0 || cx < 0 || cy < 0 || cx >= domain.size[0] || cy >= domain.size[1]) continue;
    const std::int64_t face = top[static_cast<std::size_t>(cx + std::int64_t{domain.size[0]} * cy)];
    if (face < 0) continue;
    faces.emplace_back(static_cast<std::size_t>(face), w);
    total += w;
  }
  for (auto& [face, w] : faces) w /= total;
  return faces;
}

std::vector<Detector> place_detectors(const MouseProblem& m, const std::vector<std::array<double, 2>>& points) {
  std::vector<Detector> detectors;
  const std::vector<std::int64_t> top = m.top_faces();
  for (std::size_t k = 0; k < points.size(); ++k) {
    Detector d{points[k], bilinear_top_faces(m.domain, top, points[k][0], points[k][1])};
    if (d.faces.empty())
      throw InputError("problem.detectors: point " + std::to_string(k + 1) + " at " + format_spot(points[k]) +
                       " mm misses the animal");
    detectors.push_back(std::move(d));
  }
  return detectors;
}

}  // namespace

MouseProblem make_mouse_problem(const MouseParams& p, const std::function<RowRange(std::int64_t)>& rows_of) {
  check_size(p);
  check_tumour(p.phantom);
  check_detectors(p);
  if (p.fluorescence && p.tumour_yield <= 0 && p.background_yield <= 0)
    throw InputError("problem.fluorophore: fluorescence needs a positive yield in the tumour or the background");
  if (p.fluorescence && p.phantom.tumour_radius <= 0 && p.background_yield <= 0)
    throw InputError("problem.fluorophore: fluorescence without a tumour needs a positive background yield");

  MouseProblem m;
  m.optics = p.optics;
  m.source_power = p.source_power;
  m.fluorescence = p.fluorescence;
  m.phantom = build_mouse_phantom(p.phantom);
  const Phantom& ph = m.phantom;
  require_tumour_voxels(p.phantom, ph);
  m.domain = make_voxel_domain(ph.size, ph.origin, ph.voxel_size,
                               [&](std::int64_t v) { return ph.label[v] != static_cast<std::uint8_t>(Tissue::outside); });
  m.robin = robin_factor(p.refractive_index, p.reflection);
  m.by_rows = static_cast<bool>(rows_of);
  const RowRange own = rows_of ? rows_of(m.domain.unknowns()) : RowRange{0, m.domain.unknowns()};
  m.rows = own;
  const RowRange* rows = rows_of ? &own : nullptr;
  const std::vector<Primitive> body = mouse_body(p.phantom);
  const OutwardNormal normal = [&body](const Point3& at) { return skin_normal(body, at); };
  m.excitation = diffusion_operator(m.domain, m.mua(0), m.musp(0), m.robin, normal, rows);
  if (p.fluorescence) {
    m.emission_differs = false;
    for (int t = 1; t < kTissueCount; ++t)
      m.emission_differs = m.emission_differs || p.optics[t][0].mua != p.optics[t][1].mua ||
                           p.optics[t][0].musp != p.optics[t][1].musp;
    if (m.emission_differs) m.emission = diffusion_operator(m.domain, m.mua(1), m.musp(1), m.robin, normal, rows);
    m.yield = per_unknown(m, [&](Tissue t) { return t == Tissue::tumour ? p.tumour_yield : p.background_yield; });
    require_yield_within_absorption(m, p);
  }
  const auto spots = p.spots.empty() ? back_scan_grid(p.scan_grid[0], p.scan_grid[1]) : p.spots;
  m.sources = place_sources(m.domain, p.phantom, p.optics, spots);
  m.detectors = place_detectors(m, p.detectors);
  return m;
}

}  // namespace amgsolve
