#pragma once
// The direct solve of the coarsest AMG level: sparse LDL^T (Eigen's SimplicialLDLT with AMD ordering) of the
// Galerkin operator, computed in double whatever the hierarchy's value type. A non-positive pivot means
// the coarse operator, and so the input matrix, is not positive definite: that is reported, not hidden.
#include <memory>

#include "sparse/csr.hpp"

namespace amgsolve {

template <class Value>
class SparseLdlt {
 public:
  explicit SparseLdlt(const CsrMatrix<Value>& A);
  ~SparseLdlt();
  SparseLdlt(SparseLdlt&&) noexcept;
  SparseLdlt& operator=(SparseLdlt&&) noexcept;

  void solve(const Vector<Value>& b, Vector<Value>& x) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace amgsolve
