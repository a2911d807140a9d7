#pragma once
// MAGNUS SpGEMM (J. Wolfson-Pou, J. Laukemann, F. Petrini, "MAGNUS: Generating data locality to
// accelerate sparse matrix-matrix multiplication on CPUs", ICS 2025; ../shared/papers/
// magnus-wolfson-pou-2025.txt), the `magnus` backend. Exposed with explicit options so tests can force
// tiny cache sizes and reach the coarse level on small inputs.
#include "spgemm/magnus/parameters.hpp"
#include "spgemm/spgemm.hpp"

namespace amgsolve::magnus {

struct Options {
  CacheGeometry cache;          // cache sizes (the backend reads them from the system)
  // Rows, coarse chunks and the numeric phase's fine chunks with fewer products are sorted (section 3.4).
  Offset sort_threshold = 32;
  // Non-temporal stores in the reorder passes (x86-64), sections 3.2-3.3. Off by default: they are
  // single 4- and 8-byte stores scattered over all chunks, which thrash the write-combining buffers and
  // send to memory what the accumulation pass reads back right after (a row's reordered products fit in
  // L2 here) (docs/BENCHMARKS.md, "MAGNUS: design choices measured"). The paper's per-chunk cache-line buffers, flushed a whole line at a time, are
  // not built.
  bool streaming_stores = false;
  // The rows of C from the sort, dense and segmented categories are written with non-temporal stores
  // (whole cache lines from a small staging buffer) where C exceeds half the last-level cache: a
  // regular store first reads its line from memory, so C would cost twice its bytes of traffic
  // (docs/BENCHMARKS.md, "MAGNUS: design choices measured").
  bool stream_output = true;
  // The symbolic phase counts the products in B's single columns (one nonzero each) without an
  // accumulator, where that pays (spgemm/magnus/shared_columns.hpp).
  bool single_columns = true;
  bool vector_sort = true;  // AVX-512 kernels where the CPU has them: sorting network and bit listing
  std::uint64_t batch_bytes = std::uint64_t{64} << 20;  // coarse level: intermediate products per batch
  // A row too wide for one dense accumulator is accumulated segment by segment (no reorder) when it has
  // at least this many products per cursor visit (a row of B in a segment), else it goes to the fine
  // level: 24 is between the visits that paid and those that did not (docs/BENCHMARKS.md, "MAGNUS: design choices measured").
  double products_per_cursor_visit = 24;
};

// Rows of C per category (section 3.1), for tests and the report: the numeric phase's plan, and the
// symbolic phase's (a bit per column: its dense windows are 65 times as wide), which is the plan of A
// B_shared where the phase runs on B's shared columns only (Options::single_columns).
struct RowCategories {
  Offset sort = 0, dense = 0, segmented = 0, fine = 0, coarse = 0;
  Offset products = 0;  // intermediate products the phase accumulated
};

Options system_options();  // cache geometry from common/cpu_info.hpp

template <class Value>
CsrMatrix<Value> multiply(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, const Options& options,
                          SpgemmStats& stats, RowCategories* categories = nullptr,
                          RowCategories* symbolic_categories = nullptr);

}  // namespace amgsolve::magnus
