#pragma once
// The SpGEMM interface: C = A * B for CSR matrices, implemented by interchangeable backends that are
// registered by name (see registry.hpp) and chosen at run time (amg.spgemm in the config).
//
// Contract for every backend:
//   * A.cols == B.rows (checked by multiply()); any shapes, empty rows/columns, 0x0 matrices;
//   * the result has sorted, unique column indices in every row, explicit products that cancel to
//     zero are kept (the pattern is the symbolic product), values accumulated in the Value type;
//   * a symbolic phase (pattern / row sizes) and a numeric phase (values), timed separately in
//     SpgemmStats together with 64-bit flop and nnz counts and the peak temporary memory.
#include <cstdint>
#include <string>
#include <vector>

#include "common/device.hpp"
#include "sparse/csr.hpp"

namespace amgsolve {

// One phase of a distributed product (broadcasts, local multiply, merges, all-to-alls): the slowest rank's
// seconds and the bytes all ranks sent.
struct SpgemmPhase {
  std::string name;
  double seconds = 0.0;
  std::uint64_t bytes = 0;
};

struct SpgemmStats {
  double symbolic_seconds = 0.0;
  double numeric_seconds = 0.0;
  Offset multiplications = 0;   // nontrivial products a_ik * b_kj
  Offset nnz = 0;               // nonzeros of C
  std::uint64_t extra_bytes = 0;  // peak temporary memory beyond A, B and C
  std::string choice;             // backends that delegate (auto): what they picked and why
  const char* path = "";          // which of its passes a backend with several took (gustavson: see there)
  std::vector<SpgemmPhase> phases;  // distributed backends: per phase (their numeric_seconds is the total)

  double seconds() const { return symbolic_seconds + numeric_seconds; }
  // Two flops (multiply + add) per nontrivial product, the convention of the SpGEMM literature.
  double flops() const { return 2.0 * static_cast<double>(multiplications); }
  double gflops() const { return seconds() > 0 ? flops() / seconds() * 1e-9 : 0.0; }
  // Multiplications per output nonzero: how much the accumulator merges.
  double compression_factor() const {
    return nnz > 0 ? static_cast<double>(multiplications) / static_cast<double>(nnz) : 0.0;
  }
};

class SpgemmBackend {
 public:
  virtual ~SpgemmBackend() = default;

  virtual std::string name() const = 0;         // registry key, e.g. "gustavson"
  virtual std::string description() const = 0;  // one line for --list-backends
  virtual BackendKind runs_on() const = 0;  // the backend (`backend` key) whose setup can use it
  // A library's product run for comparison (eigen, graphblas, cusparse), not an implementation of ours:
  // tables mark it as such.
  virtual bool external_baseline() const { return false; }
  // A distributed algorithm: every MPI rank must call multiply() together, with the same A and B.
  virtual bool collective() const { return false; }
  // Whether each c_ij is the sum of the a_ik b_kj in the order of k along A's row i, as Gustavson's row-wise
  // product forms it: then the numeric phase alone (spgemm/numeric_product.hpp) gives the same bits, which
  // is how a re-setup forms its products (amg/resetup.hpp). Merges (heap, rmerge-cpu), grids (summa2d,
  // split3d), the GPU's kernels and the libraries' products sum in other orders.
  virtual bool sums_in_row_order() const { return false; }
  // Empty when the backend can run in this process; otherwise the reason (no GPU, no MPI, ...).
  virtual std::string unavailable_reason() const { return {}; }
  bool available() const { return unavailable_reason().empty(); }

  // C = A * B. Checks shapes and availability, then calls the backend's implementation.
  CsrMatrix<double> multiply(const CsrMatrix<double>& A, const CsrMatrix<double>& B,
                             SpgemmStats* stats = nullptr) const;
  CsrMatrix<float> multiply(const CsrMatrix<float>& A, const CsrMatrix<float>& B,
                            SpgemmStats* stats = nullptr) const;

 protected:
  virtual CsrMatrix<double> compute(const CsrMatrix<double>& A, const CsrMatrix<double>& B,
                                    SpgemmStats& stats) const = 0;
  virtual CsrMatrix<float> compute(const CsrMatrix<float>& A, const CsrMatrix<float>& B,
                                   SpgemmStats& stats) const = 0;
};

// Backends written once as a template implement `template <class V> CsrMatrix<V> product(A, B, stats)`
// and derive from SpgemmBackendFor<Self>; this forwards both value types to it.
template <class Derived>
class SpgemmBackendFor : public SpgemmBackend {
 protected:
  CsrMatrix<double> compute(const CsrMatrix<double>& A, const CsrMatrix<double>& B,
                            SpgemmStats& stats) const override {
    return static_cast<const Derived&>(*this).template product<double>(A, B, stats);
  }
  CsrMatrix<float> compute(const CsrMatrix<float>& A, const CsrMatrix<float>& B,
                           SpgemmStats& stats) const override {
    return static_cast<const Derived&>(*this).template product<float>(A, B, stats);
  }
};

// Nontrivial multiplications of row i of A * B: the lengths of the rows of B that row i of A selects.
template <class Value>
Offset row_multiplications(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, Index i) {
  Offset m = 0;
  for (Offset ka = A.row_begin(i); ka < A.row_end(i); ++ka) m += B.row_length(A.col[ka]);
  return m;
}

// Number of nontrivial multiplications of A * B (sum over a_ik != 0 of nnz(B row k)).
template <class Value>
Offset spgemm_multiplications(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B);

}  // namespace amgsolve
