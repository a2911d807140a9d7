// amgsolve._amgsolve: the Python extension under the amgsolve package (python/amgsolve/__init__.py). It
// takes CSR arrays as scipy.sparse holds them (int32 or int64 indices, float32 or float64 values) and copies
// them once into the library's CsrMatrix, then calls amgsolve::Solver (amgsolve/solver.hpp) with the GIL
// released. The parameters arrive as "key.path=value" assignments, checked by the config schema
// (parse_solver_settings), so that their names and messages are those of the YAML keys.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "amg/rigid_body_modes.hpp"
#include "problems/elasticity.hpp"
#include "amgsolve/solver.hpp"
#include "common/environment.hpp"
#include "common/error.hpp"
#include "common/memory.hpp"
#include "common/parallel.hpp"
#include "common/timer.hpp"
#include "config/config.hpp"
#include "config/solver_parameters.hpp"
#include "config/schema.hpp"
#include "sparse/csr_ops.hpp"
#include "spgemm/registry.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace amgsolve {
namespace {

// Inputs are only read: read-only arrays (a memory map, an array this module returned) are accepted as they are.
using AnyArray = nb::ndarray<nb::ro, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using DoubleArray = nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

template <class T>
bool holds(const AnyArray& a) {
  return a.dtype() == nb::dtype<T>();
}

// Calls f with a's entries as a typed pointer: signed integers of 32 or 64 bits.
template <class F>
void with_indices(const AnyArray& a, const std::string& what, F&& f) {
  if (holds<std::int32_t>(a))
    f(static_cast<const std::int32_t*>(a.data()));
  else if (holds<std::int64_t>(a))
    f(static_cast<const std::int64_t*>(a.data()));
  else
    throw InputError(what + " must hold int32 or int64 indices");
}

template <class F>
void with_values(const AnyArray& a, const std::string& what, F&& f) {
  if (holds<double>(a))
    f(static_cast<const double*>(a.data()));
  else if (holds<float>(a))
    f(static_cast<const float*>(a.data()));
  else
    throw InputError(what + " must hold float64 or float32 values");
}

Index checked_dimension(std::int64_t n, const std::string& what) {
  if (n < 0 || n > std::numeric_limits<Index>::max())
    throw InputError(what + " " + std::to_string(n) + " does not fit the 32-bit indices of amgsolve (at most " +
                     std::to_string(std::numeric_limits<Index>::max()) + ")");
  return static_cast<Index>(n);
}

// to[k] = from[k] converted, for k in [0, n), written by all threads (a large copy's fresh pages faulted in on
// every core, not all on one); returns the first k at which bad(from[k]) holds, or n: the same k on any thread
// count, so the error names the first bad entry.
template <class From, class To, class Bad>
std::int64_t copy_until_first_bad(const From* from, To* to, std::int64_t n, Bad&& bad) {
  std::int64_t first = n;
#pragma omp parallel for schedule(static) reduction(min : first) if (worth_a_team(static_cast<std::uint64_t>(n)))
  for (std::int64_t k = 0; k < n; ++k) {
    if (bad(from[k]))
      first = std::min(first, k);
    else
      to[k] = static_cast<To>(from[k]);
  }
  return first;
}

// The one copy of a CSR matrix from scipy's arrays, checked as it is made: offsets from 0, non-decreasing,
// ending at nnz; columns in range and increasing within each row; values finite.
template <class V>
CsrMatrix<V> csr_from_arrays(const std::string& name, std::int64_t rows, std::int64_t cols, const AnyArray& indptr,
                             const AnyArray& indices, const AnyArray& data) {
  CsrMatrix<V> M(checked_dimension(rows, name + ": rows"), checked_dimension(cols, name + ": columns"));
  if (indptr.shape(0) != static_cast<std::size_t>(rows) + 1)
    throw InputError(name + ": indptr has " + std::to_string(indptr.shape(0)) + " entries, expected rows + 1 = " +
                     std::to_string(rows + 1));
  const std::size_t nnz = indices.shape(0);
  if (data.shape(0) != nnz)
    throw InputError(name + ": indices has " + std::to_string(nnz) + " entries but data " +
                     std::to_string(data.shape(0)));
  const auto nothing_is_bad = [](auto) { return false; };
  with_indices(indptr, name + ": indptr",
               [&](const auto* p) { copy_until_first_bad(p, M.row_ptr.data(), rows + 1, nothing_is_bad); });
  if (M.row_ptr[0] != 0 || M.row_ptr[M.rows] != static_cast<Offset>(nnz))
    throw InputError(name + ": indptr must start at 0 and end at nnz = " + std::to_string(nnz));
  const auto decreasing = first_index_where(rows, [&](std::int64_t i) { return M.row_ptr[i + 1] < M.row_ptr[i]; });
  if (decreasing < rows) throw InputError(name + ": indptr decreases at row " + std::to_string(decreasing));
  const auto n = static_cast<std::int64_t>(nnz);
  M.col.resize(nnz);
  M.val.resize(nnz);
  with_indices(indices, name + ": indices", [&](const auto* p) {
    if (const auto k = copy_until_first_bad(p, M.col.data(), n, [&](auto c) { return c < 0 || c >= cols; }); k < n)
      throw InputError(name + ": column index " + std::to_string(p[k]) + " is outside 0.." + std::to_string(cols - 1));
  });
  with_values(data, name + ": data", [&](const auto* p) {
    if (const auto k = copy_until_first_bad(p, M.val.data(), n, [](auto v) { return !std::isfinite(v); }); k < n) {
      const auto row = std::upper_bound(M.row_ptr.begin(), M.row_ptr.end(), static_cast<Offset>(k)) - M.row_ptr.begin() - 1;
      throw InputError(name + ": entry (" + std::to_string(row) + ", " + std::to_string(M.col[k]) + ") is not finite (indices counted from 0)");
    }
  });
  if (!is_valid_csr(M))
    throw InputError(name + ": column indices must be sorted and unique within each row, though the matrix says its "
                     "format is canonical (scipy: A.has_sorted_indices = False; A.sum_duplicates())");
  return M;
}

// A writable numpy array that owns a moved-in std::vector-like container.
template <class Container>
nb::ndarray<nb::numpy, typename Container::value_type, nb::ndim<1>> to_numpy(Container&& values) {
  auto* owned = new Container(std::move(values));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<Container*>(p); });
  return {owned->data(), {owned->size()}, owner};
}

nb::dict level_dict(const LevelInfo& l) {
  nb::dict d;
  d["level"] = l.level;
  d["rows"] = l.rows;
  d["nnz"] = l.nnz;
  d["aggregates"] = l.aggregates;
  d["spectral_radius"] = l.rho;
  d["seconds"] = l.seconds;
  d["spgemm_seconds"] = l.spgemm_seconds;
  d["smoother"] = l.smoother;
  d["coarsest"] = l.coarsest;
  if (l.strength_drift >= 0) d["strength_drift"] = l.strength_drift;  // a re-setup's, on its kept strength
  nb::dict phases;
  for (const auto& [phase, seconds] : l.phases.named()) phases[phase] = seconds;
  d["phases"] = phases;
  return d;
}

nb::dict solve_dict(const SolveResult& r) {
  nb::dict d;
  d["converged"] = r.converged;
  d["iterations"] = r.iterations;
  d["relative_residual"] = r.relative_residual;
  d["tolerance"] = r.tolerance;
  d["residuals"] = r.history;
  d["seconds"] = r.seconds;
  d["stagnated"] = r.stagnated;
  d["convergence_factor"] = r.convergence_factor();
  return d;
}

nb::list level_list(const std::vector<LevelInfo>& levels) {
  nb::list list;
  for (const LevelInfo& l : levels) list.append(level_dict(l));
  return list;
}

// Ctrl-C during a long setup or solve: Python's handler only sets a flag, which the C++ code, running
// without the GIL, never reads. This reads it, at most every 0.1 s (taking the GIL costs other Python threads
// their turn), and raises what the handler raised (KeyboardInterrupt) from the setup's levels or the
// solve's iterations.
// Thrown through the C++ code with Python's error (KeyboardInterrupt) left set in this thread, and raised
// as that error once the GIL is back (the Interrupted translator in the module definition): what a rebuild
// note says is "interrupted", not Python's traceback.
struct Interrupted : std::runtime_error {
  Interrupted() : std::runtime_error("interrupted (Ctrl-C)") {}
};

class InterruptCheck {
 public:
  void operator()() const {
    if (since_.seconds() < 0.1) return;
    since_.restart();
    nb::gil_scoped_acquire with_python;
    if (PyErr_CheckSignals() != 0) throw Interrupted();
  }

 private:
  mutable Timer since_;
};

SetupCallbacks interruptible_setup() {
  SetupCallbacks callbacks;
  callbacks.on_level = [check = InterruptCheck{}](const LevelInfo&) { check(); };
  return callbacks;
}

// The checks the program makes on a Matrix Market file (symmetric, positive diagonal; in range for the
// float cycle of solver.precision: mixed), their messages in scipy's numbering, from 0.
void require_usable(const CsrMatrix<double>& A, bool mixed) {
  require_spd_candidate("A", A, 0);
  if (mixed)
    if (const std::string problem = mixed_precision_problem(A, 0); !problem.empty()) throw InputError("A: " + problem);
}

// Whether the settings ("key=value") set `key`.
bool given(const std::vector<std::string>& settings, const std::string& key) {
  return std::any_of(settings.begin(), settings.end(), [&](const std::string& s) { return s.rfind(key + "=", 0) == 0; });
}

// The hierarchy and the solver of one matrix.
class PySolver {
 public:
  // near_nullspace: `vectors` vectors of A's rows, row by row (the package checked its shape), or none.
  PySolver(std::int64_t rows, std::int64_t cols, const AnyArray& indptr, const AnyArray& indices, const AnyArray& data,
           const std::vector<std::string>& settings, std::optional<DoubleArray> near_nullspace, int vectors) {
    require_supported_thread_count();
    Parameters params = solver_parameters(parse_solver_settings(settings, "parameter"));
    if (near_nullspace) {
      params.amg.near_nullspace = {vectors, std::make_shared<const Vector<double>>(
                                                near_nullspace->data(), near_nullspace->data() + near_nullspace->shape(0))};
      near_nullspace_ = params.amg.near_nullspace;
      if (params.backend == BackendChoice::automatic) {  // auto: where a system can be set up (the config reader,
        params.backend = BackendChoice::cpu;             // which did not see the vectors, may have chosen cuda and
        if (!given(settings, "amg.spgemm")) params.amg.spgemm.clear();  // its default SpGEMM backend)
      }
    }
    auto A = std::make_shared<const CsrMatrix<double>>(
        csr_from_arrays<double>("A", rows, cols, indptr, indices, data));
    rows_ = A->rows;
    symmetric_cycle_ = params.amg.pre_smooth == params.amg.post_smooth;
    solver_type_ = params.solver.type;
    precision_ = params.solver.precision;
    matrix_ = A;
    nb::gil_scoped_release unlocked;
    require_usable(*A, precision_ == Precision::mixed);
    solver_ = std::make_unique<Solver>(std::move(A), params, interruptible_setup());
  }

  nb::tuple solve(const DoubleArray& b, std::optional<double> tolerance, std::optional<int> max_iterations,
                  std::optional<DoubleArray> x0, std::optional<double> absolute_tolerance) const {
    const Vector<double> rhs(b.data(), b.data() + b.shape(0));
    Vector<double> x;
    SolveOptions options{tolerance, max_iterations, x0.has_value(), absolute_tolerance};
    if (x0) x.assign(x0->data(), x0->data() + x0->shape(0));
    SolveResult result;
    std::vector<LevelInfo> levels;  // the hierarchy this solve used (another thread may rebuild it after)
    {
      nb::gil_scoped_release unlocked;
      const std::lock_guard<std::mutex> one_at_a_time(busy_);
      const InterruptCheck check;
      result = solver_->solve(rhs, x, [&check](int, double) { check(); }, options);
      levels = solver_->setup().levels;
    }
    nb::dict info = solve_dict(result);
    info["type"] = name_of(solver_type_);  // as the program's report names its solve (Solver.report)
    info["precision"] = name_of(precision_);
    info["levels"] = level_list(levels);
    return nb::make_tuple(to_numpy(std::move(x)), info);
  }

  nb::ndarray<nb::numpy, double, nb::ndim<1>> precondition(const DoubleArray& r) const {
    const Vector<double> in(r.data(), r.data() + r.shape(0));
    Vector<double> z;
    {
      nb::gil_scoped_release unlocked;
      const std::lock_guard<std::mutex> one_at_a_time(busy_);
      solver_->precondition(in, z);
    }
    return to_numpy(std::move(z));
  }

  void rebuild(std::int64_t rows, std::int64_t cols, const AnyArray& indptr, const AnyArray& indices,
               const AnyArray& data) {
    auto A = std::make_shared<const CsrMatrix<double>>(
        csr_from_arrays<double>("A", rows, cols, indptr, indices, data));
    nb::gil_scoped_release unlocked;
    const std::lock_guard<std::mutex> one_at_a_time(busy_);
    require_usable(*A, precision_ == Precision::mixed);
    const std::weak_ptr<const CsrMatrix<double>> given = A;  // not held here: a scaled A is let go of as before
    solver_->rebuild(std::move(A));
    matrix_ = given;
    if (!solver_->setup().levels.empty()) rows_ = solver_->setup().levels.front().rows;
  }

  // What the hierarchy was built from, for pickle (the package's Solver.__reduce__): the matrix of the last
  // successful setup as rows, cols, indptr, indices, data, then the near-nullspace vectors row by row (or
  // None) and their count. Another Solver of these and the same settings is the same hierarchy, bit for bit.
  nb::tuple state() const {
    CsrMatrix<double> A;  // a copy, taken in turn, so that a rebuild waiting for the lock finds the old A let go of
    {
      nb::gil_scoped_release unlocked;
      const std::lock_guard<std::mutex> one_at_a_time(busy_);
      if (solver_->setup().levels.empty())
        throw InputError("this Solver has no hierarchy (its last rebuild failed): rebuild it before pickling it");
      const std::shared_ptr<const CsrMatrix<double>> held = matrix_.lock();
      if (!held)
        throw InputError("this Solver holds its matrix only in another form than it was given (scaled by a power "
                         "of two, A's diagonal lying beyond 2^+-64): it does not pickle; build a Solver in each "
                         "process");
      A = *held;
    }
    nb::object near = nb::none();
    if (near_nullspace_.values) near = nb::cast(to_numpy(Vector<double>(*near_nullspace_.values)));
    return nb::make_tuple(A.rows, A.cols, to_numpy(std::move(A.row_ptr)), to_numpy(std::move(A.col)),
                          to_numpy(std::move(A.val)), near, near_nullspace_.count);
  }

  nb::dict setup() const {
    SetupSummary s;  // a copy, taken in turn: a rebuild in another thread replaces the summary and its levels
    {
      nb::gil_scoped_release unlocked;
      const std::lock_guard<std::mutex> one_at_a_time(busy_);
      s = solver_->setup();
    }
    nb::dict d;
    d["backend"] = std::string(to_string(s.backend));
    d["seconds"] = s.seconds;
    d["operator_complexity"] = s.operator_complexity;
    d["grid_complexity"] = s.grid_complexity;
    d["spgemm"] = s.spgemm_backend;
    d["nullspace"] = s.nullspace;
    d["nullspace_vectors"] = s.nullspace_vectors;
    d["block_size"] = s.block_size;
    d["near_nullspace_vectors"] = s.near_nullspace_vectors;
    d["near_nullspace_sweeps"] = s.near_nullspace_sweeps;
    d["hierarchy_bytes"] = s.hierarchy_bytes;
    d["reused"] = s.reused;
    d["rebuild_note"] = s.rebuild_note;
    d["levels"] = level_list(s.levels);
    return d;
  }

  Index rows() const { return rows_; }
  // As many smoothing steps after the coarse correction as before: the cycle is its own transpose.
  bool symmetric_cycle() const { return symmetric_cycle_; }

 private:
  std::atomic<Index> rows_ = 0;  // read without the lock (Solver.shape) while a rebuild may set it
  bool symmetric_cycle_ = true;
  SolverType solver_type_ = SolverType::pcg;
  Precision precision_ = Precision::double_precision;  // mixed: A must fit the float cycle
  std::unique_ptr<Solver> solver_;
  // The last successful setup's matrix, as the solver holds it (shared, so a pickle needs no copy of its
  // own, and a full setup in place of a rebuild lets go of the old one first, as it would without this).
  // Expired where the solver holds A scaled (amgsolve/matrix_scale.hpp) instead.
  std::weak_ptr<const CsrMatrix<double>> matrix_;
  NearNullspaceVectors near_nullspace_;              // as given (a rebuild keeps them)
  // The solver's work vectors are shared by its solves: Python threads calling one Solver take turns here
  // (with the GIL released, so other Python code runs meanwhile).
  mutable std::mutex busy_;
};

// A product that does not fit, raised as MemoryError with what was being multiplied (std::bad_alloc alone
// says nothing of it).
struct ProductOutOfMemory : std::runtime_error {
  using std::runtime_error::runtime_error;
};

template <class V>
nb::tuple multiply(const std::string& backend, std::int64_t a_rows, std::int64_t a_cols, const AnyArray& a_indptr,
                   const AnyArray& a_indices, const AnyArray& a_data, std::int64_t b_rows, std::int64_t b_cols,
                   const AnyArray& b_indptr, const AnyArray& b_indices, const AnyArray& b_data) {
  require_supported_thread_count();
  const SpgemmBackend& spgemm = SpgemmRegistry::instance().get(backend);
  if (spgemm.collective())
    throw InputError("spgemm backend " + backend + " multiplies over MPI ranks; the Python package runs on one process");
  const CsrMatrix<V> A = csr_from_arrays<V>("A", a_rows, a_cols, a_indptr, a_indices, a_data);
  const CsrMatrix<V> B = csr_from_arrays<V>("B", b_rows, b_cols, b_indptr, b_indices, b_data);
  if (A.cols != B.rows)
    throw InputError("A is " + std::to_string(A.rows) + "x" + std::to_string(A.cols) + " and B " +
                     std::to_string(B.rows) + "x" + std::to_string(B.cols) + ": A's columns must equal B's rows");
  CsrMatrix<V> C;
  SpgemmStats stats;
  const auto out_of_memory = [&](const std::string& why) {
    return ProductOutOfMemory("amgsolve.spgemm: out of memory multiplying A (" + std::to_string(A.rows) + "x" +
                              std::to_string(A.cols) + ", " + std::to_string(A.nnz()) + " entries) by B (" +
                              std::to_string(B.rows) + "x" + std::to_string(B.cols) + ", " +
                              std::to_string(B.nnz()) + " entries) with " + backend + ": " + why);
  };
  try {
    nb::gil_scoped_release unlocked;
    C = spgemm.multiply(A, B, &stats);
  } catch (const MemoryLimitError& e) {  // found before the allocation, by the backend's memory check
    throw out_of_memory(e.what());
  } catch (const std::bad_alloc&) {
    throw out_of_memory("the product or the backend's work space does not fit");
  }
  nb::dict info;
  info["backend"] = spgemm.name();
  info["choice"] = stats.choice;
  info["seconds"] = stats.seconds();
  info["multiplications"] = stats.multiplications;
  const Index rows = C.rows, cols = C.cols;
  return nb::make_tuple(to_numpy(std::move(C.row_ptr)), to_numpy(std::move(C.col)), to_numpy(std::move(C.val)),
                        nb::make_tuple(rows, cols), info);
}

std::vector<nb::dict> spgemm_backends() {
  std::vector<nb::dict> out;
  for (const SpgemmBackend* b : SpgemmRegistry::instance().all()) {
    nb::dict d;
    d["name"] = b->name();
    d["description"] = b->description();
    d["runs_on"] = std::string(to_string(b->runs_on()));
    d["available"] = b->available();
    d["unavailable_reason"] = b->unavailable_reason();
    d["external_baseline"] = b->external_baseline();
    out.push_back(std::move(d));
  }
  return out;
}

// A Python exception class deriving from amgsolve.Error and a built-in one, raised for the C++ type E.
template <class E>
void register_derived(nb::module_& m, const char* name, nb::handle base, PyObject* builtin) {
  const std::string qualified = std::string("amgsolve._amgsolve.") + name;
  nb::object bases = nb::steal(PyTuple_Pack(2, base.ptr(), builtin));
  PyObject* type = PyErr_NewException(qualified.c_str(), bases.ptr(), nullptr);
  if (!type) throw nb::python_error();
  m.attr(name) = nb::handle(type);
  nb::register_exception_translator(
      [](const std::exception_ptr& p, void* payload) {
        try {
          std::rethrow_exception(p);
        } catch (const E& e) {
          PyErr_SetString(static_cast<PyObject*>(payload), e.what());
        }
      },
      type);
}

}  // namespace
}  // namespace amgsolve

NB_MODULE(_amgsolve, m) {
  using namespace amgsolve;
  m.doc() = "amgsolve's C++ core; use the amgsolve package (amgsolve.Solver, amgsolve.spgemm).";
  // amgsolve.Error (a RuntimeError) is the base of InputError (also a ValueError) and NumericalError (also an
  // ArithmeticError), as in C++. The most recently registered translator is tried first: Error goes first.
  nb::exception<Error> error(m, "Error", PyExc_RuntimeError);
  register_derived<InputError>(m, "InputError", error, PyExc_ValueError);
  register_derived<NumericalError>(m, "NumericalError", error, PyExc_ArithmeticError);
  // A setup or solve refused because its memory would not fit (the checks of common/memory.hpp): an
  // InputError, as in C++, and a MemoryError, as Python code catches running out of memory.
  register_derived<MemoryLimitError>(m, "MemoryLimitError", m.attr("InputError"), PyExc_MemoryError);

  nb::class_<PySolver>(m, "Solver")
      .def(nb::init<std::int64_t, std::int64_t, const AnyArray&, const AnyArray&, const AnyArray&,
                    const std::vector<std::string>&, std::optional<DoubleArray>, int>(),
           "rows"_a, "cols"_a, "indptr"_a, "indices"_a, "data"_a, "settings"_a, "near_nullspace"_a = nb::none(),
           "vectors"_a = 0)
      .def("solve", &PySolver::solve, "b"_a, "tolerance"_a = nb::none(), "max_iterations"_a = nb::none(),
           "x0"_a = nb::none(), "absolute_tolerance"_a = nb::none())
      .def("precondition", &PySolver::precondition, "r"_a)
      .def("rebuild", &PySolver::rebuild, "rows"_a, "cols"_a, "indptr"_a, "indices"_a, "data"_a)
      .def("setup", &PySolver::setup)
      .def("state", &PySolver::state)
      .def_prop_ro("rows", &PySolver::rows)
      .def_prop_ro("symmetric_cycle", &PySolver::symmetric_cycle);

  // GNU OpenMP's threads do not survive fork(): a forked child (multiprocessing's default start method on
  // Linux) that went on with them would wait for ever. The package calls this in such a child: it runs on one
  // thread.
  m.def("run_on_one_thread", [] { omp_set_num_threads(1); });
  // The program's malloc policy (common/memory.hpp), for a process that asks for it: amgsolve.keep_freed_memory.
  m.def("keep_freed_memory", [] { return keep_freed_memory(); });
  // Whether a dotted path names a section of the YAML keys ("amg", "amg.smoother"), not a key: an empty dict
  // given to a section sets nothing, given to a key it is a wrong value.
  m.def("is_config_section", &is_config_section, "path"_a);
  // The rigid-body modes at points (coordinates row by row), row by row: (modes, values).
  m.def("rigid_body_modes", [](const DoubleArray& coordinates, int dimension, int block_size) {
    NearNullspaceVectors modes = rigid_body_modes(
        Vector<double>(coordinates.data(), coordinates.data() + coordinates.shape(0)), dimension, block_size);
    return nb::make_tuple(modes.count, to_numpy(Vector<double>(*modes.values)));
  });
  // The elasticity cantilever (problems/elasticity.hpp): (rows, indptr, indices, data, load, coordinates).
  m.def("elasticity", [](std::vector<std::int64_t> cells, double young_modulus, double poisson_ratio) {
    ElasticityParams p;
    p.cells = std::move(cells);
    p.young_modulus = young_modulus;
    p.poisson_ratio = poisson_ratio;
    CsrMatrix<double> A = elasticity_matrix(p);
    const Index rows = A.rows;
    return nb::make_tuple(rows, to_numpy(std::move(A.row_ptr)), to_numpy(std::move(A.col)), to_numpy(std::move(A.val)),
                          to_numpy(elasticity_load(p)), to_numpy(elasticity_coordinates(p)));
  });
  // Interrupted arrives with Python's error set: raise that error.
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const Interrupted&) {
      // PyErr_CheckSignals left the handler's exception set in this thread: nanobind raises it as it is.
    } catch (const ProductOutOfMemory& e) {
      PyErr_SetString(PyExc_MemoryError, e.what());
    } catch (const std::bad_alloc&) {  // an allocation that failed, in the setup's threads too: the program's line
      PyErr_SetString(PyExc_MemoryError, "out of memory (try a smaller problem, fewer levels or fewer threads)");
    }
  });
  m.def("spgemm_float64", &multiply<double>);
  m.def("spgemm_float32", &multiply<float>);
  m.def("spgemm_backends", &spgemm_backends);
}
