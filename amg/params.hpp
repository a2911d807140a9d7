#pragma once
// Parameters of the smoothed-aggregation hierarchy and its V-cycle. Defaults live here, each with the
// reason for its value; config/schema.cpp exposes them as YAML keys (amg.*) with the same defaults.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/enum_names.hpp"
#include "sparse/csr.hpp"

namespace amgsolve {

// Sparse LDL^T fill grows superlinearly (for 3D grids about n^(4/3) with good orderings, more with AMD);
// beyond this size the "coarse" solve would dominate time and memory. A coarsest level larger than this
// (coarsening stopped early: no strong couplings, aggregation that no longer pays, amg.max_levels) is not
// factorised but smoothed: kCoarsestSmoothingSteps steps of its smoother from zero, a polynomial in D^-1 A
// that keeps the cycle symmetric. Such a level is one smoothing converges on fast where coarsening stops
// for want of strong couplings (nearly diagonal: a mass matrix plus a small time step's stiffness).
inline constexpr Index kMaxDirectRows = 50000;
inline constexpr int kCoarsestSmoothingSteps = 8;
// Where coarsening stopped early, rows alone do not bound the factorisation: a level of few thousand rows
// with hundreds of entries each (a dense random graph) or of a 3D grid's points (AMD's fill) can take far
// longer to factorise than its smoother takes to converge (docs/BENCHMARKS.md, "Structurally unusual
// matrices"). Such a level (more rows than amg.coarse_size) is factorised only while the factorisation's
// multiply-adds (sparse/sparse_ldlt.hpp, from the symbolic analysis) stay below this; a level of at most
// amg.coarse_size rows, the coarsest the setup aimed for, always is (up to kMaxDirectRows rows).
inline constexpr double kMaxEarlyCoarsestWork = 1u << 30;

enum class SmootherType { jacobi, chebyshev, gauss_seidel };
inline constexpr EnumName<SmootherType> kSmootherTypeNames[] = {{"chebyshev", SmootherType::chebyshev},
                                                                {"jacobi", SmootherType::jacobi},
                                                                {"gauss_seidel", SmootherType::gauss_seidel}};
constexpr const auto& names_of(SmootherType) { return kSmootherTypeNames; }
// Why Gauss-Seidel is refused on the cuda backend (the schema, the Solver and the V-cycle say it alike).
inline constexpr const char* kGaussSeidelOnCpuOnly =
    "amg.smoother.type gauss_seidel runs on the cpu backend, of one process or of each MPI rank (its sweeps are "
    "sequential within a block): use backend cpu, or chebyshev on cuda";

// The diagonal D of a smoother's D^-1 A (amg/smoother.hpp): the rows' own entries, or for a system (amg/system_setup.hpp)
// the blocks of its nodes (sparse/block_diagonal.hpp); `automatic` is the nodes' blocks for a system.
enum class SmootherDiagonal { automatic, point, node };
inline constexpr EnumName<SmootherDiagonal> kSmootherDiagonalNames[] = {
    {"auto", SmootherDiagonal::automatic}, {"point", SmootherDiagonal::point}, {"node", SmootherDiagonal::node}};
constexpr const auto& names_of(SmootherDiagonal) { return kSmootherDiagonalNames; }

// How rho(D^-1 A) is estimated on each level, for the prolongator weight and the smoother's interval.
enum class SpectralRadius { gershgorin, lanczos };
inline constexpr EnumName<SpectralRadius> kSpectralRadiusNames[] = {{"lanczos", SpectralRadius::lanczos},
                                                                    {"gershgorin", SpectralRadius::gershgorin}};
constexpr const auto& names_of(SpectralRadius) { return kSpectralRadiusNames; }

// The nullspace of the matrix (amg/nullspace.hpp): `automatic` finds the constant where every row sums to
// zero (for a system: the combinations of its near-nullspace vectors that A maps to zero), `constant`
// declares it (a pure-Neumann or graph Laplacian), `near_nullspace` declares a system's near-nullspace vectors
// to be A's nullspace (a free-floating structure's rigid-body modes), `none` treats the matrix as nonsingular.
enum class NullspaceChoice { automatic, none, constant, near_nullspace };
inline constexpr EnumName<NullspaceChoice> kNullspaceChoiceNames[] = {{"auto", NullspaceChoice::automatic},
                                                                      {"none", NullspaceChoice::none},
                                                                      {"constant", NullspaceChoice::constant},
                                                                      {"near_nullspace", NullspaceChoice::near_nullspace}};
constexpr const auto& names_of(NullspaceChoice) { return kNullspaceChoiceNames; }

// Vectors the coarse levels of a system must represent (amg/near_nullspace.hpp): `count` vectors over the
// matrix's rows, stored row by row (values[i * count + v] is vector v's entry in row i), shared rather than
// copied with the parameters. None: the default for amg.block_size (its unit vectors).
struct NearNullspaceVectors {
  int count = 0;
  std::shared_ptr<const Vector<double>> values;
};

struct SmootherParams {
  SmootherType type = SmootherType::chebyshev;
  // Chebyshev: polynomial degree (SpMVs per smoothing step). Degree 2 balances cost and smoothing for
  // aggregation AMG on Poisson-type problems (measured in docs/BENCHMARKS.md).
  int degree = 2;
  // Chebyshev targets the eigenvalues of D^-1 A in [upper / ratio, upper]. A degree-2 polynomial cannot
  // be small on a wide interval: with ratio 30 it damps by only 0.78 there, with ratio 10 by 0.4, and PCG
  // needs fewer iterations on every shipped Poisson and mouse config (docs/BENCHMARKS.md, "Tried, not kept
  // (poisson.yaml)").
  double chebyshev_ratio = 10.0;
  // Jacobi: sweeps per smoothing step and damping; omega <= 0 means 4 / (3 rho(D^-1 A)), the weight
  // that minimises the amplification of the upper half of the spectrum.
  int sweeps = 1;
  double omega = 0.0;
  // Safety factor on the Lanczos estimate of rho(D^-1 A), which approaches it from below.
  double eigenvalue_safety = 1.1;
  // A system's smoothers scale by its nodes' diagonal blocks: on the structural matrices of ../shared they
  // need up to 5x fewer PCG iterations than with the pointwise diagonal (docs/BENCHMARKS.md, "Systems").
  SmootherDiagonal diagonal = SmootherDiagonal::automatic;
};

struct AmgParams {
  // SpGEMM backend for the prolongator smoothing and P^T (A P); empty: the backend's default
  // (default_spgemm_backend in spgemm/registry.hpp).
  std::string spgemm;
  // Stop coarsening below this many rows; the coarsest system is factorised (LDL^T), or smoothed where
  // coarsening stopped early on a level too dear to factorise (kMaxEarlyCoarsestWork).
  Index coarse_size = 1000;
  int max_levels = 25;
  // Strength of connection: |a_ij| >= theta sqrt(|a_ii a_jj|). 0.02 keeps every link of the 5/7/9/27-point
  // Laplacians strong (the weakest, 27-point, has 1/26 = 0.038) while dropping the weak direction of
  // anisotropic problems with epsilon below about 0.04.
  double strength_threshold = 0.02;
  // Seed of the hash that orders MIS-2 candidates; the hierarchy depends on it and on nothing else.
  std::uint64_t seed = 20261121;
  // Prolongator smoothing P = (I - omega D^-1 A_f) T with omega = prolongator_damping / rho(D^-1 A_f);
  // 4/3 is the classical choice of Vanek, Mandel & Brezina (1996).
  double prolongator_damping = 4.0 / 3.0;
  // Gershgorin's bound max_i sum_j |a_ij| / a_ii costs one pass over A and is never below rho, so the
  // Chebyshev interval always covers the spectrum; on M-matrices such as the Laplacians it is nearly
  // exact (2 against 1.9997 on 7-point Poisson). Lanczos is sharper where the bound is loose (rows with
  // large positive off-diagonals) and costs lanczos_steps matrix-vector products per level.
  SpectralRadius spectral_radius = SpectralRadius::lanczos;
  // Lanczos steps used to estimate rho(D^-1 A) on each level: 6 come within a few percent of rho on 7-point
  // Poisson at half the cost of 12, with the same or fewer iterations than 8 on the shipped configs and the
  // SPD matrices of ../shared but one more on one (docs/BENCHMARKS.md, "The setup's MIS-2 on live lists, fewer
  // Lanczos steps"); the Chebyshev bound is capped by Gershgorin's anyway.
  int lanczos_steps = 6;
  // A singular matrix's nullspace: zero row sums are exact for Neumann and graph Laplacians and never
  // hold for a nonsingular M-matrix (its boundary rows have positive sums), so detecting them is safe.
  NullspaceChoice nullspace = NullspaceChoice::automatic;
  SmootherParams smoother;
  int pre_smooth = 1;   // smoothing steps before restriction
  int post_smooth = 1;  // and after prolongation (equal counts keep the V-cycle symmetric for PCG)
  // Keep what a re-setup for new values on the same pattern needs (Hierarchy::rebuild): each level's
  // strength classification, tentative prolongator and A P pattern. Off by default: the A P pattern alone
  // is about as large as the finest matrix's column indices.
  bool keep_structure = false;
  // A system of block_size unknowns per node (amg.block_size), interleaved: rows b k to b k + b - 1 are node
  // k's (elasticity: its displacements). Aggregation then groups nodes, and the near-nullspace (the given
  // vectors, e.g. rigid-body modes, or the b unit vectors of the components) reaches every coarse level
  // through T (amg/qr_tentative_prolongation.hpp); 1 with no vectors: a scalar problem, whose near-nullspace is the
  // constant.
  int block_size = 1;
  NearNullspaceVectors near_nullspace;
  // A system's near-nullspace vectors relaxed on A x = 0 before the finest level's aggregates are fitted to
  // them: this many damped Jacobi sweeps (amg/improve_near_nullspace.hpp). 0: as given.
  int improve_near_nullspace = 4;
  // A singular system's nullspace (amg.nullspace resolved to near_nullspace, amg/system_nullspace.hpp): m
  // combinations of its k near-nullspace vectors, nullspace vector j = sum_v nullspace_combinations[j k + v] b_v,
  // b_v the finest level's vectors as finest_near_nullspace gives them (scaled to unit length).
  std::shared_ptr<const std::vector<double>> nullspace_combinations;
  bool is_system() const { return block_size > 1 || near_nullspace.count > 0; }
  bool singular() const { return nullspace == NullspaceChoice::constant || nullspace == NullspaceChoice::near_nullspace; }
};

}  // namespace amgsolve
