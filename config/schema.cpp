#include "config/schema.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "problems/tissue_optics.hpp"

namespace amgsolve {
namespace {

constexpr double kMaxInt = 2147483647.0;  // integer keys are stored in 32-bit ints

KeySpec key(std::string path, KeyKind kind, std::string def, std::string doc) {
  KeySpec k;
  k.path = std::move(path);
  k.kind = kind;
  k.default_yaml = std::move(def);
  k.doc = std::move(doc);
  return k;
}
KeySpec choice(std::string path, std::vector<std::string> choices, std::string def, std::string doc) {
  KeySpec k = key(std::move(path), KeyKind::choice, std::move(def), std::move(doc));
  k.choices = std::move(choices);
  return k;
}
KeySpec bounded(KeySpec k, std::optional<double> min, std::optional<double> max, bool min_exclusive = false) {
  k.min = min;
  k.max = max;
  k.min_exclusive = min_exclusive;
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

std::string yaml_pair(double a, double b) {
  char text[64];
  std::snprintf(text, sizeof text, "[%g, %g]", a, b);
  return text;
}

// problem.tissues.<name>.mua / .musp for every tissue, defaults from the published table.
std::vector<KeySpec> tissue_keys() {
  std::vector<KeySpec> keys;
  const TissueTable table = default_tissue_table();
  struct Property {
    const char* key;
    const char* meaning;
    double max;
    double OpticalProperties::*member;
  };
  const Property properties[] = {{"mua", "Absorption coefficient mu_a", 100.0, &OpticalProperties::mua},
                                 {"musp", "Reduced scattering coefficient mu_s'", 1000.0, &OpticalProperties::musp}};
  for (int t = 1; t < kTissueCount; ++t) {
    const std::string name = tissue_name(static_cast<Tissue>(t));
    for (const Property& p : properties)
      keys.push_back(only_for(
          list_of(bounded(key("problem.tissues." + name + "." + p.key, KeyKind::number_list,
                              yaml_pair(table[t][0].*p.member, table[t][1].*p.member),
                              std::string(p.meaning) + " of " + name +
                                  " at the excitation and emission wavelengths, 1/mm (default: the tissue model at 750/800 nm)."),
                          0.0, p.max, true),
                  2, 2),
          "mouse"));
  }
  return keys;
}

std::vector<KeySpec> mouse_keys() {
  const auto yes_no = std::vector<std::string>{"true", "false"};
  std::vector<KeySpec> keys = {
      only_for(bounded(key("problem.voxel_size", KeyKind::number, "0.28",
                           "Voxel edge in mm. 0.28 gives about 0.9 million voxels inside the animal (the scale of "
                           "mouse280 in Gremse et al. 2015), 0.56 about 110 thousand."),
                       0.0, 10.0, true),
               "mouse"),
      only_for(list_of(bounded(key("problem.wavelengths", KeyKind::integer_list, "[750, 800]",
                                   "Excitation and emission wavelengths in nm, each one of 650, 700, 750, 800 (where "
                                   "the tissue model's chromophore spectra are tabulated); the tissue defaults below "
                                   "are for 750/800 nm and follow the wavelengths given here."),
                               650, 800),
                       2, 2),
               "mouse"),
      only_for(choice("problem.limbs", yes_no, "true", "Include the four legs."), "mouse"),
      only_for(choice("problem.tail", yes_no, "false",
                      "Include a 6 cm tail (it doubles the bounding box, and with it the VTK file)."),
               "mouse"),
      only_for(bounded(key("problem.refractive_index", KeyKind::number, "1.37",
                           "Refractive index of tissue against air: sets the Robin boundary condition's "
                           "reflection (1 = index matched)."),
                       1.0, 3.0),
               "mouse"),
      only_for(list_of(key("problem.sources.spots", KeyKind::pair_list, "[]",
                           "Laser spots [x, y] in mm (x from nose to tail, y to the left, 0 at the trunk's centre "
                           "line); the beam points down onto the back. Empty: the scan grid."),
                       0, 4096),
               "mouse"),
      only_for(list_of(bounded(key("problem.sources.scan_grid", KeyKind::integer_list, "[4, 2]",
                                   "Spots along x and y of a regular scan over the back (x -16..30 mm, "
                                   "y -5..5 mm), used when `spots` is empty."),
                               1, 64),
                       2, 2),
               "mouse"),
      only_for(bounded(key("problem.sources.power", KeyKind::number, "1",
                           "Power of each source (the fluence scales with it)."),
                       0.0, std::nullopt, true),
               "mouse"),
      only_for(list_of(key("problem.tumour.centre", KeyKind::number_list, "[8, 4, 5]",
                           "Centre of the spherical tumour, mm (the default lies under the back, left of the "
                           "spine)."),
                       3, 3),
               "mouse"),
      only_for(bounded(key("problem.tumour.radius", KeyKind::number, "0",
                           "Radius of the tumour in mm; 0: no tumour. It must lie inside the animal."),
                       0.0, 20.0),
               "mouse"),
      only_for(choice("problem.fluorescence", yes_no, "false",
                      "Also solve the fluorescence emission per source (source term: fluorophore yield times "
                      "the excitation fluence), with its own hierarchy at the emission wavelength."),
               "mouse"),
      only_for(bounded(key("problem.fluorophore.tumour", KeyKind::number, "0.01",
                           "Fluorophore yield (quantum yield times its absorption, 1/mm) in the tumour."),
                       0.0, 100.0),
               "mouse"),
      only_for(bounded(key("problem.fluorophore.background", KeyKind::number, "0",
                           "Fluorophore yield (1/mm) in the rest of the animal (non-specific uptake)."),
                       0.0, 100.0),
               "mouse"),
  };
  for (KeySpec& k : tissue_keys()) keys.push_back(std::move(k));
  return keys;
}

std::vector<KeySpec> make_schema() {
  KeySpec size = key("problem.size", KeyKind::integer_list, "[128, 128, 128]",
                     "Unknowns per direction: 2 entries for the 2D stencils, 3 for the 3D ones (Dirichlet boundary "
                     "points are not unknowns).");
  size.min = 1;
  size.list_min = 2;
  size.list_max = 3;
  KeySpec anisotropy = key("problem.anisotropy", KeyKind::number_list, "[]",
                           "Diffusion coefficient per direction (x, y[, z]) for 5pt/7pt stencils, e.g. [1, 1, 1e-3]; "
                           "empty: isotropic.");
  anisotropy.min = 0.0;
  anisotropy.min_exclusive = true;
  anisotropy.list_min = 0;
  anisotropy.list_max = 3;
  std::vector<KeySpec> keys = {
      choice("problem.type", {"poisson", "matrix_market", "mouse"}, "poisson",
             "Problem family: a generated Poisson problem, a matrix read from Matrix Market files, or light "
             "diffusion in a voxel mouse (diffuse optical / fluorescence tomography, many sources)."),
      only_for(choice("problem.stencil", {"5pt", "9pt", "7pt", "27pt"}, "7pt",
                      "Finite-difference stencil: 5pt and 9pt are 2D, 7pt and 27pt are 3D."),
               "poisson"),
      only_for(size, "poisson"),
      only_for(anisotropy, "poisson"),
      only_for(choice("problem.coefficient", {"constant", "checkerboard"}, "constant",
                      "Diffusion coefficient k(x): `constant` 1, or `checkerboard`: `contrast` and 1 on alternating "
                      "cells of a cells^d checkerboard (5pt/7pt stencils; harmonic means on the faces)."),
               "poisson"),
      only_for(bounded(key("problem.contrast", KeyKind::number, "1e6",
                           "Checkerboard: k in the odd cells (1 in the others)."),
                       0.0, std::nullopt, true),
               "poisson"),
      only_for(bounded(key("problem.cells", KeyKind::integer, "4", "Checkerboard: cells per direction."), 1, 1 << 20),
               "poisson"),
      only_for(choice("problem.rhs", {"ones", "manufactured"}, "ones",
                      "Right-hand side: `ones`, or `manufactured`: b = A u* for a known smooth u*, so the "
                      "report also gives the error against u*."),
               "poisson"),
      only_for(key("problem.matrix", KeyKind::path, "",
                   "Matrix Market file with a square, symmetric matrix with positive diagonal (required). "
                   "Relative paths are relative to the working directory."),
               "matrix_market"),
      only_for(key("problem.rhs", KeyKind::path, "",
                   "Matrix Market file with the right-hand side (n x 1, array or coordinate); empty: b = 1."),
               "matrix_market"),

      key("amg.spgemm", KeyKind::text, "gustavson",
          "SpGEMM backend for the prolongator smoothing A_f T and the Galerkin product P^T (A P); "
          "`amgsolve --list-backends` shows the registered ones. `compare` builds the hierarchy with "
          "`gustavson` and runs every backend on every product (as `--compare-spgemm` does)."),
      choice("amg.device", {"cpu", "gpu", "auto"}, "cpu",
             "Where strength of connection, MIS-2 aggregation and the tentative prolongator run: `gpu` uses "
             "the CUDA versions (same seeded hash, so the same hierarchy as `cpu`), `auto` the GPU when one "
             "can be used. Pair `gpu` with a GPU `amg.spgemm` backend. The default stays `cpu` until the GPU "
             "setup has been verified on a device."),
      bounded(key("amg.coarse_size", KeyKind::integer, "1000",
                  "Stop coarsening once a level has at most this many rows; that level is solved by sparse "
                  "Cholesky (LDL^T), which is refused above 50000 rows."),
              1, kMaxInt),
      bounded(key("amg.max_levels", KeyKind::integer, "25", "Upper limit on the number of levels."), 1, 100),
      bounded(key("amg.strength_threshold", KeyKind::number, "0.02",
                  "theta in the strength test |a_ij| >= theta sqrt(|a_ii a_jj|). 0.02 keeps all links of the "
                  "5/7/9/27-point Laplacians (weakest: 1/26 for 27pt) and drops the weak direction of "
                  "anisotropic problems with epsilon below about 0.04."),
              0.0, 1.0),
      bounded(key("amg.seed", KeyKind::integer, "20261121",
                  "Seed of the hash that orders MIS-2 candidates. The hierarchy depends only on the matrix and "
                  "this seed (not on the thread count)."),
              0, std::nullopt),
      bounded(key("amg.prolongator_damping", KeyKind::number, "1.3333333333333333",
                  "P = (I - omega D^-1 A_f) T with omega = prolongator_damping / rho(D^-1 A_f); 4/3 is the "
                  "classical smoothed-aggregation choice."),
              0.0, 2.0, true),
      choice("amg.spectral_radius", {"lanczos", "gershgorin"}, "lanczos",
             "Estimate of rho(D^-1 A) on each level, for the prolongator weight and the Chebyshev interval. "
             "`gershgorin`: max_i sum_j |a_ij| / a_ii, one pass, never below rho and nearly exact on "
             "M-matrices; `lanczos`: `amg.lanczos_steps` steps of Lanczos times `eigenvalue_safety`, sharper "
             "where rows have large positive off-diagonal entries."),
      bounded(key("amg.lanczos_steps", KeyKind::integer, "8",
                  "Lanczos steps for the estimate of rho(D^-1 A) on each level (`spectral_radius: lanczos`)."),
              1, 200),
      choice("amg.smoother.type", {"chebyshev", "jacobi"}, "chebyshev",
             "Smoother of the V-cycle: Chebyshev polynomial in D^-1 A or damped Jacobi."),
      bounded(key("amg.smoother.degree", KeyKind::integer, "2",
                  "Chebyshev: polynomial degree (matrix-vector products per smoothing step)."),
              1, 20),
      bounded(key("amg.smoother.chebyshev_ratio", KeyKind::number, "10",
                  "Chebyshev: the polynomial is small on [lambda_max / ratio, lambda_max] of D^-1 A."),
              1.0, std::nullopt, true),
      bounded(key("amg.smoother.eigenvalue_safety", KeyKind::number, "1.1",
                  "Factor applied to the Lanczos estimate of lambda_max(D^-1 A), which is a lower bound."),
              1.0, 2.0),
      bounded(key("amg.smoother.sweeps", KeyKind::integer, "1", "Jacobi: sweeps per smoothing step."), 1, 20),
      bounded(key("amg.smoother.omega", KeyKind::number, "0",
                  "Jacobi: damping weight; 0 selects 4 / (3 rho(D^-1 A)) on each level."),
              0.0, 2.0),
      bounded(key("amg.smoother.pre_steps", KeyKind::integer, "1",
                  "Smoothing steps before restriction. Keep equal to post_steps for PCG (symmetric cycle)."),
              0, 20),
      bounded(key("amg.smoother.post_steps", KeyKind::integer, "1", "Smoothing steps after prolongation."), 0, 20),

      choice("solver.type", {"pcg", "amg"}, "pcg",
             "`pcg`: conjugate gradients preconditioned by one V-cycle; `amg`: V-cycles as a stand-alone "
             "iteration."),
      choice("solver.precision", {"double", "mixed"}, "double",
             "`double`: everything in double precision; `mixed`: the AMG hierarchy and V-cycle in float inside "
             "the double-precision outer iteration (less memory traffic, same final tolerance)."),
      choice("solver.device", {"cpu", "gpu", "auto"}, "cpu",
             "Where PCG and the V-cycle run: `gpu` keeps every level's operators and vectors on the device "
             "(solver.spmv_format), `auto` uses the GPU when one can be used. The default stays `cpu` until the "
             "GPU solve has been verified on a device."),
      choice("solver.spmv_format", {"auto", "csr", "ellpack-r", "pjds"}, "auto",
             "Storage of the operators in the GPU solve: `csr` (cuSPARSE SpMV), `ellpack-r`, `pjds` (Kreutzer "
             "et al. 2012), or `auto`: the format with the fewest predicted bytes moved per PCG iteration. The "
             "footprint of every format on every level is printed and reported either way; the CPU solve "
             "always uses CSR."),
      bounded(key("solver.tolerance", KeyKind::number, "1.0e-8",
                  "Stop when ||b - A x|| <= tolerance * ||b|| (x starts at zero)."),
              0.0, 1.0, true),
      bounded(key("solver.max_iterations", KeyKind::integer, "500",
                  "Iteration limit; reaching it without convergence exits with status 3."),
              1, kMaxInt),
      bounded(key("solver.print_every", KeyKind::integer, "1",
                  "Print a progress line every this many iterations (0: only the summary)."),
              0, kMaxInt),

      key("output.report", KeyKind::path, "", "JSON report file (overridden by --report); empty: none."),
      key("output.vtk", KeyKind::path, "",
          "VTK image data file (.vti) with solution, right-hand side and finest aggregates, for grid problems "
          "(overridden by --vtk); empty: none."),
      key("output.spgemm_csv", KeyKind::path, "",
          "CSV file for the SpGEMM comparison table (with --compare-spgemm or amg.spgemm: compare); empty: "
          "none."),
      key("output.solution", KeyKind::path, "",
          "Matrix Market file (n x 1 array) for the solution vector; empty: none."),
      list_of(bounded(key("output.vtk_sources", KeyKind::integer_list, "[]",
                          "Mouse: the sources (numbered from 1) whose fluence goes into the VTK file; empty: all."),
                      1, kMaxInt),
              0, 4096),
  };
  // The mouse keys follow the other problem keys.
  std::vector<KeySpec> mouse = mouse_keys();
  const auto after_problem = std::find_if(keys.begin(), keys.end(), [](const KeySpec& k) {
    return k.path.rfind("problem.", 0) != 0;
  });
  keys.insert(after_problem, mouse.begin(), mouse.end());
  return keys;
}

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
    if (k.max) out << "<= " << *k.max;
  }
  return out.str();
}

}  // namespace

const std::vector<KeySpec>& config_schema() {
  static const std::vector<KeySpec> schema = make_schema();
  return schema;
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
      << "a test fails when this file and the code disagree.\n\n"
      << "A configuration file is YAML with the sections `problem`, `amg`, `solver` and `output`. Every key is\n"
      << "optional unless marked required; unknown keys and values of the wrong type are errors that name the\n"
      << "key, the file and the line. Any key can be overridden on the command line with\n"
      << "`--set key.path=value` (the value is YAML: `--set problem.size=[64,64,64]`).\n";
  std::string section;
  for (const KeySpec& k : config_schema()) {
    const std::string top = k.path.substr(0, k.path.find('.'));
    if (top != section) {
      section = top;
      out << "\n## `" << section << "`\n\n| key | type | default | meaning |\n|---|---|---|---|\n";
    }
    std::string def = k.default_yaml.empty() ? "(none)" : "`" + k.default_yaml + "`";
    if (k.path == "problem.matrix") def = "(required)";
    std::string doc = k.doc;
    if (!k.problem_type.empty()) doc = "*problem.type " + k.problem_type + ":* " + doc;
    out << "| `" << k.path << "` | " << describe_type(k) << " | " << def << " | " << doc << " |\n";
  }
  return out.str();
}

}  // namespace amgsolve
