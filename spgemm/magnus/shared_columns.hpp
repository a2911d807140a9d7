#pragma once
// The symbolic phase on the shared columns of B only (ours, not in the MAGNUS paper; the count stays
// exact, MAGNUS's precise prediction, section 2).
//
// A column of B that holds one nonzero (a single column) meets at most one product in any row of C:
// rows of A have unique columns, so the one row of B that reaches it is taken at most once. Such a
// product is an entry of C of its own and needs no accumulator. With the shared columns those of B
// that hold two or more nonzeros, and B_shared B's entries in them,
//   entries of row i of C = products of row i of A B - products of row i of A B_shared
//                           + entries of row i of A B_shared,
// so the accumulators run on A B_shared alone, with B_shared's columns renumbered by their rank among
// the shared columns (the count of distinct columns does not change under a one-to-one map): its
// accumulators then span the shared columns only, not all of B's (at 2^20 columns, 28,000 of them: a
// symbolic bitmap of 3.5 KB rather than 128 KB). Only a B with fewer nonzeros than columns can have many
// single columns (wide, sparse B: MAGNUS's uniform random set from 2^18 columns on, where 37% of B's
// nonzeros are single at 2^18, 78% at 2^20 and nearly all beyond) (docs/BENCHMARKS.md, "MAGNUS: design choices measured"). Square operators (AMG's
// products, the suite's
// A^2) have no more columns than nonzeros and skip it (single_columns_pay); a B whose columns all turn
// out shared falls back to the whole product.
#include <cstdint>

#include "sparse/csr.hpp"

namespace amgsolve::magnus {

// Whether finding B's single columns pays: B has fewer nonzeros than columns (so a good share of them
// are single), and its two bitmaps of a bit per column (the classification's memory and the time to
// clear it) are small beside the symbolic phase's work, a byte per intermediate product.
bool single_columns_pay(Offset b_nonzeros, Index b_columns, Offset products);

// B's entries in its shared columns, in B's row order, each column renumbered by its rank among the
// shared columns (so the result has as many columns as B has shared ones, and its rows stay sorted):
// columns only, val left empty (the symbolic phase reads no values; so the result is a pattern, not a
// matrix to compute with). Parallel and deterministic.
template <class Value>
CsrMatrix<Value> shared_column_entries(const CsrMatrix<Value>& B);

// The bytes shared_column_entries holds at its peak for a B with that many columns, besides its result.
std::uint64_t shared_column_scratch_bytes(Index b_columns);

}  // namespace amgsolve::magnus
