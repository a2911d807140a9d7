#pragma once
// The direct solve of the coarsest AMG level: sparse LDL^T (Eigen's SimplicialLDLT with AMD ordering) of the
// Galerkin operator, computed in double whatever the hierarchy's value type. A non-positive pivot means
// the coarse operator, and so the input matrix, is not positive definite: that is reported, not hidden.
//
// A singular coarsest matrix with a known nullspace B (amg.nullspace, amg/nullspace.hpp: the constant, or
// the m vectors of a free-floating system) is solved on its range instead, x = A^+ b, the pseudo-inverse:
// with b projected onto the range (b - Q Q^T b, Q an orthonormal basis of B), m nodes P are pinned, x_P = 0,
// and the rest solve the matrix without rows and columns P, which is SPD where Q's rows P are nonsingular
// (one vector: the node of the largest |B_k|; for a connected graph); that x satisfies A x = b (rows P follow
// from B^T A = 0 and B^T b = 0), and projecting out B gives the solution of least norm, A^+ b.
#include <cstdint>
#include <memory>

#include "common/error.hpp"
#include "sparse/csr.hpp"

namespace amgsolve {

// A coarsest-level matrix that is singular or not positive definite. Over MPI ranks every rank factorises
// the gathered level, so every rank throws it at once: a handler may then do collective work (naming a
// floating part, amgsolve/solver.cpp).
class SingularCoarsestLevel : public NumericalError {
 public:
  using NumericalError::NumericalError;
};

template <class Value>
class SparseLdlt {
 public:
  // nullspace: empty, or the m vectors B with A B = 0, each of A.rows entries, one after the other.
  explicit SparseLdlt(const CsrMatrix<Value>& A, const Vector<double>& nullspace = {});
  ~SparseLdlt();
  SparseLdlt(SparseLdlt&&) noexcept;
  SparseLdlt& operator=(SparseLdlt&&) noexcept;

  void solve(const Vector<Value>& b, Vector<Value>& x) const;
  bool singular() const;
  std::uint64_t bytes() const;  // the factor's (L, D, the ordering)

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The multiply-adds that factorising A would take, sum over the columns of L of their entries squared, from
// the symbolic analysis alone (the ordering and the elimination tree: about as much work as L has entries):
// what decides whether a coarsest level is worth factorising (amg/smoothed_aggregation.hpp).
template <class Value>
double factorisation_work(const CsrMatrix<Value>& A);

// The same solve as a dense n x n matrix, symmetric, by dense Cholesky in double: A^-1, or A^+ with the
// nullspace B as above (for the cuda backend, which applies it as a product on the device).
template <class Value>
Vector<double> dense_inverse(const CsrMatrix<Value>& A, const Vector<double>& nullspace = {});

}  // namespace amgsolve
