#pragma once
// Smoothed prolongator (Vanek, Mandel & Brezina, Computing 56, 1996, eq. 3.4):
//     P = (I - omega D_f^-1 A_f) T,   omega = damping / rho(D_f^-1 A_f),  damping = 4/3,
// one damped-Jacobi step applied to the columns of the tentative prolongator T, using the filtered
// matrix A_f (weak connections lumped into the diagonal) so that P does not grow along weak links.
// The product A_f T goes through the selected SpGEMM backend.
#include "spgemm/spgemm.hpp"

namespace amgsolve {

template <class Value>
CsrMatrix<Value> smoothed_prolongation(const CsrMatrix<Value>& A_filtered, const CsrMatrix<Value>& T, double omega,
                                       const SpgemmBackend& spgemm, SpgemmStats* stats = nullptr);

}  // namespace amgsolve
