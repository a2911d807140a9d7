#pragma once
// The execution axis. A backend is a type that provides vectors, matrices and the operations the
// algorithms need; the algorithms (solver/pcg.hpp, solver/stationary_iteration.hpp, amg/vcycle.hpp,
// amg/jacobi.hpp, amg/chebyshev.hpp) are written once over it, as AMGCL's are over its backends and
// Ginkgo's over its executors, and never ask which device they run on. Two local backends exist, and two
// layers over MPI ranks:
//   CpuBackend      backend/cpu/cpu_backend.hpp    OpenMP loops over host CSR (the reference kernels)
//   CudaBackend     backend/cuda/cuda_backend.hpp  a GPU: device vectors, matrices in csr (cuSPARSE),
//                                                  ellpack-r or pjds, kernels in backend/cuda/*.cu
//   MpiBackend      backend/mpi/mpi_backend.hpp    ranks over the cpu backend, setup and solve, the halo
//                                                  exchange overlapped with the interior rows
//   MpiOver<Local>  backend/mpi/mpi_over.hpp       ranks over any local backend for the solve (over the
//                                                  cuda one: each rank's GPU), on MpiBackend's levels
// The choice is made once: resolve_backend and setup_choice (common/device.hpp) turn the `backend` key into a
// BackendKind, and amgsolve::Solver (make_impl and make_distributed_solver in amgsolve/solver.cpp) turns
// that into one of these types.
//
// A new backend: a class with the members the concepts below name (Backend: the solve's; SetupBackend: the
// setup's, as the cpu backend's section "the setup's sparse operations" has them), the per-method overloads
// beside each method in amg/ (strength, MIS-2, the tentative and smoothed prolongators, the spectral
// radius), its kernels each tested against the cpu backend's (tests/test_gpu.cpp shows how), an
// instantiation of Hierarchy (as amg/hierarchy.cpp's), and a case in make_impl. A local backend that MpiOver
// can wrap also has dot_partial, sum_partial and cg_update_partial (the exact sums of its reduction blocks),
// gather, extend and subtract.
#include <concepts>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "common/device.hpp"
#include "sparse/csr.hpp"
#include "sparse/sparse_ldlt.hpp"
#include "sparse/spmv_format.hpp"
#include "spgemm/spgemm.hpp"

namespace amgsolve {

template <class B, class V>
concept BackendFor = requires(const B& b, typename B::template Vector<V>& v, const typename B::template Vector<V>& cv,
                              const typename B::template Matrix<V>& A, V s, Index n, const Vector<V>& host,
                              Vector<V>& host_out, std::shared_ptr<const CsrMatrix<V>> host_matrix) {
  // Data: a matrix from host CSR in an SpMV format (shared, so levels can share it), vectors up and down.
  { b.template matrix<V>(host_matrix, SpmvFormat::csr) } -> std::same_as<std::shared_ptr<const typename B::template Matrix<V>>>;
  { b.upload(host) } -> std::same_as<typename B::template Vector<V>>;
  b.download(cv, host_out);
  { b.bytes(A) } -> std::convertible_to<std::uint64_t>;
  { b.transfers() } -> std::same_as<TransferCounts>;
  { A.rows } -> std::convertible_to<Index>;
  v.swap(v);
  // Vectors: sizing, copies, deterministic reductions, updates.
  b.resize(v, n);
  b.zero(v, n);
  b.copy(cv, v);
  { b.dot(cv, cv) } -> std::same_as<double>;
  { b.norm2(cv) } -> std::same_as<double>;
  { b.sum(cv) } -> std::same_as<double>;
  b.remove_mean(v);   // v -= mean(v): the constant nullspace of a singular matrix
  b.add(cv, v);       // v += cv
  b.xpby(cv, s, v);   // v = cv + s v
  // Products: y = A x, y += A x, r = b - A x, and conjugate gradients' fused passes.
  b.spmv(A, cv, v);
  b.spmv_add(A, cv, v);
  b.residual(A, cv, cv, v);
  { b.spmv_dot(A, cv, v) } -> std::same_as<double>;
  { b.cg_update(s, cv, cv, v, v) } -> std::same_as<double>;
  // The smoothers' passes (amg/jacobi.hpp, amg/chebyshev.hpp).
  b.jacobi_from_zero(cv, cv, v);
  b.jacobi_sweep(A, cv, cv, cv, v);
  b.chebyshev_from_zero(cv, cv, s, v, v);
  b.chebyshev_step(A, cv, cv, s, s, v, cv, v);
  // The coarsest level's direct solve, from the host's factorisation.
  typename B::template CoarseSolve<V>;
};

// What the algorithms ask of a backend type, for the precisions they use.
template <class B>
concept Backend = requires {
                    { B::kind } -> std::convertible_to<BackendKind>;
                  } && BackendFor<B, double> &&
                  BackendFor<B, float> &&
                  requires(const B& b, const typename B::template Vector<double>& d,
                           typename B::template Vector<float>& f) {
                    b.convert(d, f);  // the mixed-precision cycle's input and output
                  };

// What smoothed aggregation (amg/smoothed_aggregation.hpp) asks of every backend it sets up on, for a precision
// V, beside the Backend concept's vectors and copies: the matrices it builds (Csr<V>), their global counts, the
// SpGEMM and the transpose that form the Galerkin products, the checks and the smoothers' diagonal, and a host
// view of a matrix (for the comparison of the SpGEMM backends and the coarsest factorisation). What only some
// backends have is asked by a trait where it is used: a re-setup's numeric-only products (kNumericProducts,
// amg/kept_structure.hpp), node-block smoothers (smoother_block_diagonal), whether the ranks agree (everywhere).
template <class B, class V>
concept SetupBackendFor = requires(const B& b, const typename B::template Csr<V>& A, const SpgemmBackend& spgemm,
                                   SpgemmStats* stats, int level, double numerator) {
  { b.global_rows(A) } -> std::convertible_to<std::int64_t>;  // all ranks' over MPI
  { b.global_nnz(A) } -> std::convertible_to<std::int64_t>;
  { b.multiply(spgemm, A, A, stats) } -> std::same_as<typename B::template Csr<V>>;
  { b.transpose(A) } -> std::same_as<typename B::template Csr<V>>;
  b.require_positive_diagonal(A, level);  // a coarse operator's, which SPD input keeps positive
  { b.same_pattern(A, A) } -> std::same_as<bool>;
  { b.smoother_diagonal(A, numerator) } -> std::same_as<typename B::template Vector<V>>;
  { b.format_costs(A) } -> std::same_as<std::vector<FormatCost>>;
  { b.host_view(A) } -> std::same_as<std::shared_ptr<const CsrMatrix<V>>>;
};

// A backend the setup runs on, in both precisions; B::records_lumped_rows says how a re-setup follows the
// kept product patterns (amg/kept_structure.hpp).
template <class B>
concept SetupBackend = SetupBackendFor<B, double> && SetupBackendFor<B, float> && requires {
  { B::records_lumped_rows } -> std::convertible_to<bool>;
};

// Whether the matrices a backend's setup builds are the host's CsrMatrix on one process (the cpu backend,
// not the mpi one's distributed blocks or the device's): then a level's pattern is kept as its row_ptr and
// col alone (amg/resetup.hpp), no plan of A_f T is kept (amg/smoothed_aggregation.hpp), and the cycle's sliced
// copies replace the hierarchy's CSR as it builds them (amgsolve/solver.cpp). The numeric-only products, the
// one-pass prolongator and the sliced copies exist over the ranks too, for each rank's part, each asked for
// by its own trait. Code over a backend asks these, never which backend type it runs on.
template <class B>
inline constexpr bool kHostCsr = std::is_same_v<typename B::template Csr<double>, CsrMatrix<double>>;

// A backend over MPI ranks (backend/mpi/): it has a communicator.
template <class B>
inline constexpr bool kDistributed = requires(const B& b) { b.comm(); };

}  // namespace amgsolve
