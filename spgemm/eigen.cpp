// External baseline: Eigen's sparse * sparse product (conservative, keeps the full symbolic pattern),
// clearly labelled as a baseline. Our CSR arrays are mapped into Eigen row-major matrices without
// copying values (only the 64-bit row offsets are narrowed to Eigen's 32-bit StorageIndex, so this
// backend is limited to 2^31 - 1 nonzeros per operand and result). Eigen has no separate symbolic
// phase: all time is reported as numeric. Only the product is timed, as for `graphblas`: the narrowed
// offsets before it and the copy of Eigen's result into our CSR after it are adapter costs, not
// Eigen's.
#include <Eigen/SparseCore>
#include <limits>

#include "common/error.hpp"
#include "common/timer.hpp"
#include "spgemm/registry.hpp"

namespace amgsolve {
namespace {

class EigenProduct : public SpgemmBackendFor<EigenProduct> {
 public:
  std::string name() const override { return "eigen"; }
  std::string description() const override { return "baseline: Eigen 3 SparseMatrix product (external library)"; }
  BackendKind runs_on() const override { return BackendKind::cpu; }
  bool external_baseline() const override { return true; }

  template <class Value>
  CsrMatrix<Value> product(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, SpgemmStats& stats) const {
    using EigenCsr = Eigen::SparseMatrix<Value, Eigen::RowMajor, int>;
    const std::vector<int> a_ptr = narrow_offsets(A), b_ptr = narrow_offsets(B);
    const Eigen::Map<const EigenCsr> a(A.rows, A.cols, static_cast<int>(A.nnz()), a_ptr.data(), A.col.data(),
                                       A.val.data());
    const Eigen::Map<const EigenCsr> b(B.rows, B.cols, static_cast<int>(B.nnz()), b_ptr.data(), B.col.data(),
                                       B.val.data());
    Timer timer;
    EigenCsr c = a * b;  // Eigen reports results past its int indices as std::bad_alloc / length errors
    c.makeCompressed();
    stats.numeric_seconds = timer.seconds();
    CsrMatrix<Value> C(A.rows, B.cols);
    for (Index i = 0; i < A.rows; ++i) C.row_ptr[i + 1] = c.outerIndexPtr()[i + 1];
    C.col.assign(c.innerIndexPtr(), c.innerIndexPtr() + c.nonZeros());
    C.val.assign(c.valuePtr(), c.valuePtr() + c.nonZeros());
    stats.multiplications = spgemm_multiplications(A, B);
    stats.nnz = C.nnz();
    stats.extra_bytes = C.bytes();  // Eigen's own copy of the result
    return C;
  }

 private:
  template <class Value>
  static std::vector<int> narrow_offsets(const CsrMatrix<Value>& M) {
    if (M.nnz() > std::numeric_limits<int>::max())
      throw Error("SpGEMM backend 'eigen' is limited to 2^31 - 1 nonzeros per matrix");
    return std::vector<int>(M.row_ptr.begin(), M.row_ptr.end());
  }
};

}  // namespace
}  // namespace amgsolve

AMGSOLVE_REGISTER_SPGEMM(eigen, EigenProduct)
