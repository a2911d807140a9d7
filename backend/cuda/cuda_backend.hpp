#pragma once
// The cuda backend: a GPU's memory and kernels behind the operations every backend provides
// (backend/backend.hpp), so that the algorithms written once (PCG, the V-cycle, the smoothers) run on the
// device unchanged. Plain C++: the algorithms are compiled by the host compiler and call these functions;
// the kernels are in backend/cuda/*.cu, each with the cpu backend's loop as its reference
// (tests/test_gpu.cpp runs both on the same input).
//
// Everything goes into the backend's one CUDA stream, in order; the host waits only where it reads a result
// (a dot product, a norm, a download). Reductions are deterministic (a fixed grid and tree, the last block
// adds the block sums in order: backend/cuda/vector_kernels.cuh), so runs repeat bit for bit; they sum in
// another order than the CPU's deterministic_sum, so results differ from the cpu backend's by rounding.
// Host<->device traffic is counted (transfers()), for the report.
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "common/device.hpp"
#include "common/exact_sum.hpp"
#include "sparse/csr.hpp"
#include "sparse/sparse_ldlt.hpp"
#include "sparse/spmv_format.hpp"

namespace amgsolve {

namespace device {
class DeviceContext;
template <class Value>
class DeviceOperator;
}  // namespace device

template <class Value>
struct DeviceCsr;  // sparse/cuda/device_csr.cuh
class SpgemmBackend;
struct SpgemmStats;
struct FormatCost;
class CudaBackend;

// A CSR matrix in device memory, what the setup builds on the cuda backend (the arrays of
// sparse/cuda/device_csr.cuh behind a plain C++ face, so that the algorithms compiled by the host compiler
// can hold one). Move-only.
template <class V>
class DeviceCsrMatrix {
 public:
  DeviceCsrMatrix();
  explicit DeviceCsrMatrix(DeviceCsr<V>&& arrays);
  ~DeviceCsrMatrix();
  DeviceCsrMatrix(DeviceCsrMatrix&&) noexcept;
  DeviceCsrMatrix& operator=(DeviceCsrMatrix&&) noexcept;

  Index rows = 0, cols = 0;
  Offset nnz() const;
  std::uint64_t bytes() const;
  DeviceCsr<V>& arrays() { return *arrays_; }
  const DeviceCsr<V>& arrays() const { return *arrays_; }

 private:
  std::unique_ptr<DeviceCsr<V>> arrays_;
};

// A vector in device memory (cudaMalloc). Move-only: a copy between devices is always explicit
// (CudaBackend::copy). resize() keeps nothing when the size changes, like a fresh allocation.
template <class V>
class DeviceVector {
 public:
  using value_type = V;
  DeviceVector() = default;
  explicit DeviceVector(std::size_t n);
  ~DeviceVector();
  DeviceVector(DeviceVector&& other) noexcept;
  DeviceVector& operator=(DeviceVector&& other) noexcept;
  DeviceVector(const DeviceVector&) = delete;
  DeviceVector& operator=(const DeviceVector&) = delete;

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  V* data() { return data_; }
  const V* data() const { return data_; }
  void resize(std::size_t n);
  void swap(DeviceVector& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
  }

 private:
  V* data_ = nullptr;
  std::size_t size_ = 0;
};

// A matrix in device memory in one SpMV format (csr through cuSPARSE, ellpack-r or pjds).
template <class V>
class DeviceMatrix {
 public:
  DeviceMatrix(const CudaBackend& backend, const DeviceCsrMatrix<V>& M, SpmvFormat format);
  ~DeviceMatrix();
  DeviceMatrix(const DeviceMatrix&) = delete;
  DeviceMatrix& operator=(const DeviceMatrix&) = delete;

  Index rows = 0, cols = 0;
  Offset nnz = 0;
  SpmvFormat format = SpmvFormat::csr;
  std::uint64_t bytes() const;
  const device::DeviceOperator<V>& op() const { return *op_; }

 private:
  std::unique_ptr<device::DeviceOperator<V>> op_;
};

class CudaBackend {
 public:
  static constexpr BackendKind kind = BackendKind::cuda;
  // A re-setup compares each level's matrix with the kept one (amg/kept_structure.hpp): recording which
  // rows the filtered matrix lumped would copy a flag per row to the host.
  static constexpr bool records_lumped_rows = false;
  template <class V>
  using Vector = DeviceVector<V>;
  template <class V>
  using Matrix = DeviceMatrix<V>;     // what the solve multiplies: one SpMV format
  template <class V>
  using Csr = DeviceCsrMatrix<V>;     // what the setup builds

  // The coarsest level's direct solve: for up to kMaxDenseCoarseRows rows the dense inverse (formed once on
  // the host from the factorisation's matrix) applied on the device, one small product per cycle; above,
  // the host's sparse LDL^T with b down and x up (a synchronisation the dense path avoids).
  template <class V>
  class CoarseSolve {
   public:
    CoarseSolve(const CudaBackend& backend, const CsrMatrix<V>& coarsest, std::shared_ptr<const SparseLdlt<V>> factor,
                const amgsolve::Vector<double>& nullspace);
    void solve(const DeviceVector<V>& b, DeviceVector<V>& x) const;
    std::uint64_t bytes() const { return sizeof(double) * inverse_.size(); }

   private:
    const CudaBackend& backend_;
    Index n_ = 0;
    DeviceVector<double> inverse_;  // n x n, symmetric; empty when the host factor is used
    std::shared_ptr<const SparseLdlt<V>> factor_;
    mutable amgsolve::Vector<V> host_b_, host_x_;
  };

  // Largest coarsest level that is inverted densely (32 MB in double, about 2 n^3 = 2e10 host flops).
  static constexpr Index kMaxDenseCoarseRows = 2048;

  // Needs a usable GPU (an InputError with gpu_status()'s reason otherwise). rank_on_node >= 0: the GPU
  // rank_on_node modulo the node's GPUs (each MPI rank of a node its own: backend/mpi/mpi_over.hpp), made
  // the current device of the calling thread, which must then be the thread that uses the backend (CUDA's
  // current device is per thread); -1: the current one.
  explicit CudaBackend(int rank_on_node = -1);
  ~CudaBackend();
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  const device::DeviceContext& context() const { return *context_; }
  TransferCounts transfers() const { return transfers_; }

  // ---- moving data
  template <class V>
  std::shared_ptr<const DeviceCsrMatrix<V>> csr(std::shared_ptr<const CsrMatrix<V>> host) const;
  // A host copy (the comparison's callback, the coarsest factorisation); counted as a transfer.
  template <class V>
  std::shared_ptr<const CsrMatrix<V>> host_view(const DeviceCsrMatrix<V>& M) const;
  // M in an SpMV format, converted on the device.
  template <class V>
  std::shared_ptr<const DeviceMatrix<V>> matrix(std::shared_ptr<const DeviceCsrMatrix<V>> M, SpmvFormat format) const;
  // A host matrix copied over and converted (tests).
  template <class V>
  std::shared_ptr<const DeviceMatrix<V>> matrix(std::shared_ptr<const CsrMatrix<V>> host, SpmvFormat format) const {
    return matrix(csr(std::move(host)), format);
  }
  template <class To, class From>
  std::shared_ptr<const DeviceCsrMatrix<To>> cast(const DeviceCsrMatrix<From>& M) const;
  template <class V>
  DeviceVector<V> upload(const amgsolve::Vector<V>& host) const;
  template <class V>
  void upload(const amgsolve::Vector<V>& host, DeviceVector<V>& into) const;  // reuses into's buffer
  template <class V>
  void download(const DeviceVector<V>& from, amgsolve::Vector<V>& host) const;
  template <class V>
  std::uint64_t bytes(const DeviceMatrix<V>& M) const {
    return M.bytes();
  }
  void count_to_device(std::uint64_t bytes) const;
  void count_to_host(std::uint64_t bytes) const;
  // Returns once every kernel launched so far has finished, on any stream (the setup's phase clock).
  void wait_for_device() const;

  // ---- vectors
  template <class V>
  void resize(DeviceVector<V>& v, Index n) const {
    v.resize(static_cast<std::size_t>(n));
  }
  template <class V>
  void zero(DeviceVector<V>& v, Index n) const;
  template <class V>
  void copy(const DeviceVector<V>& from, DeviceVector<V>& to) const;
  template <class To, class From>
  void convert(const DeviceVector<From>& from, DeviceVector<To>& to) const;
  template <class V>
  double dot(const DeviceVector<V>& a, const DeviceVector<V>& b) const;
  template <class V>
  double norm2(const DeviceVector<V>& v) const;
  // The sum of the entries, and v -= mean(v) (the constant nullspace of a singular matrix, amg/nullspace.hpp).
  template <class V>
  double sum(const DeviceVector<V>& v) const;
  template <class V>
  void remove_mean(DeviceVector<V>& v) const;
  template <class V>
  void add(const DeviceVector<V>& y, DeviceVector<V>& x) const;
  template <class V>
  void xpby(const DeviceVector<V>& z, V beta, DeviceVector<V>& p) const;
  // v -= s
  template <class V>
  void subtract(V s, DeviceVector<V>& v) const;

  // ---- what a rank contributes to the distributed layer (backend/mpi/mpi_over.hpp): the exact sum of the
  // sums of the reduction blocks (common/reduction_block.hpp), each formed from its block alone; the entries
  // a halo exchange sends; a vector followed by the ghost values that arrived.
  template <class V>
  ExactSum dot_partial(const DeviceVector<V>& a, const DeviceVector<V>& b) const;
  template <class V>
  ExactSum sum_partial(const DeviceVector<V>& v) const;
  template <class V>
  ExactSum cg_update_partial(V alpha, const DeviceVector<V>& p, const DeviceVector<V>& q, DeviceVector<V>& x,
                             DeviceVector<V>& r) const;
  // out[k] = x[indices[k]]
  template <class V>
  void gather(const DeviceVector<V>& x, const DeviceVector<Index>& indices, DeviceVector<V>& out) const;
  // extended = [own | tail]
  template <class V>
  void extend(const DeviceVector<V>& own, const amgsolve::Vector<V>& tail, DeviceVector<V>& extended) const;

  // ---- products
  template <class V>
  void spmv(const DeviceMatrix<V>& A, const DeviceVector<V>& x, DeviceVector<V>& y) const;
  template <class V>
  void spmv_add(const DeviceMatrix<V>& A, const DeviceVector<V>& x, DeviceVector<V>& y) const;
  template <class V>
  void residual(const DeviceMatrix<V>& A, const DeviceVector<V>& x, const DeviceVector<V>& b, DeviceVector<V>& r) const;
  template <class V>
  double spmv_dot(const DeviceMatrix<V>& A, const DeviceVector<V>& p, DeviceVector<V>& q) const;
  template <class V>
  double cg_update(V alpha, const DeviceVector<V>& p, const DeviceVector<V>& q, DeviceVector<V>& x, DeviceVector<V>& r) const;

  // ---- the setup's sparse operations (smoothed aggregation's own steps: amg/cuda/device_setup.hpp)
  // The counts the setup decides by (one device holds every row).
  template <class V>
  std::int64_t global_rows(const DeviceCsrMatrix<V>& A) const {
    return A.rows;
  }
  template <class V>
  std::int64_t global_nnz(const DeviceCsrMatrix<V>& A) const {
    return A.nnz();
  }
  template <class V>
  DeviceCsrMatrix<V> multiply(const SpgemmBackend& spgemm, const DeviceCsrMatrix<V>& A, const DeviceCsrMatrix<V>& B,
                              SpgemmStats* stats) const;
  template <class V>
  DeviceCsrMatrix<V> transpose(const DeviceCsrMatrix<V>& M) const;
  template <class V>
  void require_positive_diagonal(const DeviceCsrMatrix<V>& A, int level) const;
  // Whether A and B have the same rows, columns and entries' positions (a re-setup's check), compared on the
  // device: two flags come back.
  template <class V>
  bool same_pattern(const DeviceCsrMatrix<V>& A, const DeviceCsrMatrix<V>& B) const;
  template <class V>
  DeviceVector<V> smoother_diagonal(const DeviceCsrMatrix<V>& A, double numerator) const;
  // What each SpMV format would cost for M (sparse/spmv_format.hpp), from its row lengths on the device.
  template <class V>
  std::vector<FormatCost> format_costs(const DeviceCsrMatrix<V>& M) const;

  // ---- the smoothers' passes (x_next sized by A's rows: x may be longer, its ghosts after the own entries)
  template <class V>
  void jacobi_from_zero(const DeviceVector<V>& scaled_dinv, const DeviceVector<V>& b, DeviceVector<V>& x) const;
  template <class V>
  void jacobi_sweep(const DeviceMatrix<V>& A, const DeviceVector<V>& scaled_dinv, const DeviceVector<V>& b, const DeviceVector<V>& x,
                    DeviceVector<V>& x_next) const;
  template <class V>
  void chebyshev_from_zero(const DeviceVector<V>& dinv, const DeviceVector<V>& b, V inv_theta, DeviceVector<V>& d, DeviceVector<V>& x) const;
  template <class V>
  void chebyshev_step(const DeviceMatrix<V>& A, const DeviceVector<V>& dinv, const DeviceVector<V>& b, V a, V c, DeviceVector<V>& d,
                      const DeviceVector<V>& x, DeviceVector<V>& x_next) const;

  // ---- for the kernels of other folders (amg/cuda/): the reductions' result slot, and reading it (the host
  // waits for the stream and one double comes over)
  double* result_slot() const { return device_result_; }
  double read_result() const;

 private:
  void release() noexcept;
  // The exact sum of term's reduction-block sums (backend/cuda/vector_kernels.cuh's block_sums).
  template <class Term>
  ExactSum exact_block_sums(Index n, const Term& term) const;

  std::unique_ptr<device::DeviceContext> context_;
  double* device_result_ = nullptr;  // one double on the device, written by the reductions' finalize
  double* host_result_ = nullptr;    // pinned
  mutable TransferCounts transfers_;
  mutable DeviceVector<double> block_sums_;           // exact_block_sums' scratch
  mutable amgsolve::Vector<double> host_block_sums_;
};

}  // namespace amgsolve
