// Gustavson's row-by-row SpGEMM with a dense accumulator.
//
// F. G. Gustavson, "Two fast algorithms for sparse matrices: multiplication and permuted transposition",
// ACM TOMS 4(3), 1978. Row i of C is the linear combination of the rows of B selected by row i of A:
//     C(i,:) = sum_k A(i,k) * B(k,:).
// Symbolic phase: count the distinct columns of each output row with a per-thread marker array of
// length B.cols, then a prefix sum gives the row offsets. Numeric phase: accumulate values in a
// per-thread dense array of length B.cols, list the touched columns in order (sorted, or scanned across
// the row's column window: spgemm/accumulator.hpp), and write the row. Rows whose products crowd into a
// narrow column window skip the "is this column new" test altogether (accumulate_products<false>), and
// groups of 2 or 3 rows of A with the same columns (finite-element node unknowns) are computed together.
// Rows are independent, so the result is the same for any thread count. It is the cpu backends' default
// (the fastest on the AMG products); the tests' oracle is the untuned textbook version in tests/. The
// thresholds below say why they are where they are; the numbers are in docs/BENCHMARKS.md ("Gustavson and
// the shared kernels: design choices measured").
// Small products (at most kSerialMultiplications) run on one thread in one pass, the output grown row by
// row into space for every product: waking the other threads costs more than such a product (tens of
// microseconds on the 2-core VM, milliseconds when its cores are busy), and the symbolic pass doubles
// the reads for what fits in cache anyway. Mid-sized products (and large ones that merge many products
// per entry) also skip the symbolic pass: blocks of rows are computed in parallel into buffers and
// copied into C (one_pass_blocks). Only the largest, least merging products take both passes, which
// need no memory beyond C.
#include <algorithm>
#include <numeric>
#include <vector>

#include "common/parallel.hpp"
#include "common/timer.hpp"
#include "spgemm/accumulator.hpp"
#include "spgemm/registry.hpp"

namespace amgsolve {
namespace {

class Gustavson : public SpgemmBackendFor<Gustavson> {
 public:
  std::string name() const override { return "gustavson"; }
  std::string description() const override { return "OpenMP row-wise Gustavson, dense accumulator (the cpu default)"; }
  BackendKind runs_on() const override { return BackendKind::cpu; }

  template <class Value>
  CsrMatrix<Value> product(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, SpgemmStats& stats) const {
    CsrMatrix<Value> C(A.rows, B.cols);
    Timer timer;
    const Offset multiplications = multiplications_if_small(A, B);
    if (multiplications >= 0) {
      stats.multiplications = multiplications;
      const std::uint64_t workspace = one_pass(A, B, multiplications, C);
      stats.numeric_seconds = timer.seconds();
      stats.nnz = C.nnz();
      // C's arrays had room for every product until they were cut to size.
      stats.extra_bytes =
          workspace + static_cast<std::uint64_t>(multiplications - C.nnz()) * (sizeof(Index) + sizeof(Value));
      return C;
    }
    const Array<Offset> work = multiplications_before_rows(A, B);
    stats.multiplications = work.back();
    if (one_pass_pays(A, B, work)) {
      stats.extra_bytes = one_pass_blocks(A, B, work, C);
      stats.numeric_seconds = timer.seconds();
      stats.nnz = C.nnz();
      return C;
    }
    symbolic(A, B, C);
    stats.symbolic_seconds = timer.seconds();
    timer.restart();
    stats.extra_bytes = numeric(A, B, C);  // more than the symbolic pass's markers
    stats.numeric_seconds = timer.seconds();
    stats.nnz = C.nnz();
    return C;
  }

 private:
  static inline const bool has_vector_kernels = vector_sort_available();
  static constexpr Index kRowChunk = 256;
  // Rows per dynamic chunk: kRowChunk, or fewer so that a matrix with few rows still gives every thread
  // several chunks.
  static Index row_chunk(Index rows) { return std::clamp<Index>(rows / (8 * max_threads()), 1, kRowChunk); }
  // 10 to 50 microseconds of work on one core, less than waking the other threads costs; 2^16 made the
  // small real matrices' products slower, 2^12 no faster.
  static constexpr Offset kSerialMultiplications = Offset{1} << 14;
  // Products up to kOnePassMultiplications skip the symbolic pass; larger ones (up to
  // kLargeOnePassMultiplications) only when they merge many products per entry (compression at least
  // kOnePassCompression): one pass writes C's entries twice (buffer, then C) into fresh pages, two passes
  // read every product twice: one pass pays where each entry merges many products (the Galerkin product
  // P^T (AP)), not where it merges few (A P). Fresh pages decide it: a benchmark that repeats a product
  // reuses the first run's pages and favours one pass far beyond what a program computing each product
  // once sees.
  static constexpr Offset kOnePassMultiplications = Offset{1} << 22;
  static constexpr Offset kLargeOnePassMultiplications = Offset{1} << 26;  // buffers of at most 768 MiB
  static constexpr double kOnePassCompression = 4.0;
  // About this many products are read to estimate the compression, from rows spread over all of A.
  static constexpr Offset kSampledProducts = Offset{1} << 16;

  template <class Value>
  static bool one_pass_pays(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, const Array<Offset>& work) {
    const Offset multiplications = work.back();
    if (multiplications <= kOnePassMultiplications) return true;
    return multiplications <= kLargeOnePassMultiplications &&
           sampled_compression(A, B, multiplications) >= kOnePassCompression;
  }

  // Multiplications per distinct column over rows spread evenly over all of A, as many as hold about
  // kSampledProducts products (at most 256), counted with markers: O(products), so the estimate costs
  // little next to the product. (Sorting the first rows' columns instead cost finite-element products a
  // quarter of their time, and read only the top of A, whose rows need not be typical.)
  template <class Value>
  static double sampled_compression(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, Offset multiplications) {
    if (A.rows == 0) return 1.0;
    const Offset per_row = std::max<Offset>(1, multiplications / A.rows);
    const auto samples =
        static_cast<Index>(std::clamp<Offset>(kSampledProducts / per_row, 1, std::min<Index>(A.rows, 256)));
    std::vector<Index> marker(static_cast<std::size_t>(B.cols), -1);
    Offset products = 0, distinct = 0;
    for (Index s = 0; s < samples && products < 4 * kSampledProducts; ++s) {  // uneven rows: a cap
      const auto i = static_cast<Index>(static_cast<std::int64_t>(A.rows) * s / samples);
      products += row_multiplications(A, B, i);
      distinct += distinct_columns(A, B, i, marker.data());
    }
    return distinct > 0 ? static_cast<double>(products) / static_cast<double>(distinct) : 1.0;
  }

  // The product's multiplications when at most kSerialMultiplications, else -1 (found after reading only
  // as much of A as that many multiplications take).
  template <class Value>
  static Offset multiplications_if_small(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B) {
    Offset total = 0;
    for (Offset ka = 0; ka < A.nnz(); ++ka) {
      total += B.row_length(A.col[ka]);
      if (total > kSerialMultiplications) return -1;
    }
    return total;
  }

  // B's rows that a row of A selects lie anywhere in B (the fine nodes of an aggregate and their
  // neighbours, in P^T (AP)): the row kPrefetchDistance entries ahead is asked for while this one is
  // accumulated, so its cache misses overlap the work instead of following it (a third cache line per row
  // gained nothing more).
  static constexpr Offset kPrefetchDistance = 2;
  template <class Value>
  static void prefetch_row(const CsrMatrix<Value>& B, Index k) {
    const Offset begin = B.row_ptr[k];
    __builtin_prefetch(B.col.data() + begin);
    __builtin_prefetch(B.val.data() + begin);
  }

  // What the rows of B selected by row i of A hold: their products and the window of columns they span
  // (rows of B are sorted, so their first and last entries bound it).
  struct RowReach {
    Offset products = 0;
    Index first = 0, last = -1;
    Index window() const { return last - first + 1; }
  };
  template <class Value>
  static RowReach row_reach(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, Index i) {
    RowReach reach{0, B.cols, -1};
    for (Offset ka = A.row_begin(i); ka < A.row_end(i); ++ka) {
      const Offset begin = B.row_ptr[A.col[ka]], end = B.row_ptr[A.col[ka] + 1];
      if (begin == end) continue;
      reach.products += end - begin;
      reach.first = std::min(reach.first, B.col[begin]);
      reach.last = std::max(reach.last, B.col[end - 1]);
    }
    return reach;
  }

  // A row whose products fall into a window of at most kWindowPerProduct columns per product (banded
  // finite-element and stencil rows, Galerkin rows that merge many products per entry) is accumulated
  // without looking at the markers: every product is added into the accumulator (kept zero outside the
  // current row) and stamps its column, and the stamped columns are listed by the AVX-512 scan of the
  // window (about 0.1 ns a column). That saves a load per product and the branch on "is this column
  // new", which mispredicts about once per new column. Past the threshold the scan of the wider window
  // costs more than the branches it saves.
  static constexpr double kWindowPerProduct = 8.0;
  static bool unchecked_accumulation_pays(const RowReach& reach) {
    return has_vector_kernels &&
           static_cast<double>(reach.window()) <= kWindowPerProduct * static_cast<double>(reach.products);
  }

  // Adds A(i+r,k) B(k,:) for every k of row i into accumulator[R j + r], r < R: rows i .. i+R-1 of A have
  // the same columns (see compute_row_group). kCheckMarker: a column's first product is stored (not
  // added) and its column appended to cols (returns how many); otherwise every product is added and
  // stamps marker[j] = i (returns 0).
  template <int R, bool kCheckMarker, class Value>
  static Index accumulate_products(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, Index i,
                                   Index* __restrict marker, Value* __restrict accumulator, Index* __restrict cols) {
    // Local restrict pointers: the stores into the accumulator cannot alias B, so B's arrays stay in
    // registers instead of being reloaded after every store.
    const Offset* __restrict b_begin = B.row_ptr.data();
    const Index* __restrict b_col = B.col.data();
    const Value* __restrict b_val = B.val.data();
    const Offset row_stride = R > 1 ? A.row_begin(i + 1) - A.row_begin(i) : 0;
    Index length = 0;
    const Offset ka_end = A.row_end(i);
    for (Offset ka = A.row_begin(i); ka < ka_end; ++ka) {
      const Index k = A.col[ka];
      Value a[R];
      for (int r = 0; r < R; ++r) a[r] = A.val[ka + r * row_stride];
      if (ka + kPrefetchDistance < ka_end) prefetch_row(B, A.col[ka + kPrefetchDistance]);
      for (Offset kb = b_begin[k]; kb < b_begin[k + 1]; ++kb) {
        const Index j = b_col[kb];
        Value* __restrict sums = accumulator + static_cast<std::size_t>(R) * static_cast<std::size_t>(j);
        if constexpr (kCheckMarker) {
          if (marker[j] != i) {  // a branch here measured faster than a branch-free append
            marker[j] = i;
            for (int r = 0; r < R; ++r) sums[r] = a[r] * b_val[kb];
            cols[length++] = j;
          } else {
            for (int r = 0; r < R; ++r) sums[r] += a[r] * b_val[kb];
          }
        } else {
          for (int r = 0; r < R; ++r) sums[r] += a[r] * b_val[kb];
          marker[j] = i;
        }
      }
    }
    return length;
  }

  // Rows i .. i+R-1 of C = sum_k A(i+r,k) B(k,:), accumulated, then listed in column order by a sort or by
  // a scan of the markers across the row's column window (whichever scan_beats_sort expects to be
  // cheaper), and written back to back from cols/vals. Returns the length of each. The accumulator is
  // left zero (unchecked accumulation relies on it). ListRoom::padded: cols and vals have kListPadding
  // entries of room past the row's products, so the listing kernels may store whole registers (one_pass
  // and one_pass_blocks, whose buffers are written in row order); numeric writes rows in place in C.
  template <int R, ListRoom kRoom, class Value>
  static Index accumulate_rows(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, Index i,
                               Index* __restrict marker, Value* __restrict accumulator, Index* __restrict cols,
                               Value* __restrict vals) {
    const RowReach reach = row_reach(A, B, i);
    if (reach.products == 0) return 0;
    if (unchecked_accumulation_pays(reach)) {
      accumulate_products<R, false>(A, B, i, marker, accumulator, cols);
      return list_row<R, kRoom>(marker, i, reach.first, reach.window(), 0, accumulator, cols, vals);
    }
    const Index appended = accumulate_products<R, true>(A, B, i, marker, accumulator, cols);
    return list_row<R, kRoom>(marker, i, reach.first, reach.window(), appended, accumulator, cols, vals);
  }

  // Lists the accumulated row(s) stamped i: their columns in order, by a scan of the markers across the
  // window [first, first + window) or a sort of the `appended` columns the accumulation put in cols
  // (0 when it put none: unchecked accumulation, always scanned), and their sums moved from the
  // accumulator to vals (R rows back to back), leaving it zero. Returns the length of each row. A single
  // row moves its sums out in the same scan (list_marked_entries) when it was accumulated unchecked (a
  // narrow window) or its columns fill at least 4 in 16 of the window; sparser windows measured faster
  // with the separate gather (the power networks' rows).
  template <int R, ListRoom kRoom, class Value>
  static Index list_row(Index* __restrict marker, Index i, Index first, Index window, Index appended,
                        Value* __restrict accumulator, Index* __restrict cols, Value* __restrict vals) {
    const bool scan = appended == 0 || scan_beats_sort(appended, window, has_vector_kernels);
    const bool dense = appended == 0 || 4 * static_cast<Offset>(appended) >= window;
    if (scan && dense && R == 1)  // a single row's sums lie side by side
      return list_marked_entries(marker, i, first, window, accumulator, cols, vals, true, kRoom);
    Index length = appended;
    if (scan)
      length = list_marked_columns(marker, i, first, window, cols, true, kRoom);
    else
      sort_columns(cols, static_cast<std::size_t>(length));
    for (Index p = 0; p < length; ++p) {
      Value* sums = accumulator + static_cast<std::size_t>(R) * static_cast<std::size_t>(cols[p]);
      for (int r = 0; r < R; ++r) {
        vals[r * length + p] = sums[r];
        sums[r] = Value{0};
      }
    }
    for (int r = 1; r < R; ++r) std::copy_n(cols, length, cols + r * length);
    return length;
  }

  // How a product's rows are computed, decided once per product (row_layout): in groups of `group` rows
  // of A (node blocks, group_size), and when rows are single, through B's single entries.
  struct RowLayout {
    int group = 1;
    bool single_entry_rows = false;  // B has at most one entry per row
  };
  template <class Value>
  static RowLayout row_layout(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B) {
    const int group = group_size(A);
    return {group, group == 1 && single_entry_rows(B)};
  }

  // A thread's accumulators: the markers, one sum per column, and `group` per column for row groups
  // (only when the product groups rows).
  template <class Value>
  struct Workspace {
    Workspace(Index columns, RowLayout layout)
        : group(layout.group),
          single_entry_rows(layout.single_entry_rows),
          marker(static_cast<std::size_t>(columns), -1),
          sums(static_cast<std::size_t>(columns)),
          group_sums(group > 1 ? static_cast<std::size_t>(group) * static_cast<std::size_t>(columns) : 0) {}
    int group;
    bool single_entry_rows;
    std::vector<Index> marker;
    std::vector<Value> sums, group_sums;
    std::uint64_t bytes() const {
      return marker.capacity() * sizeof(Index) + (sums.capacity() + group_sums.capacity()) * sizeof(Value);
    }
  };

  // Rows of A with the same columns (the unknowns of one mesh node in finite-element matrices with several
  // per node: PETSc's "inodes") give rows of C with the same columns, computed together: each row of B
  // read, and each column looked up, once for all of them. Groups of R rows start at multiples of R only,
  // so which rows group never depends on how the rows are split among threads.
  static constexpr int kMaxGroup = 3;
  // Whether rows i .. i + rows - 1 of A have the same columns.
  template <class Value>
  static bool rows_share_columns(const CsrMatrix<Value>& A, Index i, Index rows) {
    const Offset length = A.row_length(i);
    if (length == 0) return false;
    const Index* cols = A.col.data() + A.row_begin(i);
    for (Index r = 1; r < rows; ++r) {
      if (A.row_length(i + r) != length) return false;
      const Index* other = A.col.data() + A.row_begin(i + r);
      for (Offset e = 0; e < length; ++e)  // inline: most unequal rows differ in their first column
        if (cols[e] != other[e]) return false;
    }
    return true;
  }

  // The group size for A: the R in 2..kMaxGroup whose groups save the most work (R - 1 of every R rows'
  // passes over B) in a sample of up to kSampledGroups groups spread over A, provided a quarter of the
  // sampled groups share their columns; otherwise 1. Matrices without node blocks then cost nothing more
  // per row. 2 unknowns per node give 2; 3 (3-D elasticity) and 6 (shells) give 3: with pairs alone, a
  // third of the rows of a 3-unknown matrix were left out (pairs straddling two nodes). The sample is
  // small because products of 10 us notice its cost.
  static constexpr Index kSampledGroups = 64;
  template <class Value>
  static int group_size(const CsrMatrix<Value>& A) {
    int best = 1;
    double best_saving = 0;
    for (int R = 2; R <= kMaxGroup; ++R) {
      const Index candidates = A.rows / R, samples = std::min<Index>(candidates, kSampledGroups);
      Index grouped = 0;
      for (Index s = 0; s < samples; ++s) {
        const auto g = static_cast<Index>(static_cast<std::int64_t>(candidates) * s / samples);
        grouped += rows_share_columns(A, R * g, R);
      }
      if (samples == 0 || 4 * grouped < samples) continue;
      const double saving = static_cast<double>(grouped) / static_cast<double>(samples) * (R - 1) / R;
      if (saving > best_saving) best = R, best_saving = saving;
    }
    return best;
  }

  // Whether every row of B has at most one entry: an aggregation or injection, such as smoothed
  // aggregation's tentative prolongator, whose product with A (the prolongator smoothing) merges A's
  // columns into aggregates.
  template <class Value>
  static bool single_entry_rows(const CsrMatrix<Value>& B) {
    if (B.nnz() > B.rows) return false;
    for (Index k = 0; k < B.rows; ++k)
      if (B.row_length(k) > 1) return false;
    return true;
  }

  // Row i of C when B has at most one entry per row: each entry of A's row lands in one column, so the
  // row is accumulated in one pass over it (no window pass, no loop over B's row, no prefetch), its
  // column window tracked on the way.
  template <ListRoom kRoom, class Value>
  static Index accumulate_row_of_single_entries(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, Index i,
                                                Index* __restrict marker, Value* __restrict sums,
                                                Index* __restrict cols, Value* __restrict vals) {
    const Offset* __restrict b_begin = B.row_ptr.data();
    const Index* __restrict b_col = B.col.data();
    const Value* __restrict b_val = B.val.data();
    Index length = 0, first = B.cols, last = -1;
    for (Offset ka = A.row_begin(i); ka < A.row_end(i); ++ka) {
      const Index k = A.col[ka];
      const Offset kb = b_begin[k];
      if (kb == b_begin[k + 1]) continue;
      const Index j = b_col[kb];
      const Value product = A.val[ka] * b_val[kb];
      if (marker[j] != i) {
        marker[j] = i;
        sums[j] = product;
        cols[length++] = j;
        first = std::min(first, j);
        last = std::max(last, j);
      } else {
        sums[j] += product;
      }
    }
    return length > 0 ? list_row<1, kRoom>(marker, i, first, last - first + 1, length, sums, cols, vals) : 0;
  }

  static Index row_groups(Index rows, int group) { return (rows + group - 1) / group; }
  static Index rows_in_group(Index rows, int group, Index g) { return std::min<Index>(group, rows - group * g); }

  // Rows group*g .. (the group, or what is left of A) of C, back to back from cols/vals; their lengths into
  // lengths[]. Returns the entries written.
  template <ListRoom kRoom, class Value>
  static Offset compute_row_group(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, Index g,
                                  Workspace<Value>& ws, Index* cols, Value* vals, Index lengths[kMaxGroup]) {
    if (ws.group > 1) return compute_node_group<kRoom>(A, B, g, ws, cols, vals, lengths);
    if (ws.single_entry_rows) {
      lengths[0] = accumulate_row_of_single_entries<kRoom>(A, B, g, ws.marker.data(), ws.sums.data(), cols, vals);
      return lengths[0];
    }
    // No node blocks: the common case, inlined into the loops over rows as it was before groups (every
    // row through the group code slowed small products down).
    lengths[0] = accumulate_rows<1, kRoom>(A, B, g, ws.marker.data(), ws.sums.data(), cols, vals);
    return lengths[0];
  }
  template <ListRoom kRoom, class Value>
  [[gnu::noinline]] static Offset compute_node_group(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, Index g,
                                                     Workspace<Value>& ws, Index* cols, Value* vals,
                                                     Index lengths[kMaxGroup]) {
    const Index i = ws.group * g, rows = rows_in_group(A.rows, ws.group, g);
    Index* marker = ws.marker.data();
    if (rows > 1 && rows_share_columns(A, i, rows)) {
      Value* sums = ws.group_sums.data();
      const Index length = rows == 2 ? accumulate_rows<2, kRoom>(A, B, i, marker, sums, cols, vals)
                                     : accumulate_rows<3, kRoom>(A, B, i, marker, sums, cols, vals);
      std::fill_n(lengths, rows, length);
      return static_cast<Offset>(rows) * length;
    }
    Offset end = 0;
    for (Index r = 0; r < rows; ++r) {
      lengths[r] = accumulate_rows<1, kRoom>(A, B, i + r, marker, ws.sums.data(), cols + end, vals + end);
      end += lengths[r];
    }
    return end;
  }

  // Stores the lengths of group g's rows as C.row_ptr[first row + 1 ..], which allocate_from_row_lengths
  // or a prefix sum turns into offsets.
  template <class Value>
  static void set_row_lengths(CsrMatrix<Value>& C, int group, Index g, const Index* lengths) {
    const Index first = group * g, rows = rows_in_group(C.rows, group, g);
    for (Index r = 0; r < rows; ++r) C.row_ptr[static_cast<std::size_t>(first + r) + 1] = lengths[r];
  }

  // One thread, no symbolic pass: C's arrays get room for every product and are cut to size at the end.
  // Returns the workspace's bytes.
  template <class Value>
  static std::uint64_t one_pass(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, Offset multiplications,
                                CsrMatrix<Value>& C) {
    Workspace<Value> ws(B.cols, row_layout(A, B));
    C.col.resize(static_cast<std::size_t>(multiplications) + kListPadding);
    C.val.resize(C.col.size());
    Offset end = 0;
    for (Index g = 0; g < row_groups(A.rows, ws.group); ++g) {
      Index lengths[kMaxGroup];
      end += compute_row_group<ListRoom::padded>(A, B, g, ws, C.col.data() + end, C.val.data() + end, lengths);
      set_row_lengths(C, ws.group, g, lengths);
    }
    std::partial_sum(C.row_ptr.begin(), C.row_ptr.end(), C.row_ptr.begin());
    C.col.resize(static_cast<std::size_t>(end));
    C.val.resize(static_cast<std::size_t>(end));
    return ws.bytes();
  }

  // work[i] = multiplications of rows 0 .. i-1 (rows + 1 entries).
  template <class Value>
  static Array<Offset> multiplications_before_rows(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B) {
    Array<Offset> work(static_cast<std::size_t>(A.rows) + 1);
    work[0] = 0;
#pragma omp parallel for schedule(static)
    for (Index i = 0; i < A.rows; ++i) work[static_cast<std::size_t>(i) + 1] = row_multiplications(A, B, i);
    std::partial_sum(work.begin(), work.end(), work.begin());
    return work;
  }

  // Row groups [first_group, end_group) of C, computed in one pass into the block's buffer, which has
  // room for every product.
  template <class Value>
  struct Block {
    Index first_group = 0, end_group = 0;
    Array<Index> col;
    Array<Value> val;
  };

  // Mid-sized products, in parallel without a symbolic pass: A's rows cut into blocks of equal work,
  // each computed into its own buffer (pages are touched only as far as the block's output reaches),
  // then copied into C once the row lengths are known. Returns the extra memory: the buffers' entries
  // and the workspaces.
  template <class Value>
  static std::uint64_t one_pass_blocks(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B,
                                       const Array<Offset>& work, CsrMatrix<Value>& C) {
    const RowLayout layout = row_layout(A, B);
    const int group = layout.group;
    const Index group_count = row_groups(A.rows, group);
    auto first_row = [&](Index g) { return std::min<Index>(group * g, A.rows); };
    const auto blocks = static_cast<std::size_t>(std::clamp<Index>(group_count, 1, 8 * max_threads()));
    std::vector<Block<Value>> block(blocks);
    for (std::size_t b = 0; b < blocks; ++b) {
      const Offset target = work.back() * static_cast<Offset>(b + 1) / static_cast<Offset>(blocks);
      const auto row = static_cast<Index>(std::lower_bound(work.begin(), work.end(), target) - work.begin());
      block[b].first_group = b == 0 ? 0 : block[b - 1].end_group;
      block[b].end_group = std::max(b + 1 == blocks ? group_count : row_groups(row, group), block[b].first_group);
    }
    std::uint64_t workspaces = 0;
#pragma omp parallel reduction(+ : workspaces)
    {
      Workspace<Value> ws(B.cols, layout);
#pragma omp for schedule(dynamic, 1)
      for (std::size_t b = 0; b < blocks; ++b) {
        Block<Value>& part = block[b];
        const Offset room = work[static_cast<std::size_t>(first_row(part.end_group))] -
                            work[static_cast<std::size_t>(first_row(part.first_group))];
        part.col.resize(static_cast<std::size_t>(room) + kListPadding);
        part.val.resize(part.col.size());
        Offset end = 0;
        for (Index g = part.first_group; g < part.end_group; ++g) {
          Index lengths[kMaxGroup];
          end += compute_row_group<ListRoom::padded>(A, B, g, ws, part.col.data() + end, part.val.data() + end,
                                                     lengths);
          set_row_lengths(C, group, g, lengths);
        }
      }
      workspaces += ws.bytes();
    }
    allocate_from_row_lengths(C);
    Offset buffered = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : buffered)
    for (std::size_t b = 0; b < blocks; ++b) {
      Block<Value>& part = block[b];
      const Offset from = C.row_begin(first_row(part.first_group));
      const Offset count = C.row_begin(first_row(part.end_group)) - from;
      std::copy_n(part.col.data(), count, C.col.data() + from);
      std::copy_n(part.val.data(), count, C.val.data() + from);
      buffered += count;
      part = Block<Value>{};  // frees the buffer now
    }
    return workspaces + static_cast<std::uint64_t>(buffered) * (sizeof(Index) + sizeof(Value));
  }

  // The distinct columns of row i of C, counted with markers (marker[j] == i: seen in this row).
  template <class Value>
  static Offset distinct_columns(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, Index i, Index* marker) {
    Offset count = 0;
    for (Offset ka = A.row_begin(i); ka < A.row_end(i); ++ka) {
      const Index k = A.col[ka];
      for (Offset kb = B.row_begin(k); kb < B.row_end(k); ++kb) {
        // Branch-free: whether column j is new to the row is data-dependent and mispredicts often.
        const Index j = B.col[kb];
        count += marker[j] != i;
        marker[j] = i;
      }
    }
    return count;
  }

  // Fills C.row_ptr and sizes C.col/C.val.
  template <class Value>
  static void symbolic(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, CsrMatrix<Value>& C) {
    const Index chunk = row_chunk(A.rows);
#pragma omp parallel
    {
      std::vector<Index> marker(static_cast<std::size_t>(B.cols), -1);
#pragma omp for schedule(dynamic, chunk)
      for (Index i = 0; i < A.rows; ++i)
        C.row_ptr[static_cast<std::size_t>(i) + 1] = distinct_columns(A, B, i, marker.data());
    }
    allocate_from_row_lengths(C);
  }

  // Returns the workspaces' bytes.
  template <class Value>
  static std::uint64_t numeric(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, CsrMatrix<Value>& C) {
    const RowLayout layout = row_layout(A, B);
    const int group = layout.group;
    const Index chunk = std::max<Index>(1, row_chunk(A.rows) / group);
    std::uint64_t workspaces = 0;
#pragma omp parallel reduction(+ : workspaces)
    {
      Workspace<Value> ws(B.cols, layout);
#pragma omp for schedule(dynamic, chunk)
      for (Index g = 0; g < row_groups(A.rows, group); ++g) {
        const Offset begin = C.row_begin(group * g);
        Index lengths[kMaxGroup];
        compute_row_group<ListRoom::exact>(A, B, g, ws, C.col.data() + begin, C.val.data() + begin, lengths);
      }
      workspaces += ws.bytes();
    }
    return workspaces;
  }
};

}  // namespace
}  // namespace amgsolve

AMGSOLVE_REGISTER_SPGEMM(gustavson, Gustavson)
