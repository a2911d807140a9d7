// Solver (amgsolve/solver.hpp): the one place that turns the backend choice into a backend type. Everything
// below it, the setup's hierarchy, the V-cycle and the outer iteration, is written once over that type.
#include "amgsolve/solver.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <exception>
#include <mutex>
#include <new>
#include <optional>
#include <thread>
#include <type_traits>

#include "amg/near_nullspace.hpp"
#include "amg/nullspace.hpp"
#include "amg/system_nullspace.hpp"
#include "amg/system_setup.hpp"
#include "amg/vcycle.hpp"
#include "amgsolve/iteration_traffic.hpp"
#include "amgsolve/matrix_inputs.hpp"
#include "amgsolve/matrix_scale.hpp"
#include "amgsolve/parameter_ranges.hpp"
#include "amgsolve/solve_formats.hpp"
#include "amgsolve/solve_inputs.hpp"
#include "amgsolve/vector_scale.hpp"
#include "backend/backend.hpp"
#include "backend/cpu/cpu_backend.hpp"
#include "common/error.hpp"
#include "common/parallel.hpp"
#include "common/timer.hpp"
#include "distributed/partition.hpp"
#include "solver/pcg.hpp"
#include "solver/stationary_iteration.hpp"
#include "sparse/csr_ops.hpp"
#include "sparse/sparse_ldlt.hpp"
#include "spgemm/numeric_product.hpp"
#include "spgemm/registry.hpp"
#ifdef AMGSOLVE_WITH_CUDA
#include "amg/cuda/device_setup.hpp"
#include "backend/cuda/cuda_backend.hpp"
#endif
#ifdef AMGSOLVE_WITH_MPI
#include "amg/mpi/distributed_setup.hpp"
#include "amg/mpi/system_setup.hpp"
#include "backend/mpi/mpi_backend.hpp"
#include "backend/mpi/mpi_over.hpp"
#include "distributed/spgemm/backends.hpp"
#endif

namespace amgsolve {

static_assert(Backend<CpuBackend> && SetupBackend<CpuBackend>);
#ifdef AMGSOLVE_WITH_CUDA
static_assert(Backend<CudaBackend> && SetupBackend<CudaBackend>);
#endif
#ifdef AMGSOLVE_WITH_MPI
static_assert(Backend<MpiBackend> && SetupBackend<MpiBackend>);
static_assert(Backend<MpiOver<CpuBackend>>);  // what tests/test_mpi.cpp runs the layer over
#ifdef AMGSOLVE_WITH_CUDA
static_assert(Backend<MpiOver<CudaBackend>>);
#endif
#endif

// How a caller's vectors are laid out: whole on every rank (solve, precondition), or each rank's rows of them
// (solve_rows, precondition_rows). On one process both are the whole vector.
enum class VectorLayout { whole, rows };

// The share of a re-set-up level's sampled couplings classified otherwise than its kept strength above which
// the re-setup's note says so (docs/BENCHMARKS.md, "Re-setup": what the iterations did at such shares).
constexpr double kNotableStrengthDrift = 0.05;

// A whole matrix with the power of two the solver divides it by (matrix_exponent, as require_representable
// found it).
struct ScaledMatrix {
  std::shared_ptr<const CsrMatrix<double>> matrix;
  int exponent = 0;
};

// One solve or preconditioner application at a time on a Solver: the cycle's work vectors are the Solver's.
// Calls from other threads wait their turn; a call from the thread whose call is running (a callback of its
// own solve) is an error, not a wait for itself.
class Turns {
 public:
  class Turn {
   public:
    explicit Turn(const Turns& turns) : turns_(turns) {
      if (turns.holder_.load() == std::this_thread::get_id())
        throw InputError("a callback of this Solver's solve called its solve or precondition: the cycle's work "
                         "vectors are in use (call it after the solve, or build another Solver)");
      turns.mutex_.lock();
      turns.holder_.store(std::this_thread::get_id());
    }
    ~Turn() {
      turns_.holder_.store(std::thread::id{});
      turns_.mutex_.unlock();
    }
    Turn(const Turn&) = delete;
    Turn& operator=(const Turn&) = delete;

   private:
    const Turns& turns_;
  };

 private:
  mutable std::mutex mutex_;
  mutable std::atomic<std::thread::id> holder_{};
};

struct Solver::Impl {
  virtual ~Impl() = default;
  virtual SolveResult solve(const Vector<double>& b, Vector<double>& x, const IterationCallback& on_iteration,
                            const SolveOptions& options, VectorLayout layout) = 0;
  virtual void precondition(const Vector<double>& r, Vector<double>& z, VectorLayout layout) = 0;
  // False after a rebuild failed (a re-setup on its values, or the full setup in its place): no levels.
  virtual bool has_hierarchy() const = 0;
  virtual void drop_hierarchy() = 0;
  // The re-setup in place, or false with the reason when only a full setup will do: from the whole matrix,
  // or (a solver built from row blocks) from this rank's rows, checked by require_agreed_blocks. Collective
  // on the mpi backend.
  virtual bool rebuild(const ScaledMatrix& A, std::string& why) = 0;
  virtual bool rebuild(const RowBlock& block, std::string& why) = 0;
  Parameters params;          // as given (rebuild's full setup starts from them again)
  bool from_rows = false;     // built from RowBlocks: rebuild() cannot take a whole matrix
  SetupCallbacks callbacks;
  SetupSummary summary;
  Array<Index> finest_aggregates;
  Turns turns;  // solve and precondition, one at a time
};

namespace {

// What the exception being handled says (an Error's line, bad_alloc's "out of memory").
std::string current_exception_text() {
  try {
    throw;
  } catch (const std::bad_alloc&) {
    return "out of memory";
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "an exception that is not a std::exception";
  }
}

// What in the parameters can make the V-cycle indefinite, for PCG's "preconditioner not positive definite":
// a smoother that amplifies the error at the top of a level's spectrum (a Chebyshev interval that stops below
// it, a Jacobi weight too large for it), or the float cycle's rounding.
std::string indefinite_cycle_hint(const AmgParams& amg, const SolverParams& solver) {
  const SmootherParams& s = amg.smoother;
  const std::string lanczos = "amg.lanczos_steps (" + std::to_string(amg.lanczos_steps) + ")";
  std::vector<std::string> remedies;
  if (s.type == SmootherType::jacobi && s.omega > 0) {
    char omega[32];
    std::snprintf(omega, sizeof omega, "%.9g", s.omega);  // 1.999 is not 2
    remedies.push_back(std::string("set amg.smoother.omega (") + omega +
                       ") to 0, which takes 4 / (3 rho) on each level (a fixed weight must lie in (0, 2 / rho) "
                       "on every level, and smooths little near 0)");
  }
  else if (amg.spectral_radius == SpectralRadius::lanczos && s.type != SmootherType::gauss_seidel)  // no estimate
    remedies.push_back(s.type == SmootherType::jacobi
                           ? "raise " + lanczos
                           : "raise amg.smoother.eigenvalue_safety (" + format_number(s.eigenvalue_safety) + ") or " +
                                 lanczos + ", or set amg.spectral_radius: gershgorin");
  if (solver.precision == Precision::mixed) remedies.push_back("use solver.precision: double");
  // The setup checks symmetry and a positive diagonal, which an indefinite A has too (a block [[1, 2], [2, 1]]):
  // then no parameter helps, and the hint says so last.
  const std::string indefinite = "A itself is not positive definite, which its symmetry and positive diagonal, "
                                 "all the setup checks, do not rule out";
  if (remedies.empty()) return " (" + indefinite + "?)";
  std::string hint = " (the V-cycle amplifies some error on a level: ";
  for (std::size_t i = 0; i < remedies.size(); ++i) hint += (i ? "; or " : "") + remedies[i];
  return hint + "; unless " + indefinite + ")";
}

// A on the backend in the cycle's precision: itself, or a float copy made where it is.
template <class CycleValue, class Backend>
std::shared_ptr<const typename Backend::template Csr<CycleValue>> in_cycle_precision(
    const Backend& backend, const std::shared_ptr<const typename Backend::template Csr<double>>& A) {
  if constexpr (std::is_same_v<CycleValue, double>)
    return A;
  else
    return backend.template cast<CycleValue, double>(*A);
}

template <class CycleValue>
const typename AmgHierarchy<CycleValue>::ProductCallback& product_callback(const SetupCallbacks& callbacks) {
  if constexpr (std::is_same_v<CycleValue, double>)
    return callbacks.on_product;
  else
    return callbacks.on_product_float;
}

#ifdef AMGSOLVE_WITH_MPI
// amg with its nullspace resolved on the ranks' rows (nothing gathered): the same decision and messages
// as resolve_nullspace on the whole matrix.
AmgParams with_nullspace_on_ranks(AmgParams amg, const MpiBackend& backend, const DistributedMatrix<double>& A) {
  if (!amg.is_system()) {
    amg.nullspace = resolve_nullspace(backend, A, amg.nullspace);
  } else {
    resolve_system_nullspace(backend, A, amg);
  }
  return amg;
}

#endif

// Over MPI ranks a system's finest rows (and the vectors uploaded) are partitioned in whole blocks of its
// nodes (node_partition_unit): set on the backend before A is distributed. Returns A's rows, so that it runs
// among the member initialisers, before A's.
template <class Backend>
Index set_finest_partition_unit(Backend& backend, Index rows, const AmgParams& amg) {
  if constexpr (requires { backend.set_finest_unit(std::int64_t{1}); })
    if (amg.is_system()) backend.set_finest_unit(node_partition_unit(amg.block_size));
  return rows;
}

// The solver on one backend, with the V-cycle in CycleValue: double, or float for solver.precision: mixed
// (the cycle in float inside the double outer iteration). The solve runs on SolveBackend: the setup's
// backend itself, or a layer over it (over MPI ranks, each rank's GPU: MpiOver<CudaBackend>).
template <class Backend, class CycleValue, class SolveBackend = Backend>
class SolverOn final : public Solver::Impl {
 public:
  template <class V>
  using Vec = typename SolveBackend::template Vector<V>;

  SolverOn(ScaledMatrix A, const Parameters& params, const SetupCallbacks& callbacks)
      : setup_timer_(),
        params_(params.solver),
        solve_backend_(solve_backend_of(backend_)),
        rows_(set_finest_partition_unit(backend_, A.matrix->rows, params.amg)),
        matrix_exponent_(A.exponent),
        A_csr_(backend_.csr(scaled_down(std::move(A.matrix), matrix_exponent_))),
        hierarchy_(naming_a_floating_part(params.amg, [&] {
          return Hierarchy<Backend, CycleValue>(backend_, in_cycle_precision<CycleValue>(backend_, A_csr_), params.amg,
                                                callbacks.on_level, product_callback<CycleValue>(callbacks));
        })) {
    hold_system_nullspace();
    finish_setup();
    fill_summary(setup_timer_.seconds());
  }

#ifdef AMGSOLVE_WITH_MPI
  // From this rank's rows; the nullspace (params.amg.nullspace as given) is resolved here, over the ranks.
  SolverOn(RowBlock block, const Parameters& params, const SetupCallbacks& callbacks)
    requires std::is_same_v<Backend, MpiBackend>
      : setup_timer_(),
        params_(params.solver),
        solve_backend_(solve_backend_of(backend_)),
        rows_(set_finest_partition_unit(backend_, static_cast<Index>(block.global_rows), params.amg)),
        matrix_exponent_(exponent_over_ranks(block)),
        A_csr_(finest_matrix(std::move(block), matrix_exponent_)),
        hierarchy_(naming_a_floating_part(params.amg, [&] {
          return Hierarchy<Backend, CycleValue>(backend_, in_cycle_precision<CycleValue>(backend_, A_csr_),
                                                with_nullspace_on_ranks(params.amg, backend_, *A_csr_),
                                                callbacks.on_level, product_callback<CycleValue>(callbacks));
        })) {
    hold_system_nullspace();
    finish_setup();
    fill_summary(setup_timer_.seconds());
  }
#endif

  SolveResult solve(const Vector<double>& b, Vector<double>& x, const IterationCallback& on_iteration,
                    const SolveOptions& options, VectorLayout layout) override {
    SolverParams effective = limits_of(options);
    // The solve runs on b / 2^e and A / 2^s, so on x / 2^(e - s) (amgsolve/vector_scale.hpp).
    const int exponent = scale_exponent(b, layout), x_exponent = exponent - matrix_exponent_;
    require_valid_inputs(b, x, options, effective, layout, x_exponent);
    Timer timer;
    const TransferCounts before = solving().transfers();
    const CommunicationStats communicated_before = communication();
    Vec<double> b_on = exponent == 0 ? to_solve(b, layout) : to_solve(scaled(b, -exponent), layout);
    // The absolute tolerance as a relative one, on b_on's scale (b / 2^exponent) so that nothing overflows.
    if (effective.absolute_tolerance > 0) {
      effective.absolute_tolerance = std::ldexp(effective.absolute_tolerance, -exponent);
      effective.tolerance = held_tolerance(effective, solving().norm2(b_on));
    }
    const double tolerance = effective.tolerance;
    // c = ||b's part along the nullspace|| / ||b||, which no A x takes away
    const double nullspace_part = hierarchy_.singular() ? onto_range(b_on, effective) : 0.0;
    // The iteration's residuals are of b's range part; the caller's, of b: sqrt(h^2 (1 - c^2) + c^2).
    const auto of_b = [nullspace_part](double h) {
      return nullspace_part == 0 ? h
                                 : std::sqrt(h * h * (1 - nullspace_part * nullspace_part) + nullspace_part * nullspace_part);
    };
    const IterationCallback report = !on_iteration ? IterationCallback{} : [&](int k, double h) { on_iteration(k, of_b(h)); };
    Vec<double> x_on = first_iterate(x, options, layout, x_exponent);
    SolveResult result = iterate(effective, b_on, x_on, report);
    for (double& h : result.history) h = of_b(h);
    result.relative_residual = of_b(result.relative_residual);
    return_solution(std::move(x_on), x, layout, b, exponent, x_exponent, tolerance, result);
    result.tolerance = tolerance;
    result.seconds = timer.seconds();
    result.transfers = solving().transfers() - before;
    result.communication = communication() - communicated_before;
    return result;
  }

  bool rebuild(const ScaledMatrix& A, std::string& why) override {
    return rebuild_from(backend_.csr(scaled_down(A.matrix, A.exponent)), A.exponent, why);
  }

  bool rebuild([[maybe_unused]] const RowBlock& block, [[maybe_unused]] std::string& why) override {
#ifdef AMGSOLVE_WITH_MPI
    if constexpr (std::is_same_v<Backend, MpiBackend>) {
      const int exponent = exponent_over_ranks(block);
      return rebuild_from(finest_matrix(block, exponent), exponent, why);
    }
#endif
    // On one process Solver::rebuild passes the block as the whole matrix it is, checked and scaled.
    throw Error("internal: a row block's re-setup without MPI ranks to share it");
  }

  bool has_hierarchy() const override { return cycle_ != nullptr; }
  void drop_hierarchy() override {
    cycle_.reset();
    A_.reset();
    hierarchy_.clear();
    // A itself too (in double the finest level's matrix), and what was sized for it: a full setup in place
    // then holds no part of the old levels.
    A_csr_.reset();
    r_cycle_ = Vec<CycleValue>{};
    z_cycle_ = Vec<CycleValue>{};
    system_nullspace_.reset();
    // Nor do the old levels' figures describe anything: the summary keeps what the solver is, not what it built.
    SetupSummary empty;
    empty.backend = summary.backend;
    empty.ranks = summary.ranks;
    summary = std::move(empty);
    finest_aggregates.clear();
  }

  void precondition(const Vector<double>& r, Vector<double>& z, VectorLayout layout) override {
    const int exponent = scale_exponent(r, layout);  // the cycle is linear: as in solve(), so that float holds r
    require_agreed(preconditioned_vector_problem(r, vector_rows(layout)));
    const Vec<double> r_on = exponent == 0 ? to_solve(r, layout) : to_solve(scaled(r, -exponent), layout);
    Vec<double> z_on;
    solving().zero(z_on, A_->rows);
    apply_cycle(r_on, z_on);
    from_solve(z_on, z, layout);
    if (exponent != matrix_exponent_) z = scaled_back(z, exponent - matrix_exponent_, "preconditioned vector", layout);
  }

 private:
  // The backend the solve runs on: the setup's, or a layer over its ranks (MpiOver<CudaBackend>: each rank's
  // GPU multiplies the levels the mpi backend built on its CPU cores).
  const SolveBackend& solving() const {
    if constexpr (std::is_same_v<SolveBackend, Backend>)
      return backend_;
    else
      return *solve_backend_;
  }
  static std::unique_ptr<SolveBackend> solve_backend_of(const Backend& setup) {
    std::unique_ptr<SolveBackend> made;
    if constexpr (!std::is_same_v<SolveBackend, Backend>)
      on_every_rank_or_none(setup, [&] { made = std::make_unique<SolveBackend>(setup.comm()); });
    return made;
  }

  // f(); where the solve has a backend of its own over the ranks (each rank's GPU), a failure of f on any rank
  // (a GPU that does not start, out of its memory) is the first such rank's error on every rank, so that no
  // rank is left waiting in the next collective. f must do nothing collective.
  template <class F>
  static void on_every_rank_or_none([[maybe_unused]] const Backend& setup, F&& f) {
    if constexpr (std::is_same_v<SolveBackend, Backend>) {
      f();
    } else {
#ifdef AMGSOLVE_WITH_MPI
      std::string problem;
      try {
        f();
      } catch (...) {
        problem = current_exception_text();
      }
      if (RankProblem first = first_rank_problem(setup.comm().get(), problem); first.rank >= 0)
        throw Error(first.message());
#endif
    }
  }

  // The re-setup for A_new (on the backend, in double): in place, or false and why.
  // A_new: the new matrix divided by 2^exponent (matrix_exponent).
  bool rebuild_from(std::shared_ptr<const typename Backend::template Csr<double>> A_new, int exponent,
                    std::string& why) {
    if (!has_hierarchy()) {
      why = "the last rebuild failed";  // a re-setup's or a full setup's: either leaves no hierarchy
      return false;
    }
    // The new matrix's nullspace is decided while the levels still stand, whatever comes next: its refusal (a
    // declared nullspace that does not hold, a singular matrix in disconnected parts) is one before any work,
    // which leaves them as they were, as the full setup's own check would not.
    const bool nullspace_kept = same_nullspace(*A_new);
    if (!hierarchy_.keeps_structure()) {
      why = !hierarchy_.params().keep_structure ? "amg.keep_structure is off" : "one level: no aggregates to keep";
      return false;
    }
    if (!backend_.same_pattern(*A_new, *A_csr_)) {
      why = "the matrix's pattern changed";
      return false;
    }
    if (!nullspace_kept) {
      why = "the matrix's nullspace changed";
      return false;
    }
    Timer timer;
    // The solve's copies of the operators (the cycle's sliced ones, A's) are made anew after the re-setup: let
    // go of them first, so that the re-setup's arrays take their memory instead of fresh pages beside them.
    cycle_.reset();
    A_.reset();
    try {
      hierarchy_.rebuild(backend_, in_cycle_precision<CycleValue>(backend_, A_new));
    } catch (const Error& e) {  // the values failed (or a kept pattern no longer held): no hierarchy is left
      why = e.what();
      drop_hierarchy();
      return false;
    } catch (...) {  // out of memory, a callback's exception: no full setup after it, and no hierarchy either
      abandon_resetup();
      throw;
    }
    try {  // the solve's copies, made anew: out of memory here too leaves no hierarchy, not half of one
      A_csr_ = std::move(A_new);
      matrix_exponent_ = exponent;
      finish_setup();
      fill_summary(timer.seconds());
    } catch (...) {
      abandon_resetup();
      throw;
    }
    summary.reused = true;
    summary.rebuild_note = rebuild_note();
    return true;
  }

  // In a handler of what a re-setup threw (not an Error it answers with a full setup): no hierarchy is left,
  // and the note says what was thrown.
  void abandon_resetup() {
    drop_hierarchy();
    summary.rebuild_note = current_exception_text();
  }

  // For setup().rebuild_note: what a re-setup kept, how it formed the products, and where the new values
  // classify many couplings otherwise than the kept aggregates were made for (a full setup then fits better).
  std::string rebuild_note() const { return how_products_were_formed() + strength_drift_note(); }

  std::string strength_drift_note() const {
    const std::vector<LevelInfo>& levels = hierarchy_.info();
    const auto worst = std::max_element(levels.begin(), levels.end(), [](const LevelInfo& a, const LevelInfo& b) {
      return a.strength_drift < b.strength_drift;
    });
    if (worst == levels.end() || worst->strength_drift < kNotableStrengthDrift) return "";
    char share[16];
    std::snprintf(share, sizeof share, "%.0f%%", 100.0 * worst->strength_drift);
    return "; the new values make " + std::string(share) + " of level " + std::to_string(worst->level) +
           "'s sampled couplings strong where they were weak or the reverse: if the iterations grow, a full setup "
           "fits them better (a new solver, or amg.keep_structure: false)";
  }

  std::string how_products_were_formed() const {
    const std::string kept = "aggregates and tentative prolongators kept, products by ";
    if constexpr (kHostCsr<Backend> || kDistributed<Backend>) {
      // Over ranks summa2d and split3d multiply on their grids: the numeric phase is the row-wise products'.
      const std::vector<LevelInfo>& levels = hierarchy_.info();
      const std::string& name = hierarchy_.params().spgemm;
      const bool collective = SpgemmRegistry::instance().get(name).collective();
      const std::string spgemm = (collective ? "the distributed SpGEMM " : "the SpGEMM ") + name;
      const int level = hierarchy_.products_renewed_from();
      if (level == 0) return kept + spgemm + " (the finest filtered matrix has another pattern than before)";
      const bool numeric = levels.size() < 2 || levels.front().rap_product.choice.rfind(kNumericPhaseChoice, 0) == 0;
      if (!numeric) return kept + spgemm + (collective ? "" : " in full (it sums in another order than A's rows)");
      const std::string phase = kDistributed<Backend> ? "their numeric phase, only the values of the rows they read "
                                                        "fetched (the setup's plans)"
                                                      : "their numeric phase";
      if (level < 0) return kept + phase;
      return kept + phase + " (from level " + std::to_string(level) +
             " by the SpGEMM: its filtered matrix has another pattern than before)";
    } else {
      return kept + "the " + to_string(Backend::kind) + " backend's SpGEMM " + hierarchy_.params().spgemm;
    }
  }

  // After the hierarchy: A and the levels in the solve's format, the cycle; over MPI ranks, the halo mode.
  void finish_setup() {
    if constexpr (requires { backend_.set_halo_mode(HaloMode::overlap); })
      backend_.set_halo_mode(params_.halo_exchange);
    const SpmvFormat format = choose_format<SolveBackend>(backend_, hierarchy_, params_.spmv_format, summary);
    on_every_rank_or_none(backend_, [&] { make_solve_operators(format); });
#ifdef AMGSOLVE_WITH_MPI
    if constexpr (std::is_same_v<SolveBackend, MpiBackend>)  // collective: after every rank built its cycle
      describe_sliced_on_ranks(backend_, hierarchy_, params_.spmv_format, summary);
#endif
    finest_aggregates = hierarchy_.finest_aggregates();
  }

  // A_ and the cycle's operators on the solve's backend, in `format`.
  void make_solve_operators(SpmvFormat format) {
    std::shared_ptr<const typename SolveBackend::template Matrix<CycleValue>> fine;
    if constexpr (std::is_same_v<CycleValue, double>) {
      A_ = solving().matrix(A_csr_, format);
      fine = A_;  // one copy for PCG and the cycle
    } else {
      // The outer iteration multiplies by the double A once per iteration, the float cycle several times by
      // its own copy: a second layout of A would cost its memory for little.
      A_ = solving().matrix(A_csr_, SolveBackend::kind == BackendKind::cpu ? SpmvFormat::csr : format);
    }
    // The cpu backend's sliced copy of an operator replaces the hierarchy's CSR, let go of as soon as the
    // cycle has it: every P and R, and the level matrices unless a re-setup will need them.
    typename Vcycle<SolveBackend, CycleValue>::OperatorBuilt release;
    SlicedOperators sliced;
    if constexpr (kHostCsr<Backend>)
      release = [this, &sliced](std::size_t level, LevelOperator which, const auto& built) {
        if (!built.sliced) return;
        sliced.add(level, which);
        if (which != LevelOperator::matrix || !hierarchy_.keeps_structure()) hierarchy_.release(level, which);
      };
    cycle_ = std::make_unique<Vcycle<SolveBackend, CycleValue>>(solving(), hierarchy_, format, fine, release);
    if constexpr (kHostCsr<Backend>) sliced.describe(params_.spmv_format, summary);
  }

  // z = one V-cycle on r from z = 0, in the cycle's precision.
  void apply_cycle(const Vec<double>& r, Vec<double>& z) {
    if constexpr (std::is_same_v<CycleValue, double>) {
      cycle_->apply(r, z);
    } else {
      solving().convert(r, r_cycle_);
      cycle_->apply(r_cycle_, z_cycle_);
      solving().convert(z_cycle_, z);
    }
    // Keeps the search directions orthogonal to the nullspace, which rounding would otherwise feed.
    if (hierarchy_.singular()) remove_nullspace(z);
  }

  // A singular system's nullspace basis on the finest level (amg/system_nullspace.hpp), for the outer
  // iteration's projections; only the cpu backend sets up a system.
  void hold_system_nullspace() {
    const AmgParams& amg = hierarchy_.params();
    if (amg.nullspace != NullspaceChoice::near_nullspace) return;
    if constexpr (kDistributed<Backend>)  // the rank's rows of the vectors, their dot products over the ranks
      system_nullspace_.emplace(finest_near_nullspace(backend_, *A_csr_, amg.block_size, amg.near_nullspace),
                                *amg.nullspace_combinations,
                                [this](const Vector<double>& a, const Vector<double>& b) { return backend_.dot(a, b); });
    else
      system_nullspace_.emplace(finest_near_nullspace(rows_, amg.block_size, amg.near_nullspace),
                                *amg.nullspace_combinations);
  }

  // v -= its part along the nullspace of a singular matrix: the constant's mean, or a system's vectors'.
  void remove_nullspace(Vec<double>& v) const {
    if (!system_nullspace_) return solving().remove_mean(v);
    if constexpr (std::is_same_v<Vec<double>, Vector<double>>)
      system_nullspace_->project(v);
    else
      throw Error("internal: a system's nullspace on the " + std::string(to_string(SolveBackend::kind)) + " backend");
  }

  // This solve's limits: the solver's, with the ones `options` gives instead.
  SolverParams limits_of(const SolveOptions& options) const {
    SolverParams limits = params_;
    if (options.tolerance) limits.tolerance = *options.tolerance;
    if (options.absolute_tolerance) limits.absolute_tolerance = *options.absolute_tolerance;
    if (options.max_iterations) limits.max_iterations = *options.max_iterations;
    return limits;
  }

  // b, the start x (with options.initial_guess) and the limits checked, before anything else collective: a
  // wrong input on one rank must not leave the others waiting.
  void require_valid_inputs(const Vector<double>& b, const Vector<double>& x, const SolveOptions& options,
                            const SolverParams& limits, VectorLayout layout, int x_exponent) const {
    std::string problem = right_hand_side_problem(b, vector_rows(layout));
    if (problem.empty()) problem = solve_limits_problem(limits);
    if (problem.empty() && options.initial_guess) problem = initial_guess_problem(x, vector_rows(layout), x_exponent);
    require_agreed(problem);
    require_same_limits(limits);
  }

  // A singular matrix's solve: only b's part in the range can be reached. A larger part along the
  // nullspace is an error, a smaller one (below the tolerance) is removed, so that the iteration sees a
  // consistent system, to the tolerance that then holds for b (range_tolerance). Returns that part.
  double onto_range(Vec<double>& b_on, SolverParams& limits) const {
    const double part = consistent_part_of(b_on, static_cast<std::size_t>(rows_), limits.tolerance);
    remove_nullspace(b_on);
    limits.tolerance = range_tolerance(limits.tolerance, part);
    return part;
  }

  // The iteration's start on the solve's backend: the caller's x (on the solve's scale, 2^x_exponent) with
  // options.initial_guess, else zero.
  Vec<double> first_iterate(const Vector<double>& x, const SolveOptions& options, VectorLayout layout,
                            int x_exponent) const {
    Vec<double> x_on;
    if (!options.initial_guess) {
      solving().zero(x_on, A_->rows);
      return x_on;
    }
    x_on = x_exponent == 0 ? to_solve(x, layout) : to_solve(scaled(x, -x_exponent), layout);
    // A start's part along the nullspace changes no residual but the rounding of A x (a constant of 1e9 held
    // the true residual at 1e-7): removed, as it is from the solution anyway.
    if (hierarchy_.singular()) remove_nullspace(x_on);
    return x_on;
  }

  // PCG or the stationary iteration with the V-cycle, from x_on.
  SolveResult iterate(const SolverParams& limits, const Vec<double>& b_on, Vec<double>& x_on,
                      const IterationCallback& report) {
    const BackendPreconditioner<SolveBackend, double> vcycle = [this](const Vec<double>& r, Vec<double>& z) {
      apply_cycle(r, z);
    };
    try {
      return limits.type == SolverType::pcg
                 ? pcg<SolveBackend, double>(solving(), *A_, b_on, x_on, vcycle, limits, report)
                 : stationary_iteration<SolveBackend, double>(solving(), *A_, b_on, x_on, vcycle, limits, report);
    } catch (const NumericalError& e) {  // on every rank alike: the iterations' checks are of global sums
      const std::string floating = floating_part_of_A(hierarchy_.params());
      if (!floating.empty()) throw FloatingPartError(std::string(e.what()) + "; " + floating);
      if (dynamic_cast<const PreconditionerBreakdown*>(&e))
        throw NumericalError(e.what() + indefinite_cycle_hint(hierarchy_.params(), limits));
      throw;
    }
  }

  // The hierarchy that `build` sets up. A singular coarsest level may come of a part of A that is singular on
  // its own: the error then names it (every rank factorised the same gathered level, so all are here).
  template <class Build>
  Hierarchy<Backend, CycleValue> naming_a_floating_part(const AmgParams& amg, Build&& build) const {
    try {
      return build();
    } catch (const SingularCoarsestLevel& e) {
      const std::string floating = floating_part_of_A(amg);
      if (floating.empty()) throw;
      throw FloatingPartError(std::string(e.what()) + "; " + floating);
    }
  }

  // A's floating part (amg/nullspace.hpp's floating_part), or "": on one process (the GPU's A through a host
  // copy) or over the ranks (collective); a system's by its finest near-nullspace, where systems are set up.
  // Asked only after a failure.
  std::string floating_part_of_A(const AmgParams& amg) const {
    if (!A_csr_) return "";
    if (amg.is_system()) {
      if constexpr (SetsUpSystems<Backend>::value) {
        const NearNullspace B = finest_near_nullspace(backend_, *A_csr_, amg.block_size, amg.near_nullspace);
        if constexpr (std::is_same_v<Backend, CpuBackend>) return floating_part(*A_csr_, &B);
#ifdef AMGSOLVE_WITH_MPI
        if constexpr (std::is_same_v<Backend, MpiBackend>) return floating_part(backend_, *A_csr_, &B);
#endif
      }
      return "";
    }
    if constexpr (std::is_same_v<typename Backend::template Csr<double>, CsrMatrix<double>>)
      return floating_part(*A_csr_);
#ifdef AMGSOLVE_WITH_CUDA
    if constexpr (std::is_same_v<Backend, CudaBackend>) return floating_part(*backend_.host_view(*A_csr_));
#endif
#ifdef AMGSOLVE_WITH_MPI
    if constexpr (std::is_same_v<Backend, MpiBackend>) return floating_part(backend_, *A_csr_);
#endif
    return "";
  }

  // The iterate into the caller's x, on b's scale; where scaling back cost digits, the residual it attains
  // is checked against the tolerance, and reported if larger than the iteration's (require_attained).
  void return_solution(Vec<double> x_on, Vector<double>& x, VectorLayout layout, const Vector<double>& b,
                       int exponent, int x_exponent, double tolerance, SolveResult& result) const {
    if (hierarchy_.singular()) remove_nullspace(x_on);  // the solution of least norm: x is defined up to the nullspace
    from_solve(x_on, x, layout);
    if (x_exponent == 0) return;
    Vector<double> back = scaled_back(x, x_exponent, "solution", layout);
    const bool lost = digits_lost_on_any_rank(x, back, x_exponent, layout);
    x = std::move(back);
    if (lost) require_attained(b, x, exponent, x_exponent, tolerance, result, layout);
  }

  // b's part along the nullspace, ||Q^T b|| / ||b||, checked against the tolerance (an InputError above it).
  double consistent_part_of(const Vec<double>& b_on, std::size_t n, double tolerance) const {
    if (system_nullspace_) {
      if constexpr (std::is_same_v<Vec<double>, Vector<double>>) {
        const double part = system_nullspace_->part(b_on);
        require_consistent_rhs(part, system_nullspace_->vectors(), tolerance, "the right-hand side");
        return part;
      } else {
        throw Error("internal: a system's nullspace on the " + std::string(to_string(SolveBackend::kind)) + " backend");
      }
    }
    const double sum = solving().sum(b_on), norm = solving().norm2(b_on);
    require_consistent_rhs(sum, norm, n, tolerance, "the right-hand side");
    return constant_part(sum, norm, n);
  }

  // A caller's vector on the solve's backend, and back: whole on every rank, or this rank's rows.
  Vec<double> to_solve(const Vector<double>& v, VectorLayout layout) const {
    if constexpr (kDistributed<SolveBackend>)
      if (layout == VectorLayout::rows) return solving().upload_rows(v);
    return solving().upload(v);
  }
  void from_solve(const Vec<double>& v, Vector<double>& out, VectorLayout layout) const {
    if constexpr (kDistributed<SolveBackend>)
      if (layout == VectorLayout::rows) return solving().download_rows(v, out);
    solving().download(v, out);
  }
  // The entries a caller's vector has, and the global number of its first.
  std::size_t entries(VectorLayout layout) const {
    return static_cast<std::size_t>(layout == VectorLayout::rows ? A_->rows : rows_);
  }
  std::int64_t first_entry(VectorLayout layout) const {
    if constexpr (kDistributed<Backend>)
      if (layout == VectorLayout::rows) return A_csr_->first_row();
    return 0;
  }
  // The largest of the ranks' `mine` where each holds its rows of the vectors (the same on every rank;
  // collective); `mine` where every rank holds them whole.
  double largest_over_ranks(double mine, VectorLayout layout) const {
    if constexpr (kDistributed<Backend>)
      if (layout == VectorLayout::rows) return backend_.comm().max(mine);
    return mine;
  }

  // The rows a caller's vector must have (amgsolve/solve_inputs.hpp).
  VectorRows vector_rows(VectorLayout layout) const {
    return {entries(layout), first_entry(layout), layout == VectorLayout::rows && kDistributed<Backend>};
  }

  // b's vector_exponent, of all of a vector's rows (collective for them).
  int scale_exponent(const Vector<double>& b, VectorLayout layout) const {
    return vector_exponent(largest_over_ranks(largest_magnitude(b), layout));
  }

#ifdef AMGSOLVE_WITH_MPI
  // The finest matrix over the ranks from this rank's block of rows, divided by 2^exponent, its rows and
  // columns in the finest partition (collective).
  std::shared_ptr<const DistributedMatrix<double>> finest_matrix(RowBlock block, int exponent) const {
    const BlockPartition partition = backend_.finest_partition(block.global_rows);
    return std::make_shared<const DistributedMatrix<double>>(backend_.comm(), partition, partition,
                                                             scaled_down(std::move(block.rows), exponent));
  }

  // matrix_exponent of the whole matrix, from this rank's rows of it (collective).
  int exponent_over_ranks(const RowBlock& block) const {
    const std::int64_t first = backend_.finest_partition(block.global_rows).begin(backend_.comm().rank());
    return matrix_exponent(backend_.comm().max(largest_diagonal(block.rows, static_cast<Index>(first))));
  }
#endif

  // lost_digits on any rank, for a vector's rows (collective for them).
  bool digits_lost_on_any_rank(const Vector<double>& on_b_scale, const Vector<double>& x, int exponent,
                               VectorLayout layout) const {
    return largest_over_ranks(lost_digits(on_b_scale, x, exponent) ? 1.0 : 0.0, layout) > 0;
  }

  // After a scale-back that lost digits: the residual of the x returned, against b as given, must still meet
  // the tolerance, or the solve is an error (x_1 of diag(1e200, 1) x = [1e-150, 1e-150] is 1e-350: flushed
  // to 0, a residual of 0.7 had been reported as converged). Measured on the solve's scale (b times
  // 2^-exponent and the x returned, digits lost and all, times 2^-x_exponent: exact), where b's norm does
  // not underflow (b of 1e-310).
  void require_attained(const Vector<double>& b, const Vector<double>& x, int exponent, int x_exponent,
                        double tolerance, SolveResult& result, VectorLayout layout) const {
    const Vec<double> b_on = to_solve(scaled(b, -exponent), layout), x_on = to_solve(scaled(x, -x_exponent), layout);
    Vec<double> r;
    solving().residual(*A_, x_on, b_on, r);
    const double attained = solving().norm2(r) / solving().norm2(b_on);
    if (!(attained <= tolerance))
      throw NumericalError("the solution underflows double: entries below 2.2e-308 lose their digits, and the x "
                           "returned has a relative residual of " + format_number(attained) +
                           " (the iteration reached " + format_number(result.relative_residual) +
                           "): scale the right-hand side up");
    result.relative_residual = std::max(result.relative_residual, attained);
  }

  // y 2^e, the result of the scaled solve on b's scale: an error where it leaves double's range, since no
  // residual of the returned vector would then be what the iteration reached (judged on all of a vector's
  // rows: collective for them).
  Vector<double> scaled_back(const Vector<double>& y, int exponent, const char* what, VectorLayout layout) const {
    Vector<double> out = scaled(y, exponent);
    require_in_double_range(largest_over_ranks(largest_magnitude(out), layout), what);  // y was checked finite
    return out;
  }

  // Over MPI ranks, which iterate together and so must stop together: the same limits on every rank.
  // Collective.
  void require_same_limits(const SolverParams& effective) const {
    if constexpr (kDistributed<Backend>) {
      const auto& comm = backend_.comm();  // auto: no Communicator type in a build without MPI
      const bool tolerances_differ = comm.max(effective.tolerance) != -comm.max(-effective.tolerance) ||
                                     comm.max(effective.absolute_tolerance) != -comm.max(-effective.absolute_tolerance);
      const std::int64_t limit = effective.max_iterations;
      const bool limits_differ = comm.min(limit) != -comm.min(-limit);
      if (tolerances_differ || limits_differ)
        throw InputError("the ranks give different tolerances or iteration limits for one solve");
    }
  }

  // Throws `mine` where it is not empty; over MPI ranks, the first rank's problem on every rank (collective).
  void require_agreed(const std::string& mine) const {
    std::string problem = mine;
    if constexpr (kDistributed<Backend>) problem = backend_.comm().first_problem(mine);
    if (!problem.empty()) throw InputError(problem);
  }

  CommunicationStats communication() const {
    if constexpr (kDistributed<Backend>)
      return backend_.comm().stats();
    else
      return {};
  }

  // Whether A_new has the nullspace the hierarchy was built for (a system's: as many vectors, spanning the
  // same space; the combinations found again may differ in rounding, and the hierarchy's are kept).
  bool same_nullspace(const typename Backend::template Csr<double>& A_new) const {
    const AmgParams& amg = hierarchy_.params();
    if constexpr (std::is_same_v<Backend, CpuBackend>) {
      if (amg.is_system()) {
        AmgParams again = params.amg;
        resolve_system_nullspace(A_new, again);
        if (again.nullspace != amg.nullspace) return false;
        if (!system_nullspace_) return true;
        const std::size_t values = again.nullspace_combinations->size();
        if (values != amg.nullspace_combinations->size()) return false;
        const Vector<double> found =
            nullspace_vectors(finest_near_nullspace(rows_, amg.block_size, amg.near_nullspace), *again.nullspace_combinations);
        const auto n = static_cast<std::size_t>(rows_);
        for (std::size_t first = 0; first < found.size(); first += n)
          if (system_nullspace_->outside(Vector<double>(found.begin() + first, found.begin() + first + n)) > 1e-8)
            return false;
        return true;
      }
    } else if constexpr (kDistributed<Backend>) {
      if (amg.is_system()) {  // over MPI ranks: the same choice and combinations (found alike on every rank)
        AmgParams again = params.amg;
        resolve_system_nullspace(backend_, A_new, again);
        if (again.nullspace != amg.nullspace) return false;
        return !amg.nullspace_combinations || *again.nullspace_combinations == *amg.nullspace_combinations;
      }
    }
    return resolve_nullspace(backend_, A_new, params.amg.nullspace) == amg.nullspace;
  }

  void fill_summary(double seconds) {
    summary.backend = SolveBackend::kind;
    const AmgParams& amg = hierarchy_.params();
    summary.nullspace = to_string(amg.nullspace);
    summary.nullspace_vectors = system_nullspace_ ? system_nullspace_->vectors() : amg.singular() ? 1 : 0;
    summary.block_size = amg.block_size;
    summary.near_nullspace_vectors = amg.near_nullspace.count > 0 ? amg.near_nullspace.count : amg.block_size;
    summary.near_nullspace_sweeps =
        amg.is_system() && !amg.singular() && hierarchy_.levels() > 1 ? amg.improve_near_nullspace : 0;
    summary.levels = hierarchy_.info();
    summary.seconds = seconds;
    summary.operator_complexity = hierarchy_.operator_complexity();
    summary.grid_complexity = hierarchy_.grid_complexity();
    summary.spgemm_backend = hierarchy_.spgemm_backend();
    summary.hierarchy_bytes = hierarchy_.bytes();
    summary.model_bytes_per_iteration =
        model_bytes_per_iteration(summary.levels, hierarchy_.params(), params_, sizeof(CycleValue));
    // The double cycle's finest operator is A_ itself, counted in the cycle's bytes already.
    summary.backend_bytes = cycle_->bytes();
    if constexpr (!std::is_same_v<CycleValue, double>) summary.backend_bytes += solving().bytes(*A_);
    summary.transfers = solving().transfers();
    summary.local_rows = A_->rows;
    if constexpr (kDistributed<Backend>) summary.ranks = backend_.comm().size();
    if constexpr (requires { solving().halo_mode(); }) summary.halo_exchange = solving().halo_mode();
    summary.communication = communication();
  }

  Timer setup_timer_;  // first: the setup's time includes the float copy and the uploads
  SolverParams params_;
  Backend backend_;  // the setup's, before what it holds: destroyed last
  std::unique_ptr<SolveBackend> solve_backend_;  // a layer of its own over backend_ (solve_backend_of)
  Index rows_;       // A's (all ranks')
  int matrix_exponent_;  // the setup and the solve use A / 2^matrix_exponent_ (amgsolve/matrix_scale.hpp)
  std::shared_ptr<const typename Backend::template Csr<double>> A_csr_;  // A where the backend keeps it
  Hierarchy<Backend, CycleValue> hierarchy_;
  std::shared_ptr<const typename SolveBackend::template Matrix<double>> A_;
  std::unique_ptr<Vcycle<SolveBackend, CycleValue>> cycle_;
  Vec<CycleValue> r_cycle_, z_cycle_;  // the cycle's input and output when it runs in float
  std::optional<NullspaceProjection> system_nullspace_;  // a singular system's (hold_system_nullspace)
};

// The solver of the cycle's precision on A (a ScaledMatrix, or the mpi backend's RowBlock).
template <class Backend, class SolveBackend, class Input>
std::unique_ptr<Solver::Impl> make_solver_in_precision(Input A, const Parameters& params,
                                                       const SetupCallbacks& callbacks) {
  if (params.solver.precision == Precision::mixed) {
    try {
      return std::make_unique<SolverOn<Backend, float, SolveBackend>>(std::move(A), params, callbacks);
    } catch (const FloatingPartError&) {
      throw;  // singular in any precision
    } catch (const NumericalError& e) {
      // The setup's "not positive definite" blames the input; in float it may be float's rounding instead
      // (a checkerboard of contrast 1e8 builds in double and solves, and breaks down in float).
      throw NumericalError(std::string(e.what()) + " (solver.precision is mixed: the hierarchy is built in float, "
                           "whose rounding can make the coarse levels of an SPD but ill-conditioned matrix "
                           "indefinite; solver.precision: double builds it in double)");
    }
  }
  return std::make_unique<SolverOn<Backend, double, SolveBackend>>(std::move(A), params, callbacks);
}

// A: the whole matrix, or (the mpi backend) this rank's RowBlock.
template <class Backend, class SolveBackend = Backend, class Input>
std::unique_ptr<Solver::Impl> make_solver_on(Input A, const Parameters& params, const SetupCallbacks& callbacks) {
  if constexpr (std::is_same_v<Input, std::shared_ptr<const CsrMatrix<double>>>) {
    const int exponent = require_representable(*A, params);
    return make_solver_in_precision<Backend, SolveBackend>(ScaledMatrix{std::move(A), exponent}, params, callbacks);
  } else {
    return make_solver_in_precision<Backend, SolveBackend>(std::move(A), params, callbacks);
  }
}

// The backend the parameters ask for, where this process runs: the mpi backend under several ranks (which
// distributes the cpu one; SpGEMM backends and backend choices that cannot run there are refused).
BackendKind chosen_backend(const Parameters& params, bool& distributed) {
  distributed = false;
#ifdef AMGSOLVE_WITH_MPI
  register_distributed_spgemm_backends();  // amg.spgemm may name rowwise, summa2d or split3d
  distributed = params.distribute && running_on_several_ranks();
  const SpgemmBackend* spgemm = params.amg.spgemm.empty() ? nullptr : SpgemmRegistry::instance().find(params.amg.spgemm);
  if (spgemm && spgemm->collective() && !params.distribute)
    throw InputError("amg.spgemm: " + spgemm->name() + " multiplies over all MPI ranks together, so it needs a "
                     "distributed solve (Parameters::distribute); choose a local SpGEMM backend");
  if (distributed && spgemm && !spgemm->collective() && spgemm->runs_on() != BackendKind::cpu)
    throw InputError("amg.spgemm: " + spgemm->name() + " runs on the " + to_string(spgemm->runs_on()) +
                     " backend, but under several MPI ranks the setup runs on each rank's CPU cores: choose a cpu "
                     "or distributed SpGEMM backend (amgsolve --list-backends)");
  if (!distributed) return resolve_backend(params.backend);
  // auto means the cpu under several ranks (setup_choice; the solve on each rank's GPU, MpiOver<CudaBackend>,
  // is asked for by name). A rank without a usable GPU is every rank's error.
  BackendKind kind = BackendKind::cpu;
  std::string problem;
  try {
    kind = resolve_backend(setup_choice(params.backend, /*cpu_only=*/false, /*on_ranks=*/true));
  } catch (const Error& e) {
    problem = e.what();
  }
  if (RankProblem first = first_rank_problem(MPI_COMM_WORLD, problem); first.rank >= 0)
    throw InputError(first.message());
  return kind;
#else
  return resolve_backend(params.backend);
#endif
}

#ifdef AMGSOLVE_WITH_MPI
// The solver over MPI ranks: the setup on each rank's CPU cores (the mpi backend), the solve there too or on
// each rank's GPU (the distributed layer over the cuda backend).
template <class Input>
std::unique_ptr<Solver::Impl> make_distributed_solver(Input A, BackendKind kind, const Parameters& params,
                                                      const SetupCallbacks& callbacks) {
#ifdef AMGSOLVE_WITH_CUDA
  if (kind == BackendKind::cuda) return make_solver_on<MpiBackend, MpiOver<CudaBackend>>(std::move(A), params, callbacks);
#endif
  if (kind != BackendKind::cpu) throw Error("internal: no distributed backend for " + std::string(to_string(kind)));
  return make_solver_on<MpiBackend>(std::move(A), params, callbacks);
}
#endif

// A system's setup and Gauss-Seidel's sweeps (amg/gauss_seidel.hpp) run on the cpu backend only: `auto`
// resolves to it for them (setup_choice), and Gauss-Seidel named with cuda is refused.
Parameters with_cpu_only_backend(Parameters params) {
  const bool gauss_seidel = params.amg.smoother.type == SmootherType::gauss_seidel;
  params.backend = setup_choice(params.backend, params.amg.is_system() || gauss_seidel, /*on_ranks=*/false);
  if (gauss_seidel && params.backend == BackendChoice::cuda) throw InputError(kGaussSeidelOnCpuOnly);
  return params;
}

// What a setup of A would refuse before any work because of the parameters the solver was built with (a
// system's near-nullspace that does not fit A's rows): checked by a rebuild while the old levels still stand,
// so that such a matrix leaves them as they were.
void require_rebuild_fits(const CsrMatrix<double>& A, const Parameters& params) {
  if (!params.amg.is_system()) return;
  const Parameters resolved = with_cpu_only_backend(params);
  bool distributed = false;
  try {
    require_system_supported(A, resolved, chosen_backend(resolved, distributed));
  } catch (const InputError& e) {
    throw InputError(std::string("Solver::rebuild: ") + e.what() +
                     " (a rebuild keeps the near-nullspace the solver was built with: build a new Solver for a "
                     "matrix of another size)");
  }
}

std::unique_ptr<Solver::Impl> make_impl(std::shared_ptr<const CsrMatrix<double>> A, const Parameters& params,
                                        const SetupCallbacks& callbacks) {
  require_valid(params);  // Parameters set in code: no schema has read them
  require_solvable_matrix(A.get(), "Solver");
  // The nullspace is decided here, on the matrix in double on the host, before the setup: a declared one
  // that does not hold, or a singular matrix in disconnected parts, is an error now.
  Parameters resolved = with_cpu_only_backend(params);
  if (!resolved.amg.is_system()) resolved.amg.nullspace = resolve_nullspace(*A, params.amg.nullspace);
  bool distributed = false;
  const BackendKind kind = chosen_backend(resolved, distributed);
  if (resolved.amg.is_system()) {
    require_system_supported(*A, resolved, kind);
    resolve_system_nullspace(*A, resolved.amg);  // among its near-nullspace vectors (amg/system_nullspace.hpp)
  }
#ifdef AMGSOLVE_WITH_MPI
  if (distributed) return make_distributed_solver(std::move(A), kind, resolved, callbacks);
#endif
  switch (kind) {
    case BackendKind::cpu: return make_solver_on<CpuBackend>(std::move(A), resolved, callbacks);
    case BackendKind::cuda:
#ifdef AMGSOLVE_WITH_CUDA
      return make_solver_on<CudaBackend>(std::move(A), resolved, callbacks);
#endif
      break;
  }
  throw Error("internal: no backend for " + std::string(to_string(kind)));
}

std::unique_ptr<Solver::Impl> make_impl(RowBlock block, const Parameters& params, const SetupCallbacks& callbacks) {
  bool distributed = false;
  [[maybe_unused]] const BackendKind kind = chosen_backend(params, distributed);
#ifdef AMGSOLVE_WITH_MPI
  if (distributed) {
    require_agreed_blocks(block, params, kind);  // the parameters too: one rank's bad one must not leave the rest waiting
    return make_distributed_solver(std::move(block), kind, params, callbacks);
  }
#endif
  require_whole_block(block);  // make_impl checks the parameters and the matrix
  return make_impl(std::make_shared<const CsrMatrix<double>>(std::move(block.rows)), params, callbacks);
}

}  // namespace

std::pair<std::int64_t, std::int64_t> owned_rows(std::int64_t global_rows, [[maybe_unused]] int block_size) {
#ifdef AMGSOLVE_WITH_MPI
  if (running_on_several_ranks()) {  // no collective call: any rank may ask at any time
    int rank = 0, ranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    const BlockPartition partition(global_rows, ranks, node_partition_unit(std::max(block_size, 1)));
    return {partition.begin(rank), partition.end(rank)};
  }
#endif
  return {0, global_rows};
}

Solver::Solver(std::shared_ptr<const CsrMatrix<double>> A, const Parameters& params, const SetupCallbacks& callbacks)
    : impl_(make_impl(std::move(A), params, callbacks)) {
  impl_->params = params;
  impl_->callbacks = callbacks;
}

Solver::Solver(RowBlock block, const Parameters& params, const SetupCallbacks& callbacks)
    : impl_(make_impl(std::move(block), params, callbacks)) {
  impl_->params = params;
  impl_->callbacks = callbacks;
  impl_->from_rows = true;
}

void Solver::rebuild(std::shared_ptr<const CsrMatrix<double>> A) {
  require_solvable_matrix(A.get(), "Solver::rebuild");
  Impl& impl = live();
  const int exponent = require_representable(*A, impl.params);  // refused before any work: the hierarchy stays
  require_rebuild_fits(*A, impl.params);
  if (impl.from_rows)
    throw InputError("Solver::rebuild: this solver was built from row blocks; rebuild it from this rank's new "
                     "block");
  std::string why;
  if (impl_->rebuild(ScaledMatrix{A, exponent}, why)) return;
  note_failed_resetup(why);
  full_setup_in_place([&] { return make_impl(std::move(A), impl_->params, impl_->callbacks); }, why);
}

void Solver::rebuild(RowBlock block) {
  if (!live().from_rows)
    throw InputError("Solver::rebuild: this solver was built from the whole matrix; rebuild it from the whole "
                     "new matrix");
  bool distributed = false;
  [[maybe_unused]] const BackendKind kind = chosen_backend(impl_->params, distributed);
#ifdef AMGSOLVE_WITH_MPI
  if (distributed) require_agreed_blocks(block, impl_->params, kind);
#endif
  std::string why;
  bool reused = false;
  if (!distributed) {  // on one process the block is the whole matrix
    require_whole_block(block);
    require_solvable_matrix(&block.rows, "Solver::rebuild");
    const int exponent = require_representable(block.rows, impl_->params);
    require_rebuild_fits(block.rows, impl_->params);
    reused = impl_->rebuild(ScaledMatrix{std::make_shared<const CsrMatrix<double>>(block.rows), exponent}, why);
  } else {
    reused = impl_->rebuild(block, why);
  }
  if (reused) return;
  note_failed_resetup(why);
  full_setup_in_place([&] { return make_impl(std::move(block), impl_->params, impl_->callbacks); }, why);
  impl_->from_rows = true;
}

// A re-setup that failed on the new values has let go of the levels: should the full setup tried next fail
// too, solve() says why.
void Solver::note_failed_resetup(const std::string& why) {
  if (!impl_->has_hierarchy()) impl_->summary.rebuild_note = why;
}

// A full setup in place of a re-setup. The old levels go first, so that the new ones take their memory
// rather than pages beside them (what would refuse the matrix before any work, rebuild has checked while they
// still stood); should the setup fail, a solver whose rebuild threw never solves with the matrix it had
// before (solve() says why instead).
void Solver::full_setup_in_place(const std::function<std::unique_ptr<Impl>()>& make, const std::string& why) {
  if (impl_->has_hierarchy()) impl_->drop_hierarchy();
  std::unique_ptr<Impl> fresh;
  try {
    fresh = make();
  } catch (...) {  // an Error, out of memory, or a callback's own exception alike
    impl_->summary.rebuild_note = current_exception_text();  // the one raised, not the failed re-setup's
    throw;
  }
  replace_impl(std::move(fresh), why);
}

// After a full setup in place of a re-setup: the new solver keeps the parameters and callbacks it was given.
void Solver::replace_impl(std::unique_ptr<Impl> fresh, const std::string& why) {
  fresh->params = impl_->params;
  fresh->callbacks = impl_->callbacks;
  impl_ = std::move(fresh);
  impl_->summary.reused = false;
  impl_->summary.rebuild_note = "a full setup: " + why;
}

Solver::~Solver() = default;
Solver::Solver(Solver&&) noexcept = default;
Solver& Solver::operator=(Solver&&) noexcept = default;

// The state a moved-from Solver no longer has: its use is an error, never a null dereference.
Solver::Impl& Solver::live() const {
  if (!impl_) throw InputError("this Solver was moved from: use the one it was moved to");
  return *impl_;
}

void Solver::require_hierarchy() const {
  if (!live().has_hierarchy())
    throw InputError("the solver has no hierarchy: its last rebuild failed (" + impl_->summary.rebuild_note +
                     "); rebuild it from a valid matrix");
}

SolveResult Solver::solve(const Vector<double>& b, Vector<double>& x, const IterationCallback& on_iteration,
                          const SolveOptions& options) const {
  const Turns::Turn turn(live().turns);
  require_hierarchy();
  return impl_->solve(b, x, on_iteration, options, VectorLayout::whole);
}

SolveResult Solver::solve_rows(const Vector<double>& b, Vector<double>& x, const IterationCallback& on_iteration,
                               const SolveOptions& options) const {
  const Turns::Turn turn(live().turns);
  require_hierarchy();
  return impl_->solve(b, x, on_iteration, options, VectorLayout::rows);
}

void Solver::precondition(const Vector<double>& r, Vector<double>& z) const {
  const Turns::Turn turn(live().turns);
  require_hierarchy();
  impl_->precondition(r, z, VectorLayout::whole);
}

void Solver::precondition_rows(const Vector<double>& r, Vector<double>& z) const {
  const Turns::Turn turn(live().turns);
  require_hierarchy();
  impl_->precondition(r, z, VectorLayout::rows);
}

const SetupSummary& Solver::setup() const { return live().summary; }

const Array<Index>& Solver::finest_aggregates() const { return live().finest_aggregates; }

}  // namespace amgsolve
