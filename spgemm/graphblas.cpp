// External baseline: SuiteSparse:GraphBLAS GrB_mxm over the (+, *) semiring, clearly labelled as a
// baseline (T. A. Davis, "Algorithm 1000: SuiteSparse:GraphBLAS", ACM TOMS 45(4), 2019; Debian's
// libgraphblas-dev). GraphBLAS picks its own kernel per product (Gustavson, hash, dot or saxpy3) and
// runs it with OpenMP on as many threads as amgsolve uses.
//
// Only the product is timed (GrB_mxm plus GrB_wait, which finishes any pending sort): the operands are
// copied into GraphBLAS's own format before (its indices are 64-bit) and the result copied back after,
// and these copies are reported as extra memory, not as time. GraphBLAS keeps explicit zeros of the
// structural product, as the SpGEMM contract asks. Matrices are limited to what 64-bit GrB_Index holds.
// GraphBLAS.h (7.x) has no extern "C" block of its own.
extern "C" {
#include <GraphBLAS.h>
}
#include <omp.h>

#include <algorithm>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/timer.hpp"
#include "spgemm/registry.hpp"

namespace amgsolve {
namespace {

void check(GrB_Info info, const char* call) {
  if (info != GrB_SUCCESS && info != GrB_NO_VALUE)
    throw Error(std::string("SpGEMM backend 'graphblas': ") + call + " failed with GrB_Info " +
                std::to_string(static_cast<int>(info)));
}

// The library is initialised once per process (GrB_init may be called only once).
void initialise_graphblas() {
  static const bool initialised = [] {
    check(GrB_init(GrB_NONBLOCKING), "GrB_init");
    return true;
  }();
  (void)initialised;
}

template <class Value>
struct GraphblasTypes;
template <>
struct GraphblasTypes<double> {
  static GrB_Type type() { return GrB_FP64; }
  static GrB_Semiring semiring() { return GrB_PLUS_TIMES_SEMIRING_FP64; }
  static GrB_Info import_csr(GrB_Matrix* M, GrB_Index rows, GrB_Index cols, const GrB_Index* p, const GrB_Index* j,
                             const double* x, GrB_Index np, GrB_Index nj, GrB_Index nx) {
    return GrB_Matrix_import_FP64(M, GrB_FP64, rows, cols, p, j, x, np, nj, nx, GrB_CSR_FORMAT);
  }
  static GrB_Info export_csr(GrB_Index* p, GrB_Index* j, double* x, GrB_Index* np, GrB_Index* nj, GrB_Index* nx,
                             GrB_Matrix M) {
    return GrB_Matrix_export_FP64(p, j, x, np, nj, nx, GrB_CSR_FORMAT, M);
  }
};
template <>
struct GraphblasTypes<float> {
  static GrB_Type type() { return GrB_FP32; }
  static GrB_Semiring semiring() { return GrB_PLUS_TIMES_SEMIRING_FP32; }
  static GrB_Info import_csr(GrB_Matrix* M, GrB_Index rows, GrB_Index cols, const GrB_Index* p, const GrB_Index* j,
                             const float* x, GrB_Index np, GrB_Index nj, GrB_Index nx) {
    return GrB_Matrix_import_FP32(M, GrB_FP32, rows, cols, p, j, x, np, nj, nx, GrB_CSR_FORMAT);
  }
  static GrB_Info export_csr(GrB_Index* p, GrB_Index* j, float* x, GrB_Index* np, GrB_Index* nj, GrB_Index* nx,
                             GrB_Matrix M) {
    return GrB_Matrix_export_FP32(p, j, x, np, nj, nx, GrB_CSR_FORMAT, M);
  }
};

// Owns a GrB_Matrix handle.
class Matrix {
 public:
  Matrix() = default;
  Matrix(const Matrix&) = delete;
  Matrix& operator=(const Matrix&) = delete;
  ~Matrix() {
    if (handle_) GrB_Matrix_free(&handle_);
  }
  GrB_Matrix* out() { return &handle_; }
  GrB_Matrix get() const { return handle_; }

 private:
  GrB_Matrix handle_ = nullptr;
};

template <class Value>
void import_matrix(const CsrMatrix<Value>& M, Matrix& out) {
  // GraphBLAS's indices are 64-bit, so the index arrays are converted; the values are passed as they are.
  // It rejects null pointers even for empty arrays: an empty matrix points at one unused element.
  std::vector<GrB_Index> p(M.row_ptr.begin(), M.row_ptr.end()), j(M.col.begin(), M.col.end());
  const GrB_Index nnz = j.size();
  j.resize(std::max<std::size_t>(j.size(), 1));
  static const Value kUnused{};
  const Value* x = M.val.empty() ? &kUnused : M.val.data();
  check(GraphblasTypes<Value>::import_csr(out.out(), static_cast<GrB_Index>(M.rows), static_cast<GrB_Index>(M.cols),
                                          p.data(), j.data(), x, p.size(), nnz, nnz),
        "GrB_Matrix_import");
}

template <class Value>
CsrMatrix<Value> export_matrix(const Matrix& C, Index rows, Index cols) {
  GrB_Index np = 0, nj = 0, nx = 0;
  check(GrB_Matrix_exportSize(&np, &nj, &nx, GrB_CSR_FORMAT, C.get()), "GrB_Matrix_exportSize");
  std::vector<GrB_Index> p(std::max<GrB_Index>(np, 1)), j(std::max<GrB_Index>(nj, 1));
  std::vector<Value> x(std::max<GrB_Index>(nx, 1));
  check(GraphblasTypes<Value>::export_csr(p.data(), j.data(), x.data(), &np, &nj, &nx, C.get()), "GrB_Matrix_export");
  CsrMatrix<Value> result(rows, cols);
  for (Index i = 0; i <= rows; ++i) result.row_ptr[i] = static_cast<Offset>(p[i]);
  const Offset nnz = result.row_ptr[rows];
  result.col.resize(static_cast<std::size_t>(nnz));
  result.val.resize(static_cast<std::size_t>(nnz));
#pragma omp parallel for schedule(static)
  for (Offset k = 0; k < nnz; ++k) {
    result.col[k] = static_cast<Index>(j[k]);
    result.val[k] = x[k];
  }
  return result;
}

class Graphblas : public SpgemmBackendFor<Graphblas> {
 public:
  std::string name() const override { return "graphblas"; }
  std::string description() const override {
    return "baseline: SuiteSparse:GraphBLAS GrB_mxm, plus-times semiring (external library)";
  }
  BackendKind runs_on() const override { return BackendKind::cpu; }
  bool external_baseline() const override { return true; }

  template <class Value>
  CsrMatrix<Value> product(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, SpgemmStats& stats) const {
    initialise_graphblas();
    check(GxB_Global_Option_set_INT32(GxB_GLOBAL_NTHREADS, omp_get_max_threads()),
          "GxB_Global_Option_set(GxB_NTHREADS)");
    Matrix a, b, c;
    import_matrix(A, a);
    import_matrix(B, b);
    check(GrB_Matrix_new(c.out(), GraphblasTypes<Value>::type(), static_cast<GrB_Index>(A.rows),
                         static_cast<GrB_Index>(B.cols)),
          "GrB_Matrix_new");
    Timer timer;
    check(GrB_mxm(c.get(), nullptr, nullptr, GraphblasTypes<Value>::semiring(), a.get(), b.get(), nullptr), "GrB_mxm");
    check(GrB_Matrix_wait(c.get(), GrB_MATERIALIZE), "GrB_Matrix_wait");
    stats.numeric_seconds = timer.seconds();
    CsrMatrix<Value> C = export_matrix<Value>(c, A.rows, B.cols);
    stats.multiplications = spgemm_multiplications(A, B);
    stats.nnz = C.nnz();
    // GraphBLAS's copies of A, B and C (64-bit indices) on top of amgsolve's own arrays.
    const auto graphblas_bytes = [](Offset rows, Offset nnz) {
      return static_cast<std::uint64_t>(rows + 1 + nnz) * sizeof(GrB_Index) +
             static_cast<std::uint64_t>(nnz) * sizeof(Value);
    };
    stats.extra_bytes =
        graphblas_bytes(A.rows, A.nnz()) + graphblas_bytes(B.rows, B.nnz()) + graphblas_bytes(C.rows, C.nnz());
    return C;
  }
};

}  // namespace
}  // namespace amgsolve

AMGSOLVE_REGISTER_SPGEMM(graphblas, Graphblas)
