#include "config/schema.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <sstream>
#include <type_traits>
#include <utility>

#include "amgsolve/parameter_ranges.hpp"
#include "common/device.hpp"
#include "common/error.hpp"
#include "config/config.hpp"
#include "problems/tissue_optics.hpp"
#include "sparse/sliced_ellpack.hpp"
#include "spgemm/registry.hpp"

namespace amgsolve {
namespace {

// A key's field in the Config: FIELD(amg.coarse_size) is a function from a Config to that member, usable on
// a const Config (to read the default) and on the Config being filled.
#define FIELD(member) [](auto& config) -> auto& { return config.member; }

constexpr double kMaxInt = 2147483647.0;  // integer keys are stored in 32-bit ints

const Config& defaults() {
  static const Config config;
  return config;
}

template <class Access>
using FieldOf = std::remove_cvref_t<decltype(std::declval<Access>()(std::declval<Config&>()))>;

template <class T>
struct IsStdArray : std::false_type {};
template <class T, std::size_t N>
struct IsStdArray<std::array<T, N>> : std::true_type {};

// ---- the default as YAML text

std::string yaml_text(double v) {
  char text[32];
  return std::string(text, std::to_chars(text, text + sizeof text, v).ptr);  // shortest exact form
}
template <class T>
  requires std::is_integral_v<T>
std::string yaml_text(T v) {
  return std::to_string(v);
}
template <class List>
  requires requires(const List& l) { l.begin(); l.size(); typename List::value_type; }
std::string yaml_text(const List& list) {
  std::string text = "[";
  for (const auto& entry : list) text += (text.size() > 1 ? ", " : "") + yaml_text(entry);
  return text + "]";
}

// ---- the kinds of key, each bound to its field

KeySpec declare(std::string path, KeyKind kind, std::string doc) {
  KeySpec k;
  k.path = std::move(path);
  k.kind = kind;
  k.doc = std::move(doc);
  return k;
}

template <class Access>
KeySpec integer(std::string path, Access field, std::string doc) {
  KeySpec k = declare(path, KeyKind::integer, std::move(doc));
  k.default_yaml = yaml_text(field(defaults()));
  k.read = [field, path](const KeyReader& r, Config& c) { field(c) = static_cast<FieldOf<Access>>(r.integer(path)); };
  return k;
}

template <class Access>
KeySpec number(std::string path, Access field, std::string doc) {
  KeySpec k = declare(path, KeyKind::number, std::move(doc));
  k.default_yaml = yaml_text(field(defaults()));
  k.read = [field, path](const KeyReader& r, Config& c) { field(c) = r.number(path); };
  return k;
}

// A string (KeyKind::text) or a file path (KeyKind::path).
template <class Access>
KeySpec text(std::string path, Access field, std::string doc, KeyKind kind = KeyKind::text) {
  KeySpec k = declare(path, kind, std::move(doc));
  k.default_yaml = field(defaults());
  k.read = [field, path](const KeyReader& r, Config& c) { field(c) = r.text(path); };
  return k;
}
template <class Access>
KeySpec file(std::string path, Access field, std::string doc) {
  return text(std::move(path), field, std::move(doc), KeyKind::path);
}
// A file the run reads: a relative path in the config file is relative to the file's folder.
template <class Access>
KeySpec input_file(std::string path, Access field, std::string doc) {
  KeySpec k = file(path, field, std::move(doc));
  k.read = [field, path](const KeyReader& r, Config& c) { field(c) = r.input_path(path); };
  k.input = true;
  return k;
}

// One of named values, each standing for a value of the field.
template <class Access>
KeySpec choice(std::string path, Access field,
               std::type_identity_t<std::vector<std::pair<std::string, FieldOf<Access>>>> values, std::string doc) {
  KeySpec k = declare(path, KeyKind::choice, std::move(doc));
  for (const auto& [name, value] : values) {
    k.choices.push_back(name);
    if (value == field(defaults())) k.default_yaml = name;
  }
  k.read = [field, path, values](const KeyReader& r, Config& c) {
    const std::string name = r.text(path);  // checked against the choices
    for (const auto& [candidate, value] : values)
      if (candidate == name) field(c) = value;
  };
  return k;
}

// The same with the names declared beside the field's enumeration (common/enum_names.hpp).
template <class Access, std::size_t N>
KeySpec choice(std::string path, Access field, const EnumName<FieldOf<Access>> (&names)[N], std::string doc) {
  std::vector<std::pair<std::string, FieldOf<Access>>> values;
  for (const auto& [name, value] : names) values.emplace_back(name, value);
  return choice(std::move(path), field, std::move(values), std::move(doc));
}

template <class Access>
KeySpec flag(std::string path, Access field, std::string doc) {
  return choice(std::move(path), field, {{"true", true}, {"false", false}}, std::move(doc));
}

// A list of numbers into a std::vector or a std::array of matching length (list_of sets the lengths).
template <class Access>
KeySpec list(std::string path, Access field, KeyKind kind, std::string doc) {
  KeySpec k = declare(path, kind, std::move(doc));
  k.default_yaml = yaml_text(field(defaults()));
  k.read = [field, path, kind](const KeyReader& r, Config& c) {
    using Target = FieldOf<Access>;
    using Entry = typename Target::value_type;
    auto assign = [&](const auto& values) {
      Target& target = field(c);
      if constexpr (IsStdArray<Target>::value)
        std::transform(values.begin(), values.end(), target.begin(), [](auto v) { return static_cast<Entry>(v); });
      else
        target.assign(values.begin(), values.end());
    };
    if (kind == KeyKind::integer_list)
      assign(r.integer_list(path));
    else
      assign(r.number_list(path));
  };
  return k;
}

template <class Access>
KeySpec pairs(std::string path, Access field, std::string doc) {
  KeySpec k = declare(path, KeyKind::pair_list, std::move(doc));
  k.default_yaml = yaml_text(field(defaults()));
  k.read = [field, path](const KeyReader& r, Config& c) { field(c) = r.pair_list(path); };
  return k;
}

// A key that no longer exists: naming it is an error that says what replaced it.
KeySpec retired(std::string path, std::string replacement) {
  KeySpec k = declare(std::move(path), KeyKind::text, "Removed: use `" + replacement + "`.");
  k.replaced_by = std::move(replacement);
  return k;
}

// ---- modifiers

// Which ends of a key's range are excluded: a tolerance is > 0 and < 1, a size >= 1.
enum class Excluded { none, min, both };

KeySpec bounded(KeySpec k, std::optional<double> min, std::optional<double> max, Excluded excluded = Excluded::none) {
  k.min = min;
  k.max = max;
  k.min_exclusive = excluded != Excluded::none;
  k.max_exclusive = excluded == Excluded::both;
  return k;
}
// A solver key bounded by the library's range (amgsolve/parameter_ranges.hpp), which the Solver checks too.
KeySpec library_bounded(KeySpec k) {
  const ParameterRange& range = parameter_range(k.path);
  k.min = range.min;
  k.max = range.max;
  k.min_exclusive = range.min_excluded;
  k.max_exclusive = range.max_excluded;
  return k;
}
KeySpec because(KeySpec k, std::string reason) {
  k.bounds_reason = std::move(reason);
  return k;
}
KeySpec only_for(KeySpec k, std::string problem_type) {
  k.problem_type = std::move(problem_type);
  return k;
}
KeySpec list_of(KeySpec k, std::size_t min_entries, std::size_t max_entries) {
  k.list_min = min_entries;
  k.list_max = max_entries;
  return k;
}

// ---- the keys

// Coefficient ratios beyond 1e10 give matrices whose condition number (the ratio times the grid's own
// ~n^2) passes what double precision resolves: the solve would end in a spectral-radius or positive
// definiteness failure about a matrix the user never wrote.
constexpr double kMinCoefficient = 1e-10, kMaxCoefficient = 1e10;
const char* const kCoefficientRangeReason =
    "coefficient ratios beyond 1e10 make the matrix too ill-conditioned for double precision";

std::vector<KeySpec> poisson_keys() {
  return {
      only_for(choice("problem.stencil", FIELD(problem.poisson.stencil), names_of(Stencil{}),
                      "Finite-difference stencil: 5pt and 9pt are 2D, 7pt and 27pt are 3D."),
               "poisson"),
      only_for(list_of(bounded(list("problem.size", FIELD(problem.poisson.size), KeyKind::integer_list,
                                    "Unknowns per direction: 2 entries for the 2D stencils, 3 for the 3D ones "
                                    "(Dirichlet boundary points are not unknowns). The spacing is the same in every "
                                    "direction, 1/(n+1) for the largest n, as the stencil weighs every direction "
                                    "alike: equal sizes make the unit square or cube, the VTK output draws the box."),
                               1, 2147483647.0),
                       2, 3),
               "poisson"),
      only_for(list_of(because(bounded(list("problem.anisotropy", FIELD(problem.poisson.anisotropy),
                                            KeyKind::number_list,
                                            "Diffusion coefficient per direction (x, y[, z]) for 5pt/7pt stencils, "
                                            "e.g. [1, 1, 1e-3]; empty: isotropic."),
                                       kMinCoefficient, kMaxCoefficient),
                               kCoefficientRangeReason),
                       0, 3),
               "poisson"),
      only_for(choice("problem.coefficient", FIELD(problem.poisson.coefficient),
                      {{"constant", Coefficient::constant}, {"checkerboard", Coefficient::checkerboard}},
                      "Diffusion coefficient k(x): `constant` 1, or `checkerboard`: `contrast` and 1 on alternating "
                      "cells of a cells^d checkerboard (5pt/7pt stencils; harmonic means on the faces)."),
               "poisson"),
      only_for(because(bounded(number("problem.contrast", FIELD(problem.poisson.contrast),
                                      "Checkerboard: k in the odd cells (1 in the others)."),
                               kMinCoefficient, kMaxCoefficient),
                       kCoefficientRangeReason),
               "poisson"),
      only_for(bounded(integer("problem.steps", FIELD(problem.poisson.steps),
                               "Time steps of a changing coefficient: step s of N solves with the checkerboard's "
                               "contrast raised to s / N (near 1 at first, `contrast` at the end), the matrix on "
                               "the same pattern, the hierarchy re-set-up at each step with the aggregates kept "
                               "(amg.keep_structure is implied; given false, each step sets up anew, for a "
                               "comparison). Each step's setup and solve go into the report's "
                               "`steps[]`; the last step's solution is written."),
                       1, 1000),
               "poisson"),
      only_for(bounded(integer("problem.cells", FIELD(problem.poisson.cells), "Checkerboard: cells per direction."), 1,
                       1 << 20),
               "poisson"),
      only_for(choice("problem.boundary", FIELD(problem.poisson.boundary),
                      {{"dirichlet", Boundary::dirichlet}, {"neumann", Boundary::neumann}},
                      "Boundary condition: `dirichlet` (u = 0), or `neumann` (no flux through a boundary half a "
                      "cell beyond the outermost points, by mirror images; rows sum to zero, the matrix is singular "
                      "with the constants as nullspace, and the right-hand side must sum to zero: use `rhs: "
                      "manufactured`)."),
               "poisson"),
      only_for(choice("problem.rhs", FIELD(problem.poisson.rhs),
                      {{"ones", PoissonRhs::ones}, {"manufactured", PoissonRhs::manufactured}},
                      "Right-hand side: `ones`, or `manufactured`: b = A u* for a known smooth u* and the discrete "
                      "A, so the report also gives the error against u*: the solve's error, not the "
                      "discretisation's (which b = A u* leaves out)."),
               "poisson"),
  };
}

std::vector<KeySpec> matrix_market_keys() {
  return {
      only_for(input_file("problem.matrix", FIELD(problem.matrix_market.matrix),
                          "Matrix Market file (or .mtx.gz; coordinate or dense array) with a square, symmetric matrix "
                          "with positive diagonal (required; a general file's a_ij and a_ji may differ by 1e-10 of the "
                          "larger of them and sqrt(a_ii a_jj), which round-off in assembly stays within); off-diagonal entries "
                          "stored as 0 are left out. A relative path is "
                          "relative to the config file's folder (with --set: to the working directory)."),
               "matrix_market"),
      only_for(input_file("problem.rhs", FIELD(problem.matrix_market.rhs),
                          "Matrix Market file with the right-hand side (n x 1, array or coordinate), relative as "
                          "problem.matrix; empty: b = 1. n x m: m right-hand sides (load cases, up to " +
                              std::to_string(kMaxRightHandSides) + "), solved one after another with one setup "
                          "(the report's `load_cases`; output.solution then holds the n x m solutions)."),
               "matrix_market"),
      only_for(input_file("problem.x0", FIELD(problem.matrix_market.x0),
                          "Matrix Market file with where each solve starts (n x 1, or n x m: one column per "
                          "right-hand side of problem.rhs), relative as problem.matrix; empty: from zero. The "
                          "tolerance stays relative to ||b||: a start that meets it takes no iteration."),
               "matrix_market"),
      only_for(input_file("problem.near_nullspace", FIELD(problem.matrix_market.near_nullspace),
                          "Matrix Market file (n x k, array or coordinate) with the k vectors of a system's "
                          "near-nullspace, the error the coarse levels must represent (PyAMG's B; rigid-body modes "
                          "for elasticity; at most 64), relative as problem.matrix; empty: amg.block_size's unit "
                          "vectors. The cpu backend, on one process or MPI ranks (rank 0 reads the file and deals out each rank's rows)."),
               "matrix_market"),
      only_for(input_file("problem.coordinates", FIELD(problem.matrix_market.coordinates),
                          "Matrix Market file (nodes x 2 or nodes x 3) with the coordinates of the nodes of a linear "
                          "elasticity problem whose unknowns are interleaved node by node (ux, uy[, uz]; for beams, "
                          "plates and shells also the rotations, theta_z in 2D or theta_x, theta_y, theta_z in 3D): "
                          "the near-nullspace is then its rigid-body modes (3 in 2D, 6 in 3D). amg.block_size is "
                          "the unknowns per node: the dimension (set from 1) or, with the rotations, 3 in 2D and 6 "
                          "in 3D. Not with problem.near_nullspace."),
               "matrix_market"),
  };
}

// problem.type elasticity's keys (problems/elasticity.hpp).
std::vector<KeySpec> elasticity_keys() {
  return {
      only_for(list_of(bounded(list("problem.box", FIELD(problem.elasticity.cells), KeyKind::integer_list,
                                    "Cells per direction (x, y[, z]) of the cantilever, each a square (cube) of side "
                                    "1 / (y's count): 2 entries for plane strain, 3 for a solid. It is clamped on "
                                    "its face x = 0 and loaded by its weight (1 per unit volume, in -y); linear "
                                    "triangles or tetrahedra (Kuhn's, 2 or 6 per cell), unknowns (ux, uy[, uz]) "
                                    "per node, the near-nullspace its rigid-body modes (amg.block_size is set to "
                                    "the dimension). The VTK output has the displacement's components."),
                               1, 2147483647.0),
                       2, 3),
               "elasticity"),
      only_for(bounded(number("problem.young_modulus", FIELD(problem.elasticity.young_modulus),
                              "Young's modulus E of the material."),
                       0, kMaxYoungModulus, Excluded::min),
               "elasticity"),
      only_for(bounded(number("problem.poisson_ratio", FIELD(problem.elasticity.poisson_ratio),
                              "Poisson ratio nu of the material, 0 to 0.49 (at 0.5 it is incompressible, and linear "
                              "elements lock)."),
                       0, kMaxPoissonRatio),
               "elasticity"),
  };
}

// An elasticity problem's size against the 32-bit row limit (amg.block_size is the dimension, or not given).
void check_elasticity(const KeyReader& r, const Config& c) {
  const ElasticityParams& p = c.problem.elasticity;
  double rows = p.dimensions();
  for (std::size_t a = 0; a < p.cells.size(); ++a) rows *= static_cast<double>(p.cells[a]) + (a == 0 ? 0 : 1);
  if (rows > 2147483647.0)
    r.fail_at("problem.box", "problem.box gives " + format_number(rows) + " unknowns, more than the 32-bit index "
                             "limit of 2147483647");
  if (c.amg.block_size != 1 && c.amg.block_size != p.dimensions())
    r.fail_at("amg.block_size", "amg.block_size is " + std::to_string(c.amg.block_size) + ", but an elasticity "
                                "problem in " + std::to_string(p.dimensions()) + "D has " +
                                    std::to_string(p.dimensions()) + " unknowns per node");
}

// problem.tissues.<name>.mua / .musp for every tissue: [excitation, emission], replacing the tissue model's
// values (at problem.wavelengths, read before these) where given.
std::vector<KeySpec> tissue_keys() {
  std::vector<KeySpec> keys;
  struct Property {
    const char* key;
    const char* meaning;
    double max;
    double OpticalProperties::*member;
  };
  const Property properties[] = {{"mua", "Absorption coefficient mu_a", 100.0, &OpticalProperties::mua},
                                 {"musp", "Reduced scattering coefficient mu_s'", 1000.0, &OpticalProperties::musp}};
  const TissueTable& table = defaults().problem.mouse.optics;
  for (int t = 1; t < kTissueCount; ++t) {
    const std::string name = tissue_name(static_cast<Tissue>(t));
    for (const Property& p : properties) {
      KeySpec k = declare("problem.tissues." + name + "." + p.key, KeyKind::number_list,
                          std::string(p.meaning) + " of " + name +
                              " at the excitation and emission wavelengths, 1/mm (default: the tissue model at "
                              "750/800 nm).");
      // Model values: six digits say enough (the exact ones are those of problems/tissue_optics.cpp).
      char pair[64];
      std::snprintf(pair, sizeof pair, "[%.6g, %.6g]", table[t][0].*p.member, table[t][1].*p.member);
      k.default_yaml = pair;
      k.read = [t, member = p.member, path = k.path](const KeyReader& r, Config& c) {
        const std::vector<double> values = r.number_list(path);
        for (int band = 0; band < 2; ++band) c.problem.mouse.optics[t][band].*member = values[band];
      };
      keys.push_back(only_for(list_of(bounded(std::move(k), 0.0, p.max, Excluded::min), 2, 2), "mouse"));
    }
  }
  return keys;
}

// The wavelengths also select the tissue model's table.
KeySpec wavelengths_key() {
  KeySpec k = list("problem.wavelengths", FIELD(problem.mouse.wavelengths), KeyKind::integer_list,
                   "Excitation and emission wavelengths in nm, the emission's not shorter, each one of 650, 700, 750, "
                   "800 (where the tissue "
                   "model's chromophore spectra are tabulated); the tissue defaults below are for 750/800 nm and "
                   "follow the wavelengths given here.");
  k.read = [set_wavelengths = k.read, path = k.path](const KeyReader& r, Config& c) {
    set_wavelengths(r, c);
    MouseParams& m = c.problem.mouse;
    if (m.wavelengths[1] < m.wavelengths[0])  // a Stokes shift is always to the red
      r.fail_at(path, path + ": the emission wavelength (" + std::to_string(m.wavelengths[1]) +
                          " nm) is shorter than the excitation's (" + std::to_string(m.wavelengths[0]) +
                          " nm): fluorophores emit at longer wavelengths (give [excitation, emission])");
    try {
      m.optics = tissue_table(m.wavelengths[0], m.wavelengths[1]);
    } catch (const InputError& e) {
      r.fail_at(path, path + ": " + e.what());
    }
  };
  return only_for(list_of(bounded(std::move(k), 650, 800), 2, 2), "mouse");
}

std::vector<KeySpec> mouse_keys() {
  std::vector<KeySpec> keys = {
      only_for(bounded(number("problem.voxel_size", FIELD(problem.mouse.phantom.voxel_size),
                              "Voxel edge in mm. 0.28 gives about 0.9 million voxels inside the animal (the scale "
                              "of mouse280 in Gremse et al. 2015), 0.56 about 110 thousand."),
                       0.0, 2.0, Excluded::min),  // coarser resolves too few voxels (problems/mouse.cpp)
               "mouse"),
      wavelengths_key(),
      only_for(flag("problem.limbs", FIELD(problem.mouse.phantom.limbs), "Include the four legs."), "mouse"),
      only_for(flag("problem.tail", FIELD(problem.mouse.phantom.tail),
                    "Include a 6 cm tail (it doubles the bounding box, and with it the VTK file)."),
               "mouse"),
      only_for(bounded(number("problem.refractive_index", FIELD(problem.mouse.refractive_index),
                              "Refractive index of tissue against air: sets the Robin boundary condition's "
                              "reflection (1 = index matched)."),
                       1.0, 3.0),
               "mouse"),
      only_for(choice("problem.reflection", FIELD(problem.mouse.reflection),
                      {{"exact", ReflectionModel::exact}, {"groenhuis", ReflectionModel::groenhuis}},
                      "How the Robin factor A follows from the refractive index: `exact` integrates Fresnel's "
                      "reflectance (Haskell et al. 1994; A = 2.76 at n = 1.37, 1 at n = 1), `groenhuis` uses the "
                      "polynomial fit of Groenhuis et al. 1983 as many codes do (it fits R_phi, not R_eff: A about "
                      "10 % higher, 3.05 at n = 1.37)."),
               "mouse"),
      only_for(list_of(pairs("problem.sources.spots", FIELD(problem.mouse.spots),
                             "Laser spots [x, y] in mm (x from nose to tail, y to the animal's right, 0 at the trunk's "
                             "centre line); the beam points down onto the back. Empty: the scan grid."),
                       0, 4096),
               "mouse"),
      only_for(list_of(pairs("problem.detectors", FIELD(problem.mouse.detectors),
                             "Points [x, y] in mm on the back where the camera's pixel is read: the exitance of "
                             "excitation and emission light there and their ratio (the normalised Born ratio) per "
                             "source go into the report's `sources[].detectors`."),
                       0, 4096),
               "mouse"),
      only_for(list_of(bounded(list("problem.sources.scan_grid", FIELD(problem.mouse.scan_grid), KeyKind::integer_list,
                                    "Spots along x and y of a regular scan over the back (x -16..30 mm, y -5..5 mm), "
                                    "used when `spots` is empty."),
                               1, 64),
                       2, 2),
               "mouse"),
      only_for(bounded(number("problem.sources.power", FIELD(problem.mouse.source_power),
                              "Power of each source (the fluence scales with it)."),
                       0.0, std::nullopt, Excluded::min),
               "mouse"),
      only_for(list_of(list("problem.tumour.centre", FIELD(problem.mouse.phantom.tumour_centre), KeyKind::number_list,
                            "Centre of the spherical tumour, mm (the default lies under the back, left of the "
                            "spine: y < 0)."),
                       3, 3),
               "mouse"),
      only_for(bounded(number("problem.tumour.radius", FIELD(problem.mouse.phantom.tumour_radius),
                              "Radius of the tumour in mm; 0: no tumour. It must lie inside the animal, clear of bone (the "
                              "spine, the skull; in the brain it may grow), and hold at least one voxel centre."),
                       0.0, 20.0),
               "mouse"),
      only_for(flag("problem.fluorescence", FIELD(problem.mouse.fluorescence),
                    "Also solve the fluorescence emission per source (source term: fluorophore yield times the "
                    "excitation fluence), with its own hierarchy at the emission wavelength."),
               "mouse"),
      only_for(bounded(number("problem.fluorophore.tumour", FIELD(problem.mouse.tumour_yield),
                              "Fluorophore yield (quantum yield times its absorption, 1/mm) in the tumour; at most "
                              "the tumour's absorption at the excitation wavelength, of which the fluorophore's is "
                              "part."),
                       0.0, 100.0),
               "mouse"),
      only_for(bounded(number("problem.fluorophore.background", FIELD(problem.mouse.background_yield),
                              "Fluorophore yield (1/mm) in the rest of the animal (non-specific uptake); at most each "
                              "tissue's absorption at the excitation wavelength."),
                       0.0, 100.0),
               "mouse"),
  };
  for (KeySpec& k : tissue_keys()) keys.push_back(std::move(k));
  return keys;
}

std::vector<KeySpec> amg_keys() {
  return {
      text("amg.spgemm", FIELD(amg.spgemm),
           "SpGEMM backend for the Galerkin product P^T (A P) and, except on cpu, the prolongator smoothing "
           "A_f T (the cpu backend gathers that one in one pass: T has one entry per row; a system's it "
           "multiplies too), one of the chosen "
           "`backend`'s (`amgsolve --list-backends`); empty: the backend's default, `" +
               std::string(default_spgemm_backend(BackendKind::cpu)) + "` on cpu, `" +
               default_spgemm_backend(BackendKind::cuda) + "` on cuda."),
      flag("amg.compare_spgemm", FIELD(compare_spgemm),
           "Also run every available SpGEMM backend on every product of the setup and print and report the "
           "comparison (as `--compare-spgemm` does); the hierarchy is still amg.spgemm's."),
      bounded(integer("amg.compare_runs", FIELD(compare_spgemm_runs),
                      "Timed runs of every backend on every product in the SpGEMM comparison, after one untimed "
                      "warm-up run each; the backends' order rotates from run to run, and the table gives the "
                      "median and the spread (fastest and slowest run)."),
              1, 1000),
      retired("amg.device", "backend"),
      library_bounded(integer("amg.coarse_size", FIELD(amg.coarse_size),
                      "Stop coarsening once a level has at most this many rows; that level is solved by sparse "
                      "Cholesky (LDL^T). A coarsest level of more rows (where coarsening stopped early: no strong "
                      "couplings, aggregation that no longer pays, amg.max_levels) is factorised only if that is cheap "
                      "(at most " + std::to_string(kMaxDirectRows) + " rows and 2^" +
                      std::to_string(std::ilogb(kMaxEarlyCoarsestWork)) + " multiply-adds by its symbolic "
                      "analysis), else smoothed, " + std::to_string(kCoarsestSmoothingSteps) + " steps of its smoother.")),
      library_bounded(integer("amg.max_levels", FIELD(amg.max_levels), "Upper limit on the number of levels.")),
      library_bounded(integer("amg.block_size", FIELD(amg.block_size),
                      "Unknowns per node of a system, interleaved: rows b k to b k + b - 1 are node k's (elasticity: "
                      "its displacements, 2 or 3, with the rotations of beams, plates and shells 3 in 2D or 6 in "
                      "3D). Strength and aggregation then work on nodes (a block's Frobenius norm), "
                      "and the tentative prolongator carries the near-nullspace (problem.near_nullspace or "
                      "problem.coordinates; by default the b unit vectors of the components) to every level by a "
                      "QR factorisation per aggregate. 1: a scalar problem. Above 1, the cpu backend, on one "
                      "process or MPI ranks (each rank whole blocks of 2048 nodes: the same hierarchy and iterates "
                      "on any rank count); a singular system (a structure free to move) is solved on its range "
                      "(amg.nullspace).")),
      library_bounded(integer("amg.improve_near_nullspace", FIELD(amg.improve_near_nullspace),
                      "For a system: damped Jacobi sweeps (in amg.smoother.diagonal's D, omega = "
                      "amg.prolongator_damping / rho(D^-1 A)) that relax each near-nullspace vector on A x = 0 "
                      "before the finest aggregates' QR, so the coarse levels fit the low-energy vectors the "
                      "matrix has near its boundaries (PyAMG's improve_candidates). 0: the vectors as given. A "
                      "scalar problem's near-nullspace (the constant) and a singular system's (its nullspace must "
                      "reach every level exactly) are not relaxed; a re-setup keeps the first matrix's.")),
      library_bounded(number("amg.strength_threshold", FIELD(amg.strength_threshold),
                     "theta in the strength test |a_ij| >= theta sqrt(|a_ii a_jj|). 0.02 keeps all links of the "
                     "5/7/9/27-point Laplacians (weakest: 1/26 for 27pt) and drops the weak direction of "
                     "anisotropic problems with epsilon below about 0.04.")),
      bounded(integer("amg.seed", FIELD(amg.seed),
                      "Seed of the hash that orders MIS-2 candidates, 0 to 2^63 - 1. The hierarchy depends only on "
                      "the matrix and this seed (not on the thread count)."),
              0, std::nullopt),
      library_bounded(number("amg.prolongator_damping", FIELD(amg.prolongator_damping),
                     "P = (I - omega D^-1 A_f) T with omega = prolongator_damping / rho(D^-1 A_f); 4/3 is the "
                     "classical smoothed-aggregation choice.")),
      choice("amg.nullspace", FIELD(amg.nullspace),
             names_of(NullspaceChoice{}),
             "The matrix's nullspace. `auto`: the constants when every row sums to zero (a pure-Neumann or graph "
             "Laplacian: singular, solved on its range with a right-hand side that sums to zero), else none; for "
             "a system (amg.block_size, problem.near_nullspace or problem.coordinates) the combinations of its "
             "near-nullspace vectors that A maps to zero (a structure free to move: its rigid-body modes; "
             "solved on its range, the loads in equilibrium), and none for problem.type elasticity (its body is "
             "clamped); "
             "`constant`: declared (the rows must sum to zero); `near_nullspace`: a system's near-nullspace vectors "
             "declared to be the nullspace (A must map each to zero); `none`: the matrix is taken to be "
             "nonsingular."),
      choice("amg.spectral_radius", FIELD(amg.spectral_radius),
             names_of(SpectralRadius{}),
             "Estimate of rho(D^-1 A) on each level, for the prolongator weight and the Chebyshev interval. "
             "`gershgorin`: max_i sum_j |a_ij| / a_ii, one pass, never below rho and nearly exact on M-matrices; "
             "`lanczos`: `amg.lanczos_steps` steps of Lanczos times `eigenvalue_safety`, sharper where rows have "
             "large positive off-diagonal entries."),
      library_bounded(integer("amg.lanczos_steps", FIELD(amg.lanczos_steps),
                      "Lanczos steps for the estimate of rho(D^-1 A) on each level (`spectral_radius: lanczos`); "
                      "fewer than 4 underestimate it so far that the Chebyshev smoother amplifies some error.")),
      choice("amg.smoother.type", FIELD(amg.smoother.type),
             names_of(SmootherType{}),
             "Smoother of the V-cycle: Chebyshev polynomial in D^-1 A, damped Jacobi, or `gauss_seidel`: a "
             "forward and a backward l1 hybrid Gauss-Seidel sweep (Baker et al. 2011), Gauss-Seidel within the "
             "level's fixed blocks (2,048 rows, a system's nodes, on the finest level, 64 aggregates on a coarse "
             "one; the same on any thread and rank count) and Jacobi between them, pointwise; fewer iterations "
             "than Chebyshev of degree 2 near a mass matrix, more on the other problems measured, each about "
             "twice the cost (docs/BENCHMARKS.md); on the cpu backend only."),
      choice("amg.smoother.diagonal", FIELD(amg.smoother.diagonal),
             names_of(SmootherDiagonal{}),
             "D in the smoother's D^-1 A. `point`: the diagonal entries; `node`: for a system (amg.block_size, "
             "problem.near_nullspace, problem.type elasticity) the diagonal blocks of its nodes (point-block Jacobi), on every level (a "
             "coarse node has one row per near-nullspace vector its aggregate keeps), with rho(D^-1 A) and Gershgorin's bound for "
             "those blocks; a scalar problem's nodes are its rows. `auto`: `node` for a system, else `point`."),
      library_bounded(integer("amg.smoother.degree", FIELD(amg.smoother.degree),
                      "Chebyshev: polynomial degree (matrix-vector products per smoothing step).")),
      library_bounded(number("amg.smoother.chebyshev_ratio", FIELD(amg.smoother.chebyshev_ratio),
                     "Chebyshev: the polynomial is small on [lambda_max / ratio, lambda_max] of D^-1 A.")),
      library_bounded(number("amg.smoother.eigenvalue_safety", FIELD(amg.smoother.eigenvalue_safety),
                     "Factor applied to the Lanczos estimate of lambda_max(D^-1 A), which is a lower bound; the "
                     "Chebyshev interval's upper end is the smaller of that product and Gershgorin's bound "
                     "max_i sum_j |a_ij| / a_ii, which rho never exceeds.")),
      library_bounded(integer("amg.smoother.sweeps", FIELD(amg.smoother.sweeps), "Jacobi: sweeps per smoothing step.")),
      library_bounded(number("amg.smoother.omega", FIELD(amg.smoother.omega),
                     "Jacobi: damping weight; 0 selects 4 / (3 rho(D^-1 A)) on each level.")),
      library_bounded(integer("amg.smoother.pre_steps", FIELD(amg.pre_smooth),
                      "Smoothing steps before restriction; with solver.type pcg equal to post_steps (a symmetric cycle).")),
      library_bounded(integer("amg.smoother.post_steps", FIELD(amg.post_smooth), "Smoothing steps after prolongation.")),
      flag("amg.keep_structure", FIELD(amg.keep_structure),
           "Keep what a re-setup for new values on the same pattern needs (the library's Solver::rebuild, the "
           "Python Solver.rebuild): each level's strength classification, tentative prolongator and A P pattern. "
           "The re-setup then keeps the aggregates and recomputes the rest: on the cpu backend the products by "
           "their numeric phase only (by the SpGEMM from a level whose filtered matrix has another pattern "
           "than before; by the SpGEMM backend in full where it sums in another order than A's rows: heap, "
           "rmerge-cpu, the baselines eigen and graphblas), over MPI ranks the same, the products' plans fetching only the values of the rows "
           "they read (by their grids with summa2d and split3d), on the cuda backend by its SpGEMM on the "
           "device. Costs about the finest matrix's column indices in memory; over MPI ranks more, for the "
           "plans (about 1.6 times the hierarchy: docs/BENCHMARKS.md, \"Over MPI ranks\"), and the first "
           "setup takes about a tenth longer."),
  };
}

std::vector<KeySpec> solver_keys() {
  return {
      choice("solver.type", FIELD(solver.type), names_of(SolverType{}),
             "`pcg`: conjugate gradients preconditioned by one V-cycle; `amg`: V-cycles as a stand-alone "
             "iteration."),
      choice("solver.precision", FIELD(solver.precision),
             names_of(Precision{}),
             "`double`: everything in double precision; `mixed`: the AMG hierarchy and V-cycle in float inside "
             "the double-precision outer iteration (less memory traffic, same final tolerance), for matrices whose "
             "entries are at most 2e+31 and whose diagonal entries at least 2e-31 times the largest diagonal "
             "entry's power of two (a matrix beyond 2^+-64 is set up and solved divided by it, in double too; "
             "float's range less headroom for the coarse levels; others are refused, naming the entry). Smaller "
             "off-diagonal entries round towards zero in the float cycle, which only the preconditioner sees."),
      retired("solver.device", "backend"),
      choice("solver.spmv_format", FIELD(solver.spmv_format),
             names_of(SpmvFormat{}),
             "Storage of the operators on the cuda backend: `csr` (cuSPARSE SpMV), `ellpack-r`, `pjds` (Kreutzer "
             "et al. 2012), or `auto`: the format with the fewest predicted bytes moved per PCG iteration. The "
             "footprint of every format on every level is printed and reported either way. The cpu backend "
             "multiplies in CSR with `csr`; with any other value, in its sliced ELLPACK (blocks of " +
                 std::to_string(SlicedEllpack<double>::kChunk) +
                 " rows summed side by side with AVX-512/AVX2, the same results) the level matrices whose padding "
                 "is at most " + padding_percent(kSlicedPaddingBesideCsr) +
                 " and the P and R whose padding is at most " + padding_percent(kSlicedPaddingReplacingCsr) +
                 " (their CSR released), and in CSR the rest. Over MPI ranks, with any value but `csr`, each rank "
                 "multiplies a level matrix's interior chunks (rows that read no other rank's values) in a sliced "
                 "copy where its padding is at most " + padding_percent(kSlicedPaddingBesideCsr) +
                 ", the other rows, P and R in CSR."),
      choice("solver.halo_exchange", FIELD(solver.halo_exchange),
             names_of(HaloMode{}),
             "Over MPI ranks, how each matrix-vector product meets its halo exchange (Kreutzer et al. 2011, "
             "section 5): `overlap` computes the rows that need no other rank's values while the messages "
             "travel; `vector` waits for the messages first; `task` has one thread of each rank wait for them "
             "(driving MPI's progress) while the rank's other threads compute, then join in (with one thread a "
             "rank it is `overlap`). The result is the same bit for bit; one process ignores it, and so does "
             "`backend: cuda` over ranks, which exchanges first (`vector`). The report's "
             "`setup.halo_exchange` says which mode ran."),
      library_bounded(number("solver.tolerance", FIELD(solver.tolerance),
                     "Stop when ||b - A x|| <= tolerance * ||b|| (relative to b, wherever x starts: see solver.initial_guess).")),
      library_bounded(number("solver.absolute_tolerance", FIELD(solver.absolute_tolerance),
                     "Also stop when ||b - A x|| <= absolute_tolerance, in b's own units (PETSc's atol, hypre's "
                     "absolute tolerance): for a right-hand side that is nearly zero, which the relative test would "
                     "follow to its last digits. 0: the relative test alone.")),
      library_bounded(integer("solver.max_iterations", FIELD(solver.max_iterations),
                      "Iteration limit; reaching it without convergence exits with status 3.")),
      choice("solver.initial_guess", FIELD(initial_guess), names_of(InitialGuess{}),
             "Where each solve starts: `zero`, or `previous_step`: with problem.steps, each step after the first "
             "from the step before's solution (the warm start of time stepping: fewer iterations where the "
             "solution changes little between steps), the first from zero. The tolerance stays relative to "
             "||b||. A matrix_market problem starts from problem.x0 where it is given. (The library: "
             "SolveOptions::initial_guess; Python: solve(b, x0=...).)"),
      bounded(integer("solver.print_every", FIELD(print_every),
                      "Print a progress line every this many iterations (0: only the summary)."),
              0, kMaxInt),
  };
}

std::vector<KeySpec> output_keys() {
  return {
      file("output.report", FIELD(output.report), "JSON report file (overridden by --report; `--report ''` writes none); empty: none. Output paths, "
           "unlike input files, are relative to the working directory (where the command runs). An existing file "
           "is replaced only if amgsolve wrote it (or it is empty)."),
      file("output.vtk", FIELD(output.vtk),
           "VTK image data file (.vti) with solution, right-hand side and finest aggregates, for grid problems "
           "(overridden by --vtk; `--vtk ''` writes none); empty: none."),
      file("output.spgemm_csv", FIELD(output.spgemm_csv),
           "CSV file for the SpGEMM comparison table (with amg.compare_spgemm or --compare-spgemm); empty: none."),
      file("output.skin", FIELD(output.skin),
           "Mouse: VTK PolyData file (.vtp) of the skin, the voxel faces on the boundary, with the exitance "
           "(W/mm^2) of excitation and emission light per source in `output.vtk_sources`; empty: none."),
      file("output.camera", FIELD(output.camera),
           "Mouse: VTK image (.vti) of what a camera above the back records, an orthographic projection with one "
           "pixel per voxel column: radiance (exitance / pi) per source in `output.vtk_sources`; empty: none."),
      file("output.solution", FIELD(output.solution),
           "Matrix Market file (n x 1 array) for the solution vector (n x m for problem.rhs's m load cases); "
           "empty: none."),
      list_of(bounded(list("output.vtk_sources", FIELD(output.vtk_sources), KeyKind::integer_list,
                           "Mouse: the sources (numbered from 1) whose fluence goes into the VTK file, and whose "
                           "exitance into output.skin and output.camera; empty: all."),
                      1, kMaxInt),
              0, 4096),
  };
}

std::vector<KeySpec> make_schema() {
  std::vector<KeySpec> keys = {
      choice("backend", FIELD(backend_choice),
             names_of(BackendChoice{}),
             "Where the setup and the solve run: `cpu` (OpenMP threads), `cuda` (a GPU: the whole setup on the "
             "device, with the GPU SpGEMM backends, only the coarsest level factorised on the host; PCG and the "
             "V-cycle on the device; not yet run on a GPU), or `auto`: cuda when a GPU can be used, else cpu (cpu "
             "for a system: amg.block_size above 1, problem.near_nullspace, problem.coordinates or problem.type "
             "elasticity). "
             "Under several MPI ranks the setup runs on each rank's CPU cores (with amg.spgemm's cpu or "
             "distributed backends) and `cuda` runs the solve on each rank's GPU; `auto` is cpu there."),
      choice("problem.type", FIELD(problem.type), names_of(ProblemType{}),
             "Problem family: a generated Poisson problem, a matrix read from Matrix Market files, light "
             "diffusion in a voxel mouse (diffuse optical / fluorescence tomography, many sources), or a "
             "generated linear-elasticity cantilever (a system: set up with its rigid-body modes)."),
  };
  for (auto group : {poisson_keys(), matrix_market_keys(), elasticity_keys(), mouse_keys(), amg_keys(), solver_keys(),
                     output_keys()})
    for (KeySpec& k : group) keys.push_back(std::move(k));
  return keys;
}

#undef FIELD

const char* kind_name(KeyKind k) {
  switch (k) {
    case KeyKind::integer: return "integer";
    case KeyKind::number: return "number";
    case KeyKind::text: return "string";
    case KeyKind::choice: return "one of";
    case KeyKind::integer_list: return "list of integers";
    case KeyKind::number_list: return "list of numbers";
    case KeyKind::pair_list: return "list of [x, y] pairs";
    case KeyKind::path: return "file path";
  }
  return "?";
}

std::string describe_type(const KeySpec& k) {
  std::ostringstream out;
  out << std::setprecision(15);
  out << kind_name(k.kind);
  if (k.kind == KeyKind::choice) {
    out << " ";
    for (std::size_t i = 0; i < k.choices.size(); ++i) out << (i ? " \\| " : "") << "`" << k.choices[i] << "`";
  }
  if (k.kind == KeyKind::integer_list || k.kind == KeyKind::number_list || k.kind == KeyKind::pair_list)
    out << " (" << k.list_min << "-" << k.list_max << " entries)";
  if (k.min || k.max) {
    out << ", " << (k.min ? (k.min_exclusive ? "> " : ">= ") : "");
    if (k.min) out << *k.min;
    if (k.min && k.max) out << ", ";
    if (k.max) out << (k.max_exclusive ? "< " : "<= ") << *k.max;
  }
  return out.str();
}

// ---- the rules between keys

void check_poisson(const KeyReader& r, const PoissonParams& p) {
  const int dims = stencil_dimensions(p.stencil);
  const bool face_stencil = p.stencil == Stencil::p5 || p.stencil == Stencil::p7;
  if (p.variable_coefficients() && !face_stencil)
    r.fail_at("problem.stencil", "problem.anisotropy and problem.coefficient need stencil 5pt or 7pt");
  if (p.steps > 1 && p.coefficient != Coefficient::checkerboard)
    r.fail_at("problem.steps", "problem.steps needs problem.coefficient: checkerboard (the coefficient that changes "
                               "from step to step)");
  if (!p.anisotropy.empty() && static_cast<int>(p.anisotropy.size()) != dims)
    r.fail_at("problem.anisotropy", "problem.anisotropy has " + std::to_string(p.anisotropy.size()) +
                                        " entries but stencil " + to_string(p.stencil) + " needs " +
                                        std::to_string(dims));
  if (static_cast<int>(p.size.size()) != dims)
    r.fail_at("problem.size", "problem.size has " + std::to_string(p.size.size()) + " entries but stencil " +
                                  to_string(p.stencil) + " needs " + std::to_string(dims));
  if (p.coefficient == Coefficient::checkerboard && static_cast<int>(p.size.size()) == dims) {
    const std::int64_t smallest = *std::min_element(p.size.begin(), p.size.end());
    if (p.cells > smallest)  // cells of less than a grid point: every point fell in an even cell, k = 1 throughout
      r.fail_at("problem.cells", "problem.cells: " + std::to_string(p.cells) + " is more than the " +
                                     std::to_string(smallest) + " unknowns of problem.size's shortest side (a cell "
                                     "needs at least one grid point)");
  }
  if (p.boundary == Boundary::neumann && p.rhs == PoissonRhs::ones)
    r.fail_at("problem.rhs", "problem.rhs ones has no solution with boundary neumann (the rows sum to zero, so b "
                             "must too): use rhs: manufactured");
  double unknowns = 1;  // each entry is below 2^31, so the double product is exact enough to compare
  for (std::int64_t n : p.size) unknowns *= static_cast<double>(n);
  if (unknowns > 2147483647.0) {
    char count[32];
    std::snprintf(count, sizeof count, "%.3g", unknowns);
    r.fail_at("problem.size", std::string("problem.size gives ") + count +
                                  " unknowns, more than the 32-bit index limit of 2147483647");
  }
  if (!p.anisotropy.empty()) {
    const auto [low, high] = std::minmax_element(p.anisotropy.begin(), p.anisotropy.end());
    if (*high > kMaxCoefficient * *low)
      r.fail_at("problem.anisotropy", std::string("problem.anisotropy: the largest entry is more than 1e10 times "
                                                  "the smallest (") +
                                          kCoefficientRangeReason + ")");
  }
}

void check_vtk_sources_listed_once(const KeyReader& r, std::vector<std::int64_t> sources) {
  std::sort(sources.begin(), sources.end());
  const auto twice = std::adjacent_find(sources.begin(), sources.end());
  if (twice != sources.end())
    r.fail_at("output.vtk_sources", "output.vtk_sources lists source " + std::to_string(*twice) + " twice");
}

// The mouse's points (laser spots, detectors) each once: a point given twice would be solved or read twice
// without a word.
void check_points_listed_once(const KeyReader& r, const char* key, const char* what,
                              const std::vector<std::array<double, 2>>& points) {
  for (std::size_t j = 1; j < points.size(); ++j)
    for (std::size_t i = 0; i < j; ++i)
      if (points[i] == points[j])
        r.fail_at(key, std::string(key) + ": " + what + " " + std::to_string(j + 1) + " is " + what + " " +
                           std::to_string(i + 1) + " again");
}

// The diffusion approximation holds where scattering dominates absorption (mu_a << mu_s'): a tissue given
// mu_a at or above its mu_s' would be solved, without meaning.
void check_diffusive_tissues(const KeyReader& r, const TissueTable& optics) {
  static constexpr const char* band_name[2] = {"excitation", "emission"};
  for (int t = 1; t < kTissueCount; ++t)
    for (int band = 0; band < 2; ++band) {
      const OpticalProperties& o = optics[t][band];
      if (o.mua < o.musp) continue;
      const std::string tissue = std::string("problem.tissues.") + tissue_name(static_cast<Tissue>(t));
      r.fail_at(r.is_set(tissue + ".mua")    ? tissue + ".mua"
                : r.is_set(tissue + ".musp") ? tissue + ".musp"
                                             : std::string("problem.wavelengths"),
                tissue + ": mua " + format_number(o.mua) + "/mm is not below musp " + format_number(o.musp) +
                    "/mm at the " + band_name[band] + " wavelength: the diffusion approximation needs scattering "
                    "to dominate absorption (mua well below musp)");
    }
}

void check_mouse(const KeyReader& r, const Config& c) {
  const MouseParams& m = c.problem.mouse;
  check_points_listed_once(r, "problem.sources.spots", "spot", m.spots);
  check_points_listed_once(r, "problem.detectors", "point", m.detectors);
  check_diffusive_tissues(r, m.optics);
}

// Whether the config describes a system (amg/system_setup.hpp): unknowns per node, a matrix_market
// problem's near-nullspace vectors or coordinates, or an elasticity problem.
bool configures_a_system(const Config& c) {
  const MatrixMarketParams& files = c.problem.matrix_market;
  return c.amg.block_size > 1 || !files.near_nullspace.empty() || !files.coordinates.empty() ||
         c.problem.type == ProblemType::elasticity;
}

// The backend is resolved here, once, and amg.spgemm checked against (or defaulted to) the SpGEMM backends of
// where the setup runs: the backend's own on one process, the cpu's (and the distributed ones) on several
// MPI ranks, where `auto` is the cpu on every rank whether or not a rank sees a GPU.
void check_backend(const KeyReader& r, Config& c) {
  const bool ranks = c.ranks > 1;
  // A system (amg/system_setup.hpp) is set up on the cpu backend only, so far, and Gauss-Seidel's sweeps
  // (amg/gauss_seidel.hpp) run there only.
  const bool gauss_seidel = c.amg.smoother.type == SmootherType::gauss_seidel;
  try {
    c.backend = resolve_backend(setup_choice(c.backend_choice, configures_a_system(c) || gauss_seidel, ranks));
  } catch (const InputError& e) {
    r.fail_at("backend", std::string("backend: ") + e.what());
  }
  if (gauss_seidel && c.backend == BackendKind::cuda) r.fail_at("amg.smoother.type", kGaussSeidelOnCpuOnly);
  if (c.amg.spgemm == "compare")
    r.fail_at("amg.spgemm", "amg.spgemm: 'compare' is not a SpGEMM backend: set amg.compare_spgemm: true (or pass "
                            "--compare-spgemm) to compare them all beside amg.spgemm's setup");
  const BackendKind setup = ranks ? BackendKind::cpu : c.backend;
  if (c.amg.spgemm.empty()) c.amg.spgemm = default_spgemm_backend(setup);
  try {
    SpgemmRegistry::instance().get(c.amg.spgemm, setup);
  } catch (const InputError& e) {
    r.fail_at("amg.spgemm", std::string("amg.spgemm: ") + e.what() +
                                (ranks && c.backend != BackendKind::cpu ? " (on several MPI ranks the setup runs on "
                                                                          "each rank's CPU cores)"
                                                                        : ""));
  }
}

}  // namespace

const std::vector<KeySpec>& config_schema() {
  static const std::vector<KeySpec> schema = make_schema();
  return schema;
}

// amg.nullspace's declared choices are each for one kind of problem: constant a scalar one's, near_nullspace a
// system's (amg/system_nullspace.hpp).
void check_nullspace(const KeyReader& r, const Config& c, bool problem_given) {
  const bool system = configures_a_system(c);
  if (system && c.amg.nullspace == NullspaceChoice::constant)
    r.fail_at("amg.nullspace", "amg.nullspace constant is a scalar problem's: a system's nullspace is found among its "
                               "near-nullspace vectors (auto, or near_nullspace to declare them all)");
  if (problem_given && !system && c.amg.nullspace == NullspaceChoice::near_nullspace)  // vectors may come apart
    r.fail_at("amg.nullspace", "amg.nullspace near_nullspace is a system's: it needs amg.block_size above 1, "
                               "problem.near_nullspace or problem.coordinates");
}

void check_config(const KeyReader& r, Config& c, bool problem_given) {
  if (c.problem.type == ProblemType::poisson) check_poisson(r, c.problem.poisson);
  if (c.problem.type == ProblemType::elasticity) check_elasticity(r, c);
  if (c.problem.type == ProblemType::mouse) check_mouse(r, c);
  if (c.problem.type == ProblemType::matrix_market && c.problem.matrix_market.matrix.empty())
    r.fail_at("problem.type", "problem.matrix is required for problem.type matrix_market");
  check_backend(r, c);
  check_nullspace(r, c, problem_given);
  const bool post_given = r.is_set("amg.smoother.post_steps");
  if (const std::string problem = smoothing_steps_problem(c.amg.pre_smooth, c.amg.post_smooth, c.solver.type, post_given);
      !problem.empty())
    r.fail_at(post_given ? "amg.smoother.post_steps" : "amg.smoother.pre_steps", problem);
  check_vtk_sources_listed_once(r, c.output.vtk_sources);
  // Keys that would do nothing here are refused, as output.skin is for a problem without a skin.
  if (!c.output.vtk_sources.empty() && c.problem.type != ProblemType::mouse)
    r.fail_at("output.vtk_sources", "output.vtk_sources: only a mouse problem has sources to choose from");
  const bool time_steps = c.problem.type == ProblemType::poisson && c.problem.poisson.steps > 1;
  if (time_steps && !r.is_set("amg.keep_structure")) c.amg.keep_structure = true;  // what the steps are for
  if (c.initial_guess == InitialGuess::previous_step && !time_steps)
    r.fail_at("solver.initial_guess", "solver.initial_guess previous_step starts each time step from the step "
                                      "before's solution: it needs problem.steps above 1 (a poisson problem)");
  if (!c.output.spgemm_csv.empty() && !c.compare_spgemm)
    r.fail_at("output.spgemm_csv", "output.spgemm_csv needs amg.compare_spgemm: true (or --compare-spgemm)");
  // A checkerboard's, a fluorophore's or a tumour's keys, given where there is none, would change nothing (a
  // contrast of 1e6 ran as the constant coefficient). Where --set switches the thing off (`switch_key`) the
  // file's keys of it are kept quiet: `--set problem.tumour.radius=0` on configs/mouse.yaml asks for the
  // animal without its tumour.
  const auto only_with = [&](std::initializer_list<const char*> keys, bool active, const char* switch_key,
                             const std::string& needs) {
    for (const char* key : keys)
      if (!active && r.is_set(key) && !(r.is_overridden(switch_key) && !r.is_overridden(key)))
        r.fail_at(key, std::string(key) + " does nothing without " + needs);
  };
  only_with({"amg.compare_runs"}, c.compare_spgemm, "amg.compare_spgemm",
            "amg.compare_spgemm: true (or --compare-spgemm)");
  // One smoother's keys under the other (a Jacobi config given `degree: 4`, README's remedy for Chebyshev),
  // and Lanczos' step count under Gershgorin's bound, would run as if not given.
  only_with({"amg.smoother.degree", "amg.smoother.chebyshev_ratio", "amg.smoother.eigenvalue_safety"},
            c.amg.smoother.type == SmootherType::chebyshev, "amg.smoother.type", "amg.smoother.type: chebyshev");
  only_with({"amg.smoother.sweeps", "amg.smoother.omega"}, c.amg.smoother.type == SmootherType::jacobi,
            "amg.smoother.type", "amg.smoother.type: jacobi");
  only_with({"amg.smoother.diagonal"}, c.amg.smoother.type != SmootherType::gauss_seidel, "amg.smoother.type",
            "amg.smoother.type chebyshev or jacobi (gauss_seidel sweeps point by point)");
  only_with({"amg.lanczos_steps"}, c.amg.spectral_radius == SpectralRadius::lanczos, "amg.spectral_radius",
            "amg.spectral_radius: lanczos");
  only_with({"problem.contrast", "problem.cells"},
            c.problem.type != ProblemType::poisson || c.problem.poisson.coefficient == Coefficient::checkerboard,
            "problem.coefficient", "problem.coefficient: checkerboard");
  only_with({"problem.fluorophore.tumour", "problem.fluorophore.background"},
            c.problem.type != ProblemType::mouse || c.problem.mouse.fluorescence, "problem.fluorescence",
            "problem.fluorescence: true");
  const bool tumour = c.problem.type != ProblemType::mouse || c.problem.mouse.phantom.tumour_radius > 0;
  only_with({"problem.tumour.centre", "problem.fluorophore.tumour", "problem.tissues.tumour.mua",
             "problem.tissues.tumour.musp"},
            tumour, "problem.tumour.radius", "a tumour (problem.tumour.radius above 0)");
}

bool is_config_section(const std::string& path) {
  for (const KeySpec& k : config_schema())
    if (k.path.size() > path.size() && k.path.compare(0, path.size(), path) == 0 && k.path[path.size()] == '.')
      return true;
  return false;
}

std::string config_reference_markdown() {
  std::ostringstream out;
  out << "# Configuration reference\n\n"
      << "Generated by `amgsolve --config-reference` from config/schema.cpp, the one declaration of every key;\n"
      << "a test fails when this file and the code disagree. The defaults are those of the parameter structs\n"
      << "(amg/params.hpp, solver/solve_result.hpp, problems/), where the reason for each value is written.\n\n"
      << "A configuration file is YAML with the key `backend` and the sections `problem`, `amg`, `solver` and\n"
      << "`output`. Every key is optional unless marked required (a file with no settings at all, or only\n"
      << "empty sections, is refused unless --set gives some); unknown keys and values of the wrong type are\n"
      << "errors that name the key, the file and the line. Any key can be overridden on the command line with\n"
      << "`--set key.path=value` (the value is YAML: `--set problem.size=[64,64,64]`). \"empty\" below means\n"
      << "the empty string, `''` (quoted for the shell too: `--set \"output.vtk=''\"`), or `[]` for a list; a key\n"
      << "written without a value is an error (a section left empty, such as `amg:` with only a comment under\n"
      << "it, is not, where other sections hold settings).\n";
  std::string section, retired;
  for (const KeySpec& k : config_schema()) {
    if (!k.replaced_by.empty()) {
      retired += "| `" + k.path + "` | `" + k.replaced_by + "` |\n";
      continue;
    }
    const std::string top = k.path.substr(0, k.path.find('.'));
    if (top != section) {
      section = top;
      out << "\n## `" << section << "`\n\n| key | type | default | meaning |\n|---|---|---|---|\n";
    }
    std::string def = k.default_yaml.empty() ? "(none)" : "`" + k.default_yaml + "`";
    if (k.path == "problem.matrix") def = "(required)";
    if (k.path == "amg.spgemm") def = "(the backend's)";
    std::string doc = k.doc;
    if (!k.problem_type.empty()) doc = "*problem.type " + k.problem_type + ":* " + doc;
    out << "| `" << k.path << "` | " << describe_type(k) << " | " << def << " | " << doc << " |\n";
  }
  if (!retired.empty())
    out << "\n## Removed keys\n\nA config that still uses one of these is an error that names its replacement.\n\n"
        << "| key | replaced by |\n|---|---|\n"
        << retired;
  return out.str();
}

}  // namespace amgsolve
