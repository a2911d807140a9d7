#pragma once
// Smoothed prolongator (Vanek, Mandel & Brezina, Computing 56, 1996, eq. 3.4):
//     P = (I - omega D_f^-1 A_f) T,   omega = damping / rho(D_f^-1 A_f),  damping = 4/3,
// one damped-Jacobi step applied to the columns of the tentative prolongator T, using the filtered
// matrix A_f (weak connections lumped into the diagonal) so that P does not grow along weak links.
// Computed as the SpGEMM A_f T through the selected backend, then scale_and_add_tentative:
// P = T - omega D_f^-1 (A_f T). T's single entry in row i lies in the pattern of (A_f T)(i, :) because
// a_ii != 0, so the sum needs no new entries.
#include "spgemm/spgemm.hpp"

namespace amgsolve {

class CpuBackend;

// P <- T - omega D_f^-1 P, where P holds A_f T (the setup's step on the cpu backend; the cuda backend's is
// in amg/cuda/device_setup.hpp).
template <class Value>
void scale_and_add_tentative(const CpuBackend&, CsrMatrix<Value>& P, const CsrMatrix<Value>& A_filtered,
                             const CsrMatrix<Value>& T, double omega);

// The whole prolongator on the host (tests, benchmarks).
template <class Value>
CsrMatrix<Value> smoothed_prolongation(const CsrMatrix<Value>& A_filtered, const CsrMatrix<Value>& T, double omega,
                                       const SpgemmBackend& spgemm, SpgemmStats* stats = nullptr);

}  // namespace amgsolve
