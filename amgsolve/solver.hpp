#pragma once
// amgsolve as a library: a smoothed-aggregation AMG hierarchy built once for an SPD matrix, and the
// configured outer iteration (PCG or stand-alone V-cycles) for any number of right-hand sides, on the
// backend the parameters choose (resolved once, here: resolve_backend).
//
//   amgsolve::Parameters params;                  // the defaults of docs/CONFIG.md
//   params.solver.tolerance = 1e-10;
//   amgsolve::Solver solver(A, params);           // A: std::shared_ptr<const amgsolve::CsrMatrix<double>>
//   amgsolve::Vector<double> x;
//   const amgsolve::SolveResult r = solver.solve(b, x);
//
// The names of the parameters are those of the YAML keys (amg.coarse_size is params.amg.coarse_size), but
// for amg.smoother.pre_steps and post_steps (params.amg.pre_smooth, post_smooth); the program's own keys
// (problem.*, output.*, solver.print_every, solver.initial_guess: SolveOptions here, amg.compare_spgemm and
// amg.compare_runs: the program's SpGEMM comparison) are no parameters.
// Errors are amgsolve::InputError (bad input, no GPU for the cuda backend, ...) or NumericalError (a matrix
// that is not SPD, a breakdown), each with a one-line what(). The Solver checks its Parameters against the
// ranges of the config keys (amgsolve/parameter_ranges.hpp) and every matrix for a valid CSR structure with
// finite values; symmetry and positive diagonal entries cost a pass with lookups and are the caller's to check
// where it cannot vouch for them (require_spd_candidate, sparse/csr_ops.hpp).
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "amg/hierarchy.hpp"
#include "common/device.hpp"
#include "common/error.hpp"
#include "solver/solve_result.hpp"
#include "sparse/spmv_format.hpp"

namespace amgsolve {

struct Parameters {
  BackendChoice backend = BackendChoice::cpu;  // where the setup and the solve run (`backend`)
  AmgParams amg;                               // amg.*
  SolverParams solver;                         // solver.*
  // Under several MPI ranks (a build with MPI, MPI initialised): true, the ranks solve the one system
  // together, each holding its block of rows (every rank passes the same A and b); false, each rank
  // solves its own system alone.
  bool distribute = true;
};

// Optional hooks into the setup: progress as each level is built, and every SpGEMM product (level, "prolongator"
// | "ap" | "rap", A, B, C) in the hierarchy's value type (float with solver.precision: mixed).
struct SetupCallbacks {
  std::function<void(const LevelInfo&)> on_level;
  AmgHierarchy<double>::ProductCallback on_product;
  AmgHierarchy<float>::ProductCallback on_product_float;
};

// What the setup built and what it cost.
struct SetupSummary {
  BackendKind backend = BackendKind::cpu;
  int ranks = 1;  // MPI ranks the setup and the solve are distributed over
  Index local_rows = 0;  // this rank's rows of the finest level
  CommunicationStats communication;  // what this rank's setup sent and waited for (several ranks)
  HaloMode halo_exchange = HaloMode::overlap;  // how the solve's products meet their halo (several ranks)
  // amg.nullspace resolved: "constant" for a singular matrix, "near_nullspace" for a singular system (its
  // nullspace among its near-nullspace vectors), each solved on its range; and the nullspace's vectors (0, 1
  // for the constant, a system's count).
  std::string nullspace = "none";
  int nullspace_vectors = 0;
  int block_size = 1;              // amg.block_size: unknowns per node
  // The near-nullspace vectors the tentative prolongators carry (amg/qr_tentative_prolongation.hpp): 1 for a scalar
  // problem (the constant), amg.block_size's unit vectors, or the given ones.
  int near_nullspace_vectors = 1;
  // The Jacobi sweeps that relaxed them before the finest aggregates' QR (amg.improve_near_nullspace): 0 for
  // a scalar problem, a singular system and a hierarchy of one level.
  int near_nullspace_sweeps = 0;
  std::vector<LevelInfo> levels;
  double seconds = 0.0;
  double operator_complexity = 0.0;
  double grid_complexity = 0.0;
  std::string spgemm_backend;
  std::uint64_t hierarchy_bytes = 0;  // the hierarchy's matrices beyond A, where the backend keeps them, and the
                                      // coarsest level's factor (on the host)
  std::uint64_t backend_bytes = 0;    // what the solve holds beyond that (SpMV formats, work vectors)
  // The least memory traffic of one solver iteration (amgsolve/iteration_traffic.hpp), all ranks together.
  std::uint64_t model_bytes_per_iteration = 0;
  TransferCounts transfers;           // host <-> device traffic of the setup (the input included)
  // The SpMV format of the solve and why, and what every format would cost on every level
  // (spmv_formats[level], in the order csr, ellpack-r, pjds: the model of sparse/spmv_format.hpp).
  std::string spmv_format = "csr";
  std::string spmv_format_reason;
  std::vector<std::vector<FormatCost>> spmv_formats;
  // After rebuild(): whether the structure was kept (a re-setup) or a full setup ran, and why.
  bool reused = false;
  std::string rebuild_note;
};

// What keeps A from the float cycle of solver.precision: mixed (an entry beyond float's range with the
// headroom the coarse levels need), "" where nothing does. The Solver checks it itself, its message counting
// rows and columns from 1 (as the program's Matrix Market files do); a caller whose indices count from 0
// (numpy) checks first with first_index 0, so that the message names the entry in its numbering.
std::string mixed_precision_problem(const CsrMatrix<double>& A, int first_index = 1);

// What one solve may set beyond the solver's parameters: limits in place of the configured
// solver.tolerance and solver.max_iterations, and where the iteration starts.
struct SolveOptions {
  std::optional<double> tolerance;
  std::optional<int> max_iterations;
  // x holds the starting iterate (b's size, finite: the step before's solution in time stepping); false:
  // the iteration starts from x = 0. The tolerance stays relative to ||b||.
  bool initial_guess = false;
  std::optional<double> absolute_tolerance = std::nullopt;  // solver.absolute_tolerance for this solve
};
using SolveLimits = SolveOptions;  // the name of the first version, which had the limits only

// This process's rows of a matrix distributed over the MPI ranks (the input of hypre's ParCSR or PETSc's
// MPIAIJ): rows [owned_rows(global_rows, amg.block_size)) with global column numbers, rows.cols =
// global_rows. Each rank passes its own block and no rank ever holds the whole matrix. On one process the
// block is the matrix.
struct RowBlock {
  std::int64_t global_rows = 0;
  CsrMatrix<double> rows;
};

// The rows [first, last) this process holds of a distributed matrix of global_rows rows: a function of
// the row count, the number of ranks and a system's amg.block_size only (blocks aligned to the exact
// reductions' blocks, of kReductionBlock nodes for a system, so results do not depend on the rank count);
// {0, global_rows} on one process.
std::pair<std::int64_t, std::int64_t> owned_rows(std::int64_t global_rows, int block_size = 1);

class Solver {
 public:
  // Builds the hierarchy of A (shared, not copied) on the chosen backend. The solver reads A, and copies of
  // it in the solve's layout, until it is rebuilt: A must not change meanwhile. To change A's values in place,
  // call rebuild(A) afterwards (the same pattern: a re-setup); for another pattern give rebuild a new matrix
  // (a matrix changed in place has no old pattern left to compare with).
  Solver(std::shared_ptr<const CsrMatrix<double>> A, const Parameters& params, const SetupCallbacks& callbacks = {});
  // The same from this rank's rows (collective: every rank passes its block). The hierarchy is the one the
  // whole matrix gives, bit for bit. solve() and precondition() take their vectors whole on every rank,
  // solve_rows() and precondition_rows() this rank's rows of them, as the block holds its rows; a system's
  // amg.near_nullspace may be given whole or as this rank's rows of the vectors (told apart by the length;
  // rigid_body_modes with the centroid of all the nodes makes a rank's rows from its nodes' coordinates).
  // A wrong block on any rank (other rows than owned_rows, local column numbers, ranks that disagree on
  // the row count) is an InputError on every rank. A singular matrix's connectivity is checked on the
  // ranks' rows too (nothing is gathered).
  Solver(RowBlock block, const Parameters& params, const SetupCallbacks& callbacks = {});
  ~Solver();
  Solver(const Solver&) = delete;
  Solver& operator=(const Solver&) = delete;
  Solver(Solver&&) noexcept;  // a moved-from Solver may only be destroyed or assigned to
  Solver& operator=(Solver&&) noexcept;

  // Solves A x = b from x = 0 (x is resized), or from x as it is with options.initial_guess; on_iteration
  // sees (iteration, relative residual) after each.
  // Threads solving with one Solver take turns: the cycle's work vectors are the Solver's, so a call waits
  // while another thread's solve or precondition runs (build a Solver per thread to solve at once). A
  // callback that calls this Solver's solve or precondition during its own solve gets an InputError. A
  // rebuild must not run beside them (it replaces what they read).
  SolveResult solve(const Vector<double>& b, Vector<double>& x, const IterationCallback& on_iteration = {},
                    const SolveOptions& options = {}) const;

  // The same with b and x (and x's start) this rank's rows of the vectors: rows [owned_rows(global_rows,
  // amg.block_size)), the rows of the solver's RowBlock (or of the finest partition, for a solver built from
  // the whole matrix), as hypre's and PETSc's vectors are held. No rank holds or receives a whole vector; the
  // iterations and each rank's rows of x are those solve() gives, bit for bit. Collective. On one process,
  // and where each rank solves alone (Parameters::distribute false), the rows are the whole vector: the same
  // as solve().
  SolveResult solve_rows(const Vector<double>& b, Vector<double>& x, const IterationCallback& on_iteration = {},
                         const SolveOptions& options = {}) const;

  // z = M^-1 r: one application of the preconditioner the solve uses (a V-cycle from z = 0, in the cycle's
  // precision), for another outer iteration (scipy's cg, a Krylov method of the caller's). Same sharing
  // rule as solve().
  void precondition(const Vector<double>& r, Vector<double>& z) const;
  // The same on this rank's rows of r and z (as solve_rows). Collective.
  void precondition_rows(const Vector<double>& r, Vector<double>& z) const;

  // Re-setup for A with new values (time stepping, nonlinear iterations): with amg.keep_structure and A on
  // the pattern of the matrix the solver was built for, the aggregates and tentative prolongators are kept
  // and the rest is recomputed (Hierarchy::rebuild: on the cpu backend the products by their numeric phase
  // only where amg.spgemm sums in A's row order, else by it in full; over MPI ranks the same after the rows
  // are fetched, or on summa2d's and split3d's grids; on the cuda backend by its SpGEMM; a fresh setup's
  // hierarchy on the same aggregates and tentative prolongators, bit for bit); otherwise (a changed pattern or nullspace) a full setup with the same parameters. setup().reused says
  // which and setup().rebuild_note why. A solver built from row blocks is rebuilt from this rank's new
  // block (collective; a wrong block on any rank is an InputError on every rank), one built from the whole
  // matrix from the whole new matrix.
  // The re-setup replaces the levels in place: the old ones are let go of as the new ones are made (before
  // a full setup in its place begins), so that it needs no more memory than the first setup. A matrix
  // refused before any work (not square, not valid CSR, a value that is not finite, rows that the
  // near-nullspace given to a system's solver does not fit, a declared nullspace that does not hold, a
  // singular matrix in disconnected parts: InputError) leaves the hierarchy as it was. Values the setup
  // fails on (not positive definite) throw, as a full setup would, and leave no hierarchy; so does a full
  // setup in its place that fails (once a rebuild has begun its work, a solver never goes on with the
  // matrix it had before, whatever was thrown): solve() and precondition() then throw until a rebuild
  // succeeds, and setup() lists no levels and finest_aggregates() none. The SetupCallbacks are called by a
  // full setup, not by a re-setup in place
  // (which makes no new levels or products of its own design: those of the first setup, with new values).
  // Any use of a moved-from Solver is an InputError.
  void rebuild(std::shared_ptr<const CsrMatrix<double>> A);
  void rebuild(RowBlock block);

  // Both refer into the solver: valid until its next rebuild (copy what must outlive one).
  const SetupSummary& setup() const;
  // The aggregate of every unknown on the finest level (-1: none), for visualisation; a solver distributed
  // over MPI ranks (setup().ranks > 1) gives each rank's rows of it, as solve_rows() the vectors.
  const Array<Index>& finest_aggregates() const;

  struct Impl;

 private:
  void full_setup_in_place(const std::function<std::unique_ptr<Impl>()>& make, const std::string& why);
  void replace_impl(std::unique_ptr<Impl> fresh, const std::string& why);
  void note_failed_resetup(const std::string& why);
  void require_hierarchy() const;
  Impl& live() const;
  std::unique_ptr<Impl> impl_;
};

}  // namespace amgsolve
