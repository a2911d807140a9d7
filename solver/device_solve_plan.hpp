#pragma once
// What the device solve (solver/device_solve.hpp) uploads, prepared on the host: every operator of PCG and
// of the V-cycle in its level's working basis, the smoothers as plain values, and the coarse solve.
//
// Working basis. The pJDS SpMV runs in a permuted basis (Kreutzer et al., IPDPSW 2012,
// ../shared/papers/pjds-kreutzer-2011.txt, section II: "the complete iterative scheme works on the permuted
// elements"). Level l's basis is the pJDS order of A_l (rows by length, longest first), pi_l, with
// v_w[i] = v[pi_l[i]], i.e. v_w = Pi_l v; then
//     A_l' = Pi_l A_l Pi_l^T,   P_l' = Pi_l P_l Pi_{l+1}^T,   R_l' = Pi_{l+1} R_l Pi_l^T = (P_l')^T,
// and the V-cycle in these operators is the V-cycle of the hierarchy, conjugated by the Pi_l: only the
// right-hand side is permuted in and the solution out, on level 0. The coarsest level keeps its own order
// (its matrix is never multiplied), unless it is level 0 itself. For csr and ellpack-r every pi_l is the
// identity and the plan refers to the hierarchy's own matrices.
//
// Coarse solve. The coarsest matrix has at most amg.coarse_size rows (1000 by default): its inverse is
// formed densely here, once (Cholesky, in double like the CPU's CoarseSolver), and the device applies it
// as one dense matrix-vector product per cycle: no host round trip, and at n = 1000 the product reads
// 8 MB, a few microseconds of memory bandwidth. Past kMaxDenseCoarseRows the n^3 host work and the n^2
// device memory stop paying, and the plan keeps a sparse LDL^T factorisation for a host round trip instead
// (coarsening that stalls above that size is rare and already slow on the CPU).
//
// Plain C++ (no CUDA), so the plan can be checked on any machine: tests/test_gpu_solve.cpp runs the V-cycle
// it describes on the CPU and compares it with AmgHierarchy::apply().
#include <memory>
#include <vector>

#include "amg/coarse_solver.hpp"
#include "amg/smoother.hpp"
#include "solver/spmv_format.hpp"
#include "sparse/csr.hpp"

namespace amgsolve {

template <class Value>
class AmgHierarchy;

// Largest coarsest level that is inverted densely (32 MB in double, about 2 n^3 = 2e10 host flops).
inline constexpr Index kMaxDenseCoarseRows = 2048;

template <class CycleValue>
struct DeviceSolvePlan {
  // A matrix of the plan: a permuted copy, or the caller's own matrix when the basis is the original one
  // (then the plan must not outlive the matrix A and the hierarchy it was made from).
  template <class V>
  using MatrixRef = std::shared_ptr<const CsrMatrix<V>>;

  struct Level {
    MatrixRef<CycleValue> A;  // A_l' (rows_l x rows_l)
    MatrixRef<CycleValue> P;  // P_l' (rows_l x rows_{l+1})
    MatrixRef<CycleValue> R;  // R_l' (rows_{l+1} x rows_l)
    SmootherSpec smoother;
    // Per row of the working basis: omega / a_ii (Jacobi) or 1 / a_ii (Chebyshev), computed in double and
    // rounded to CycleValue exactly as amg/jacobi.cpp and amg/chebyshev.cpp do.
    Vector<CycleValue> smoother_diagonal;
  };

  SpmvFormat format = SpmvFormat::csr;
  MatrixRef<double> A;        // the fine matrix of PCG in level 0's working basis
  Array<Index> permutation;   // pi_0 (empty: identity): b_w[i] = b[permutation[i]], x[permutation[i]] = x_w[i]
  // CycleValue is double and level 0 of the hierarchy is A itself: the device keeps one copy for both.
  bool cycle_uses_fine_matrix = false;
  std::vector<Level> levels;  // every level but the coarsest, finest first
  int pre_smooth = 1, post_smooth = 1;

  Index coarse_rows = 0;
  // Column-major inverse of the coarsest matrix in its working basis, or empty when it has more than
  // kMaxDenseCoarseRows rows; then coarse_solver (same basis) is applied on the host.
  std::vector<double> coarse_inverse;
  std::shared_ptr<const CoarseSolver<CycleValue>> coarse_solver;
};

// format must be concrete (csr, ellpack-r or pjds). Throws amgsolve::Error when the hierarchy does not
// belong to A (different size) and NumericalError when the coarsest matrix is not positive definite.
template <class CycleValue>
DeviceSolvePlan<CycleValue> make_device_solve_plan(const CsrMatrix<double>& A, const AmgHierarchy<CycleValue>& hierarchy,
                                                   SpmvFormat format);

// The pJDS row order of M (pjds_from_csr's "sort" step: longest row first, ties in the original order).
template <class Value>
Array<Index> pjds_row_order(const CsrMatrix<Value>& M);

// M' with M'[i][j] = M[rows[i]][cols[j]] for the orders rows (of M's rows) and cols (of its columns); an
// empty order is the identity. Columns stay sorted within each row.
template <class Value>
CsrMatrix<Value> permuted(const CsrMatrix<Value>& M, const Array<Index>& rows, const Array<Index>& cols);

}  // namespace amgsolve
