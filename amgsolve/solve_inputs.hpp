#pragma once
// What is wrong with the vectors and limits a caller gives one solve (or one application of the
// preconditioner), as the one line the Solver throws: checked before anything collective, so that over MPI
// ranks a wrong input on one rank reaches every rank as an error instead of leaving them waiting.
#include <cstdint>
#include <string>

#include "solver/solve_result.hpp"
#include "sparse/csr.hpp"

namespace amgsolve {

// The rows a caller's vector must have: the whole matrix's, or over MPI ranks this rank's (rank_rows), the
// first of them global row `first`.
struct VectorRows {
  std::size_t entries = 0;
  std::int64_t first = 0;
  bool rank_rows = false;
};

// Each: the problem, or "" when there is none.
// b: its length, an entry that is not finite.
std::string right_hand_side_problem(const Vector<double>& b, const VectorRows& rows);
// A solve's limits (tolerances, iterations) outside the ranges of the keys they stand in for.
std::string solve_limits_problem(const SolverParams& limits);
// x0: its length, an entry that is not finite, entries beyond double's range on the scale the solve runs on
// (x0 / 2^exponent: a guess far larger than b's solution).
std::string initial_guess_problem(const Vector<double>& x0, const VectorRows& rows, int exponent);
// The vector the preconditioner is applied to: its length, an entry that is not finite.
std::string preconditioned_vector_problem(const Vector<double>& r, const VectorRows& rows);

}  // namespace amgsolve
