#pragma once
// Preconditioned conjugate gradients (Hestenes & Stiefel 1952; Saad, "Iterative Methods for Sparse
// Linear Systems", 2nd ed., Algorithm 9.1) with an AMG V-cycle as the preconditioner, and the plain
// stationary AMG iteration x <- x + M^-1 (b - A x) for solver.type = amg.
//
// Breakdown is an error, not a wrong answer: p^T A p <= 0 means A is not positive definite, and
// r^T M^-1 r <= 0 that the preconditioner is not; NaN or infinity anywhere stops the solve.
// All dot products are deterministic (fixed blocks), so iteration counts do not depend on threads.
#include <type_traits>

#include "solver/solve_result.hpp"

namespace amgsolve {

// Solves A x = b starting from the given x (resized and zeroed if its size is wrong).
template <class Value>
SolveResult pcg(const CsrMatrix<Value>& A, const Vector<Value>& b, Vector<Value>& x, const std::type_identity_t<Preconditioner<Value>>& M,
                const SolverParams& params, const IterationCallback& on_iteration = {});

template <class Value>
SolveResult stationary_iteration(const CsrMatrix<Value>& A, const Vector<Value>& b, Vector<Value>& x,
                                 const std::type_identity_t<Preconditioner<Value>>& M, const SolverParams& params,
                                 const IterationCallback& on_iteration = {});

}  // namespace amgsolve
