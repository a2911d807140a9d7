#pragma once
// Diffuse-optical forward problems in the voxel mouse (fluorescence-mediated tomography, FMT):
// the phantom (mouse_phantom.hpp), its optical properties at the excitation and emission wavelengths
// (tissue_optics.hpp), the diffusion operator on the voxels inside the animal (diffusion.hpp), the laser
// sources, and the fluorescence source term.
//
// Sources: a collimated laser spot at (x, y) on the back, the beam pointing down (-z). Its light is
// modelled, as usual in the diffusion approximation, by an isotropic point source one transport mean
// free path 1 / (mu_a + mu_s') below the skin where the beam enters (the analytic skin, not the voxel
// staircase), with power `source_power` spread over the eight voxels around that point with trilinear
// weights, so that the source's centre lies exactly there at any voxel size.
// What a camera sees: the exitance through each skin face (DiffusionOperator::exitance); seen from
// above, each column of voxels shows the top face of its topmost voxel, with radiance exitance / pi
// (a Lambertian surface); detectors on the back read that image at their point, interpolated bilinearly
// between the four columns around it (a reading then moves smoothly with the point and converges as the
// voxels shrink, where the nearest column's jumped by up to half the exitance), and the normalised Born ratio
// (emission over excitation exitance, Ntziachristos and Weissleder, Opt. Lett. 26 (2001) 893) is what
// FMT reconstructs from.
// Fluorescence: the excitation fluence Phi_x of a source drives the emission source
//   q_m = eta mu_af Phi_x   (per voxel: yield h^3 Phi_x)
// with the fluorophore's yield (quantum yield times its absorption, 1/mm) in the tumour and in the
// background; the emission fluence solves the diffusion equation at the emission wavelength.
#include <array>
#include <functional>
#include <vector>

#include "problems/diffusion.hpp"
#include "problems/mouse_phantom.hpp"
#include "problems/tissue_optics.hpp"

namespace amgsolve {

struct MouseParams {
  PhantomParams phantom;
  double refractive_index = 1.37;  // of tissue, against air (n = 1)
  ReflectionModel reflection = ReflectionModel::exact;
  std::array<int, 2> wavelengths = {kExcitationNm, kEmissionNm};  // nm
  TissueTable optics = default_tissue_table();  // at `wavelengths`
  std::vector<std::array<double, 2>> spots;  // laser spots (x, y) in mm; empty: the scan grid
  std::array<std::int64_t, 2> scan_grid = {4, 2};  // spots along x and y over the back
  std::vector<std::array<double, 2>> detectors;   // points (x, y) on the back where the exitance is read
  double source_power = 1.0;
  bool fluorescence = false;
  double tumour_yield = 0.01;      // eta mu_af in the tumour, 1/mm
  double background_yield = 0.0;   // eta mu_af elsewhere in the animal
};

struct LightSource {
  std::array<double, 2> spot{};  // where the beam enters, top view (mm)
  double surface_z = 0;          // skin height at the spot (mm)
  Point3 position{};             // the point source (mm)
  std::vector<std::pair<Index, double>> weights;  // unknowns carrying it and their shares (sum 1)
};

// A point on the back where the camera's image is read: the top skin faces of the (up to four) voxel columns
// around it, with their bilinear weights (summing to 1; a column beside the animal is left out).
struct Detector {
  std::array<double, 2> point{};
  std::vector<std::pair<std::size_t, double>> faces;  // indices into DiffusionOperator::skin (the same in both bands)

  // The exitance there of a fluence of the operator's band.
  double exitance(const DiffusionOperator& op, const Vector<double>& fluence) const {
    double sum = 0;
    for (const auto& [face, weight] : faces) sum += weight * op.exitance(face, fluence);
    return sum;
  }
};

struct MouseProblem {
  Phantom phantom;
  VoxelDomain domain;                 // the voxels inside the animal
  DiffusionOperator excitation;       // with rows_of: only this rank's rows of A
  bool by_rows = false;
  RowRange rows;                      // the unknowns this rank holds: all, or its rows (by_rows)
  DiffusionOperator emission;         // A equal to excitation.A when the two bands' properties agree
  bool emission_differs = true;
  std::vector<LightSource> sources;
  std::vector<Detector> detectors;
  Vector<double> yield;               // per unknown (1/mm)
  double robin = 1.0;                 // A of the boundary condition
  TissueTable optics;                 // the properties of each tissue and band
  double source_power = 1.0;
  bool fluorescence = true;

  // The operator of the emission band: its own, or the excitation's where the bands' optics agree.
  const DiffusionOperator& emission_operator() const { return emission_differs ? emission : excitation; }

  // A laser source's right-hand side and the fluorescence's (from the excitation fluence), on `rows` (all
  // the unknowns, or this rank's): the fluence is of those rows too.
  Vector<double> source_rhs(const LightSource& s) const;
  Vector<double> emission_rhs(const Vector<double>& excitation_fluence) const;
  // Optical property of the band (0 excitation, 1 emission) per unknown, for output.
  Vector<double> mua(int band) const;
  Vector<double> musp(int band) const;
  // The skin face seen from above in each voxel column (x fastest), or -1 where the column misses the
  // animal: the camera's pixels.
  std::vector<std::int64_t> top_faces() const;
};

// Voxels per tissue inside the animal.
std::array<std::int64_t, kTissueCount> tissue_voxels(const MouseProblem& m);

// The scan pattern: nx x ny spots over the back of the trunk.
std::vector<std::array<double, 2>> back_scan_grid(std::int64_t nx, std::int64_t ny);

// The laser sources of `spots` in the phantom; InputError for a spot that misses the animal.
std::vector<LightSource> place_sources(const VoxelDomain& domain, const PhantomParams& shape,
                                       const TissueTable& optics, const std::vector<std::array<double, 2>>& spots);

// The trilinear weights of a point over the centres of the (up to) eight domain voxels around it,
// renormalised over those inside; empty when none is.
std::vector<std::pair<Index, double>> trilinear_weights(const VoxelDomain& domain, const Point3& p);

// Checks sizes and memory first (InputError for an empty or too large animal). rows_of: given the number of
// unknowns, the rows of the operators to assemble (a rank's part of a distributed run); empty: all.
MouseProblem make_mouse_problem(const MouseParams& p,
                                const std::function<RowRange(std::int64_t unknowns)>& rows_of = {});

// Upper bound of the voxels inside the animal (sum of the body parts' volumes), before building it.
double mouse_voxel_estimate(const PhantomParams& p);
// The memory a run of the problem takes beyond the problem's own arrays: each band's hierarchy and solve, and
// every source's fluence kept for the outputs (what the problem's check requires, with 5 bytes a box voxel).
double mouse_solve_bytes(const MouseParams& p, double unknowns);

}  // namespace amgsolve
