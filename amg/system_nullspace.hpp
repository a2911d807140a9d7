#pragma once
// The nullspace of a singular system (amg.block_size or near-nullspace vectors, amg/system_setup.hpp): a
// structure free to make some or all of its rigid-body motions (nothing fixed, or only a roller), whose
// stiffness matrix maps those motions to zero. Its nullspace is then found among the finest near-nullspace
// vectors B: the combinations N = B C that A maps to zero. The setup carries B to every level exactly (T B_c =
// B; without the filtered matrix, whose lumping row by row keeps A_f 1 = A 1 but not A_f B = 0 for a
// rotation), so each level's nullspace is B_l C; the coarsest level is solved by its pseudo-inverse
// (sparse/sparse_ldlt.hpp), and the outer iteration keeps its vectors orthogonal to N and checks that b is
// (Kaasschieter, "Preconditioned conjugate gradients for solving singular systems", J. Comput. Appl. Math.
// 24, 1988), as for the constant nullspace of a scalar problem (amg/nullspace.hpp).
//
// Finding C: with B's columns made orthonormal (W: B W has orthonormal columns, from the eigenvalues of B^T
// B), the eigenvectors y of W^T (A B)^T (A B) W whose eigenvalues mu have sqrt(mu) at most
// kNullspaceCandidate of A's largest row sum are the candidates (B W y nearly in A's nullspace: a structure
// fixed somewhere moves it by far more); each must then be mapped to zero row by row, to
// kNullspaceRowTolerance of the row's magnitude sum_j |a_ij| |n_j|, as the constant's row sums are judged: a
// candidate that is not (rigid-body modes from rounded coordinates) is an InputError saying so, where the
// setup would otherwise fail on a coarsest level singular in a direction it does not know.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "amg/near_nullspace.hpp"
#include "amg/params.hpp"
#include "common/exact_sum.hpp"
#include "sparse/csr.hpp"

namespace amgsolve {

class CpuBackend;

inline constexpr double kNullspaceCandidate = 1e-6;
inline constexpr double kNullspaceRowTolerance = 1e-8;

struct SystemNullspace {
  NullspaceChoice choice = NullspaceChoice::none;           // none or near_nullspace
  std::shared_ptr<const std::vector<double>> combinations;  // k x m: AmgParams::nullspace_combinations
};

// The row where A maps a vector furthest from zero relative to the row's magnitude (row: global, -1: none).
struct WorstRow {
  std::int64_t row = -1;
  double relative = 0.0;
};

// How a rank's rows of A and B join the other ranks' in the search: one process's are all of them (this
// class); over MPI ranks, amg/mpi/system_setup.cpp's. The sums are exact (the Gram matrices are summed in B's
// reduction blocks), so every rank count finds one process's nullspace.
class SystemRows {
 public:
  virtual ~SystemRows() = default;
  virtual double sum(const ExactSum& partial) const { return partial.value(); }
  virtual double max(double value) const { return value; }
  virtual std::int64_t first_row() const { return 0; }
  // The worst of the ranks' rows: the largest relative value, at its first row in global order.
  virtual WorstRow worst(WorstRow mine) const { return mine; }
  // B's rows over A's columns (a rank's own rows, then its ghost columns' from their ranks): B on one process.
  virtual const NearNullspace& columns(const NearNullspace& B, NearNullspace& /*scratch*/) const { return B; }
  // The parts of A's graph of nodes (node_ptr: this process's or rank's rows of each node).
  virtual Index connected_components(const CsrMatrix<double>& A, const Array<Index>& node_ptr) const;
};

// amg.nullspace for a system whose finest near-nullspace vectors are B: `auto` finds the combinations that A
// maps to zero (none: nonsingular); `near_nullspace` declares all of B to be A's nullspace (an InputError
// naming the vector and row where A does not map it to zero); `none` is none; `constant` is a scalar
// problem's (an InputError). A singular system whose graph falls into parts (each free on its own, more
// motions than B holds) is an InputError too.
SystemNullspace resolve_system_nullspace(const CsrMatrix<double>& A, const NearNullspace& B, NullspaceChoice choice,
                                         const SystemRows& rows = SystemRows{});
// The same from the parameters' block size and vectors, into them (nullspace, nullspace_combinations); through
// the setup's backend too (the mpi backend's on the ranks' rows: amg/mpi/system_setup.hpp).
void resolve_system_nullspace(const CsrMatrix<double>& A, AmgParams& params);
inline void resolve_system_nullspace(const CpuBackend&, const CsrMatrix<double>& A, AmgParams& params) {
  resolve_system_nullspace(A, params);
}

// A level's nullspace vectors N = B C, one after the other (B.rows() entries each): the coarsest level's,
// for its pseudo-inverse.
Vector<double> nullspace_vectors(const NearNullspace& B, const std::vector<double>& combinations);

// An orthonormal basis Q of the finest level's nullspace N = B C, and what the outer iteration does with it.
class NullspaceProjection {
 public:
  // The exact dot product of two vectors (over MPI ranks, of their rows: RankVectors::dot).
  using Dot = std::function<double(const Vector<double>&, const Vector<double>&)>;
  // B: the rows the vectors hold (over MPI ranks, a rank's: then `dot` sums over the ranks); by default the
  // cpu backend's deterministic dot product.
  NullspaceProjection(const NearNullspace& B, const std::vector<double>& combinations, Dot dot = {});
  // ||Q^T v|| / ||v||: v's part along the nullspace, which no A x reaches (0 for v = 0).
  double part(const Vector<double>& v) const;
  // v -= Q Q^T v, vector by vector (deterministic: the dot products are deterministic_sums).
  void project(Vector<double>& v) const;
  // ||v - Q Q^T v|| / ||v||: v's part outside the nullspace (0 for v = 0).
  double outside(Vector<double> v) const;
  int vectors() const { return static_cast<int>(basis_.size()); }

 private:
  Dot dot_;
  std::vector<Vector<double>> basis_;
};

// b's part along a system's nullspace (NullspaceProjection::part) above the solve's tolerance: an InputError
// saying so (`what` names b's source).
void require_consistent_rhs(double part, int vectors, double tolerance, const std::string& what);

}  // namespace amgsolve
