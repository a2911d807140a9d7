#pragma once
// Smoothed prolongator (Vanek, Mandel & Brezina, Computing 56, 1996, eq. 3.4):
//     P = (I - omega D_f^-1 A_f) T,   omega = damping / rho(D_f^-1 A_f),  damping = 4/3,
// one damped-Jacobi step applied to the columns of the tentative prolongator T, using the filtered
// matrix A_f (weak connections lumped into the diagonal) so that P does not grow along weak links.
// T has at most one entry per row (one column per aggregate), so A_f T only gathers: row i of A_f T adds
// a_ik t_k into the column of k's aggregate. On the cpu and mpi backends smoothed_prolongator() does that
// and the Jacobi step in one pass over A_f (the way AMGCL's smoothed aggregation fills P; over ranks T's
// entries of the ghost columns come through A_f's halo); the cuda backend, and a system's T (several entries
// a row), form the SpGEMM A_f T through the selected backend, then scale_and_add_tentative: P = T - omega
// D_f^-1 (A_f T).
// Both sum each entry in A_f's row order and scale it alike, so they give the same bits. T's single entry
// in row i lies in the pattern of (A_f T)(i, :) because a_ii != 0, so the sum needs no new entries.
#include "spgemm/spgemm.hpp"

namespace amgsolve {

class CpuBackend;
class MpiBackend;
template <class V>
class DistributedMatrix;

// P <- T - omega D_f^-1 P, where P holds A_f T (the setup's step on the cpu backend; the cuda backend's is
// in amg/cuda/device_setup.hpp).
template <class Value>
void scale_and_add_tentative(const CpuBackend&, CsrMatrix<Value>& P, const CsrMatrix<Value>& A_filtered,
                             const CsrMatrix<Value>& T, double omega);

// P = T - omega D_f^-1 (A_f T) in one pass over A_f (a count of each row's aggregates, then the fill), for T
// with at most one entry per row (Error otherwise). `stats`, if given, receives the product's statistics as a
// SpGEMM's (multiplications: the entries a_ik whose row k of T has its entry).
template <class Value>
CsrMatrix<Value> smoothed_prolongator(const CpuBackend&, const CsrMatrix<Value>& A_filtered,
                                      const CsrMatrix<Value>& T, double omega, SpgemmStats* stats = nullptr);

// The same over MPI ranks (defined in amg/mpi/distributed_setup.cpp, built with MPI): declared here, so that
// the setup (amg/smoothed_aggregation.hpp) finds it whatever the order of its includes.
template <class Value>
DistributedMatrix<Value> smoothed_prolongator(const MpiBackend& backend, const DistributedMatrix<Value>& A_f,
                                              const DistributedMatrix<Value>& T, double omega, SpgemmStats* stats);

// The whole prolongator on the host by the SpGEMM (tests, benchmarks).
template <class Value>
CsrMatrix<Value> smoothed_prolongation(const CsrMatrix<Value>& A_filtered, const CsrMatrix<Value>& T, double omega,
                                       const SpgemmBackend& spgemm, SpgemmStats* stats = nullptr);

}  // namespace amgsolve
