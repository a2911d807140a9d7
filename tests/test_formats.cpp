// ELLPACK-R and pJDS (the GPU SpMV formats) on the CPU: conversions round-trip, SpMV equals CSR SpMV,
// and the padding has the size the paper's construction implies.
#include <set>

#include <omp.h>

#include "backend/cpu/cpu_backend.hpp"
#include "problems/poisson.hpp"
#include "sparse/ellpack_r.hpp"
#include "sparse/pjds.hpp"
#include "sparse/sliced_ellpack.hpp"
#include "sparse/spmv_format.hpp"
#include "sparse/matrix_market.hpp"
#include "test_support.hpp"

namespace amgsolve {
namespace {

// Random matrix with empty rows and one row with every column set.
CsrMatrix<double> irregular(Index n, std::uint64_t seed) {
  CsrMatrix<double> R = test::random_sparse(n, n, 0.03, seed, {1, 2, n - 1});
  std::vector<Triplet<double>> t;
  for (Index i = 0; i < n; ++i)
    for (Offset k = R.row_begin(i); k < R.row_end(i); ++k) t.push_back({i, R.col[k], R.val[k]});
  for (Index j = 0; j < n; ++j) t.push_back({n / 2, j, 1.0 + j});
  return csr_from_triplets(n, n, t);
}

std::vector<CsrMatrix<double>> inputs() {
  PoissonParams p;
  p.size = {9, 8, 7};
  std::vector<CsrMatrix<double>> out = {irregular(157, 3), poisson_matrix(p), test::random_sparse(64, 64, 0.2, 9),
                                        CsrMatrix<double>(5, 5)};
  for (const char* name : {"bcsstk14", "1138_bus"}) {
    const std::string path = test::shared_matrix(name);
    if (!path.empty()) out.push_back(read_matrix_market(path));
  }
  return out;
}

Vector<double> random_vector(Index n, std::uint64_t seed) {
  Vector<double> x(static_cast<std::size_t>(n));
  for (Index i = 0; i < n; ++i) x[i] = seeded_uniform(seed, i) - 0.5;
  return x;
}

void expect_near(const Vector<double>& a, const Vector<double>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-12 * (1 + std::abs(b[i]))) << i;
}

TEST(EllpackR, RoundTripAndSpmvMatchCsr) {
  for (const CsrMatrix<double>& A : inputs()) {
    const EllpackR<double> E = ellpack_r_from_csr(A);
    EXPECT_EQ(E.padded_rows % 32, 0);
    EXPECT_GE(E.padded_rows, A.rows);
    const CsrMatrix<double> back = csr_from_ellpack_r(E);
    EXPECT_EQ(back.row_ptr, A.row_ptr);
    EXPECT_EQ(back.col, A.col);
    EXPECT_EQ(back.val, A.val);
    const Vector<double> x = random_vector(A.cols, 1);
    Vector<double> y, expected;
    spmv(E, x, y);
    spmv(A, x, expected);
    expect_near(y, expected);
  }
}

TEST(Pjds, RoundTripAndSpmvInThePermutedBasisMatchCsr) {
  for (const CsrMatrix<double>& A : inputs()) {
    const Pjds<double> P = pjds_from_csr(A, 32, /*symmetric_permutation=*/true);
    const CsrMatrix<double> back = csr_from_pjds(P);
    EXPECT_EQ(back.row_ptr, A.row_ptr);
    EXPECT_EQ(back.col, A.col);
    EXPECT_EQ(back.val, A.val);
    const Vector<double> x = random_vector(A.cols, 2);
    Vector<double> xp, yp, y, expected;
    permute_to(P, x, xp);
    spmv(P, xp, yp);
    permute_from(P, yp, y);
    spmv(A, x, expected);
    expect_near(y, expected);
  }
}

TEST(Pjds, RowPermutationOnlyForRectangularMatrices) {
  const CsrMatrix<double> A = test::random_sparse(90, 40, 0.1, 5, {0, 7});
  const Pjds<double> P = pjds_from_csr(A, 32, /*symmetric_permutation=*/false);
  const Vector<double> x = random_vector(A.cols, 3);
  Vector<double> yp, y, expected;
  spmv(P, x, yp);
  permute_from(P, yp, y);
  spmv(A, x, expected);
  expect_near(y, expected);
  EXPECT_THROW(pjds_from_csr(A, 32, true), Error);
}

TEST(Pjds, SortedRowsAndBlockPaddingAsInThePaper) {
  const CsrMatrix<double> A = irregular(300, 11);
  const Pjds<double> P = pjds_from_csr(A, 32);
  for (Index i = 1; i < P.rows; ++i) EXPECT_GE(P.row_length[i - 1], P.row_length[i]);
  // Column j holds, per block of 32 sorted rows, 32 slots if the block's longest row reaches j.
  Offset expected = 0;
  for (Index block = 0; block < P.padded_rows; block += 32) expected += 32 * P.row_length[block];
  EXPECT_EQ(P.col_start.back(), expected);
  // One full row and short others: pJDS stores far less than ELLPACK-R, which pads every row to it.
  const EllpackR<double> E = ellpack_r_from_csr(A);
  EXPECT_LT(P.val.size() * 4, E.val.size());
  EXPECT_GE(P.val.size(), static_cast<std::size_t>(A.nnz()));
}

TEST(Pjds, ConstantRowLengthNeedsNoPadding) {
  // Periodic 1D Laplacian: 3 entries in every row, so pJDS and ELLPACK-R store exactly nnz values.
  std::vector<Triplet<double>> t;
  const Index n = 64;
  for (Index i = 0; i < n; ++i) {
    t.push_back({i, i, 2.0});
    t.push_back({i, (i + 1) % n, -1.0});
    t.push_back({i, (i + n - 1) % n, -1.0});
  }
  const CsrMatrix<double> A = csr_from_triplets(n, n, t);
  EXPECT_EQ(static_cast<Offset>(pjds_from_csr(A).val.size()), A.nnz());
  EXPECT_EQ(static_cast<Offset>(ellpack_r_from_csr(A).val.size()), A.nnz());
}

// ---- the cpu backend's sliced ELLPACK (sparse/sliced_ellpack.hpp)

// A copy of some chunks only (a distributed matrix's interior ones): those chunks as the whole copy has them,
// the others of width 0.
TEST(SlicedEllpack, TheChunksKeptAreTheWholeCopysAndTheOthersEmpty) {
  for (const CsrMatrix<double>& A : inputs()) {
    SCOPED_TRACE(std::to_string(A.rows) + " rows");
    const SlicedEllpack<double> whole = sliced_ellpack_from_csr(A);
    std::vector<std::uint8_t> kept(static_cast<std::size_t>(whole.chunks()));
    for (std::size_t c = 0; c < kept.size(); ++c) kept[c] = c % 3 != 1 ? 1 : 0;
    const SlicedEllpack<double> part = sliced_ellpack_from_csr(A, kept);
    ASSERT_EQ(part.chunks(), whole.chunks());
    for (Index c = 0; c < part.chunks(); ++c) {
      if (!kept[static_cast<std::size_t>(c)]) {
        EXPECT_EQ(part.width(c), 0) << "chunk " << c;
        continue;
      }
      ASSERT_EQ(part.width(c), whole.width(c)) << "chunk " << c;
      const auto slots = static_cast<std::ptrdiff_t>(part.chunk_start[c + 1] - part.chunk_start[c]);
      for (Index j = 0; j < part.width(c); ++j)
        for (Index r = 0; r < SlicedEllpack<double>::kChunk; ++r)
          EXPECT_EQ(part.column(c, j, r), whole.column(c, j, r)) << "chunk " << c << ", entry " << j << ", row " << r;
      EXPECT_TRUE(std::equal(part.val.begin() + part.chunk_start[c], part.val.begin() + part.chunk_start[c] + slots,
                             whole.val.begin() + whole.chunk_start[c]));
    }
  }
}

TEST(SlicedEllpack, EveryEntryWhereTheLayoutSaysAndPaddingThatAddsNothing) {
  for (const CsrMatrix<double>& A : inputs()) {
    SCOPED_TRACE(std::to_string(A.rows) + " rows");
    const SlicedEllpack<double> S = sliced_ellpack_from_csr(A);
    constexpr Index C = SlicedEllpack<double>::kChunk;
    ASSERT_EQ(S.chunks(), (A.rows + C - 1) / C);
    Offset padding = 0;
    for (Index c = 0; c < S.chunks(); ++c) {
      Index longest = 0;
      for (Index i = c * C; i < std::min(A.rows, (c + 1) * C); ++i) longest = std::max(longest, A.row_length(i));
      ASSERT_EQ(S.width(c), longest) << "chunk " << c;
      for (Index r = 0; r < C; ++r) {
        const Index i = c * C + r;
        for (Index j = 0; j < S.width(c); ++j) {
          const Offset e = S.chunk_start[c] + C * j + r;
          if (i < A.rows && j < A.row_length(i)) {
            EXPECT_EQ(S.column(c, j, r), A.col[A.row_begin(i) + j]);
            EXPECT_EQ(S.val[e], A.val[A.row_begin(i) + j]);
          } else {
            ++padding;
            EXPECT_EQ(S.val[e], 0.0);
            EXPECT_TRUE(S.column(c, j, r) >= 0 && S.column(c, j, r) < A.cols);
          }
        }
      }
    }
    EXPECT_EQ(static_cast<Offset>(S.val.size()), A.nnz() + padding);
    if (A.nnz() > 0) {
      EXPECT_DOUBLE_EQ(sliced_ellpack_padding(A), static_cast<double>(padding) / A.nnz());
    }
  }
}

// An entry whose 8 columns are consecutive keeps only the first; the others keep all 8 (the columns themselves
// are checked against the CSR rows above). On a stencil's rows in their natural order that is most entries.
TEST(SlicedEllpack, ConsecutiveColumnsAreStoredOnceAnEntry) {
  PoissonParams p;
  p.size = {64, 4, 4};  // x-lines of 8 chunks: only the chunks holding x = 0 or x = 63 shift their rows' entries
  // The entries of A's copy, and those whose columns are not consecutive; the copy's storage checked against them.
  const auto entries_and_scattered = [](const CsrMatrix<double>& A) {
    const SlicedEllpack<double> S = sliced_ellpack_from_csr(A);
    constexpr Index C = SlicedEllpack<double>::kChunk;
    Offset entries = 0, scattered = 0;
    for (Index c = 0; c < S.chunks(); ++c)
      for (Index j = 0; j < S.width(c); ++j) {
        bool consecutive = true;
        for (Index r = 1; r < C; ++r) consecutive = consecutive && S.column(c, j, r) == S.column(c, j, 0) + r;
        ++entries;
        scattered += consecutive ? 0 : 1;
      }
    EXPECT_EQ(static_cast<Offset>(S.entry_column.size()), entries);
    EXPECT_EQ(static_cast<Offset>(S.scattered.size()), C * scattered);
    EXPECT_EQ(S.bytes(), S.chunk_start.size() * sizeof(Offset) +
                             static_cast<std::uint64_t>(entries + C * scattered) * sizeof(Index) +
                             S.val.size() * sizeof(double));
    return std::pair{entries, scattered};
  };
  const auto [entries, scattered] = entries_and_scattered(poisson_matrix(p));
  EXPECT_LT(4 * scattered, entries);
  const auto [random_entries, random_scattered] = entries_and_scattered(test::random_sparse(64, 64, 0.2, 9));
  EXPECT_GT(random_scattered, 0);
  EXPECT_LE(random_scattered, random_entries);
}

// Every product of the cpu backend on the sliced copy against the same on the CSR: the same bits.
template <class V>
void expect_sliced_products_equal_csr(const CsrMatrix<V>& A) {
  const CpuBackend cpu;
  const CpuMatrix<V> csr = CpuMatrix<V>::view(A);
  CpuMatrix<V> sliced = csr;
  sliced.sliced = std::make_shared<const SlicedEllpack<V>>(sliced_ellpack_from_csr(A));
  const auto vector = [](Index n, std::uint64_t seed) {
    Vector<V> v(static_cast<std::size_t>(n));
    for (Index i = 0; i < n; ++i) v[i] = static_cast<V>(seeded_uniform(seed, i) - 0.5);
    return v;
  };
  const Vector<V> x = vector(A.cols, 1), b = vector(A.rows, 2), dinv = vector(A.rows, 3);
  const auto both = [&](const char* what, auto&& pass) {
    Vector<V> from_csr = vector(A.rows, 4), from_sliced = from_csr;
    pass(csr, from_csr);
    pass(sliced, from_sliced);
    EXPECT_EQ(from_sliced, from_csr) << what;
  };
  both("spmv", [&](const CpuMatrix<V>& M, Vector<V>& y) { cpu.spmv(M, x, y); });
  both("spmv_add", [&](const CpuMatrix<V>& M, Vector<V>& y) { cpu.spmv_add(M, x, y); });
  if (!A.is_square()) return;
  both("residual", [&](const CpuMatrix<V>& M, Vector<V>& r) { cpu.residual(M, x, b, r); });
  both("jacobi_sweep", [&](const CpuMatrix<V>& M, Vector<V>& next) { cpu.jacobi_sweep(M, dinv, b, x, next); });
  for (const V a : {V(0), V(0.25)}) {
    both("chebyshev_step d", [&](const CpuMatrix<V>& M, Vector<V>& d) {
      Vector<V> next;
      cpu.chebyshev_step(M, dinv, b, a, V(0.75), d, x, next);
    });
    both("chebyshev_step x", [&](const CpuMatrix<V>& M, Vector<V>& next) {
      Vector<V> d = vector(A.rows, 5);
      cpu.chebyshev_step(M, dinv, b, a, V(0.75), d, x, next);
    });
  }
  Vector<V> q_csr, q_sliced;
  EXPECT_EQ(cpu.spmv_dot(sliced, x, q_sliced), cpu.spmv_dot(csr, x, q_csr)) << "spmv_dot";
  EXPECT_EQ(q_sliced, q_csr) << "spmv_dot q";
}

TEST(SlicedEllpack, EveryProductEqualsTheCsrOneBitForBit) {
  // Rows not a multiple of the chunk, empty rows, a full row, an empty matrix, a stencil's; double (AVX-512, or AVX2 in
  // two halves) and float (AVX2), each vector kernel the CPU has and the scalar loop, 1 and 3 threads.
  std::vector<CsrMatrix<double>> matrices = inputs();
  matrices.push_back(test::random_sparse(37, 53, 0.1, 11));  // rectangular, as P and R are
  PoissonParams lines;
  lines.size = {64, 4, 4};  // mostly entries of consecutive columns (a plain load of x), some scattered (gathered)
  matrices.push_back(poisson_matrix(lines));
  for (const auto kernels : {SlicedEllpackKernels::avx512, SlicedEllpackKernels::avx2, SlicedEllpackKernels::scalar}) {
    const SlicedEllpackKernelsForTests only(kernels);
    for (const int threads : {1, 3}) {
      omp_set_num_threads(threads);
      for (const CsrMatrix<double>& A : matrices) {
        SCOPED_TRACE(std::to_string(A.rows) + " x " + std::to_string(A.cols) + ", kernels up to " +
                     to_string(kernels) + ", " + std::to_string(threads) + " threads");
        expect_sliced_products_equal_csr(A);
        expect_sliced_products_equal_csr(cast_values<float>(A));
      }
    }
  }
  omp_set_num_threads(2);
  RecordProperty("double_kernels", sliced_ellpack_avx512() ? "AVX-512, AVX2, scalar" : "AVX2, scalar (no AVX-512)");
  if (!sliced_ellpack_vector_units()) GTEST_SKIP() << "this CPU lacks AVX2: only the scalar loop ran";
}

TEST(SlicedEllpack, TheSolveUsesItWhereThePaddingIsSmallAndCsrWhenAskedFor) {
  const CpuBackend cpu;
  PoissonParams p;
  p.size = {20, 20, 20};
  const auto poisson = std::make_shared<const CsrMatrix<double>>(poisson_matrix(p));
  EXPECT_LE(sliced_ellpack_padding(*poisson), kSlicedPaddingBesideCsr);
  EXPECT_EQ(cpu.matrix(poisson, SpmvFormat::automatic)->sliced != nullptr, sliced_ellpack_vector_units());
  EXPECT_EQ(cpu.matrix(poisson, SpmvFormat::csr)->sliced, nullptr);
  // One long row in each chunk: about 4 times the entries stored.
  const auto irregular_rows = std::make_shared<const CsrMatrix<double>>(irregular(157, 3));
  EXPECT_GT(sliced_ellpack_padding(*irregular_rows), kSlicedPaddingBesideCsr);
  EXPECT_EQ(cpu.matrix(irregular_rows, SpmvFormat::automatic)->sliced, nullptr);
}

// ---- footprint and traffic model (sparse/spmv_format.hpp)

// Sectors of 32 bytes touched by one-thread-per-row loads, counted by simulating the kernels: for every
// warp of 32 stored rows and every step j, the distinct sectors that the active rows' j-th entries lie
// in, given each format's real layout (the element's index in its array).
template <class Layout>
std::uint64_t simulated_sectors(Index padded_rows, const Array<Index>& row_length, std::size_t element_bytes,
                                Layout&& index_of) {
  std::uint64_t sectors = 0;
  for (Index warp = 0; warp < padded_rows; warp += 32) {
    Index longest = 0;
    for (Index i = warp; i < warp + 32; ++i) longest = std::max(longest, row_length[i]);
    for (Index j = 0; j < longest; ++j) {
      std::set<std::uint64_t> touched;
      for (Index i = warp; i < warp + 32; ++i)
        if (j < row_length[i]) touched.insert(static_cast<std::uint64_t>(index_of(i, j)) * element_bytes / 32);
      sectors += touched.size();
    }
  }
  return sectors;
}

TEST(SpmvFormatCosts, FootprintsAreTheBuiltStructuresAndTrafficMatchesSimulatedSectors) {
  for (const CsrMatrix<double>& A : inputs()) {
    SCOPED_TRACE(std::to_string(A.rows) + " rows");
    const std::vector<FormatCost> costs = spmv_format_costs(A);
    ASSERT_EQ(costs.size(), 3u);
    const std::uint64_t vectors = static_cast<std::uint64_t>(A.rows + A.cols) * 8;
    const std::uint64_t csr_bytes = A.row_ptr.size() * 8 + A.col.size() * 4 + A.val.size() * 8;
    EXPECT_EQ(costs[0].format, SpmvFormat::csr);
    EXPECT_EQ(costs[0].bytes, csr_bytes);
    EXPECT_EQ(costs[0].bytes_moved, csr_bytes + vectors);
    EXPECT_DOUBLE_EQ(costs[0].overhead, 0.0);

    const EllpackR<double> E = ellpack_r_from_csr(A);
    EXPECT_EQ(costs[1].format, SpmvFormat::ellpack_r);
    EXPECT_EQ(costs[1].bytes, E.bytes());
    const auto ellpack_at = [&E](Index i, Index j) { return static_cast<std::size_t>(j) * E.padded_rows + i; };
    const std::uint64_t ellpack_sectors = simulated_sectors(E.padded_rows, E.row_length, 8, ellpack_at) +
                                          simulated_sectors(E.padded_rows, E.row_length, 4, ellpack_at);
    EXPECT_EQ(costs[1].bytes_moved, 32 * ellpack_sectors + E.row_length.size() * 4 + vectors);

    const Pjds<double> P = pjds_from_csr(A);
    EXPECT_EQ(costs[2].format, SpmvFormat::pjds);
    EXPECT_EQ(costs[2].bytes, P.bytes());
    const auto pjds_at = [&P](Index i, Index j) { return static_cast<std::size_t>(P.col_start[j]) + i; };
    const std::uint64_t pjds_sectors = simulated_sectors(P.padded_rows, P.row_length, 8, pjds_at) +
                                       simulated_sectors(P.padded_rows, P.row_length, 4, pjds_at);
    // pJDS diagonals start at multiples of 32 rows, so the model's aligned groups are the real sectors.
    EXPECT_EQ(costs[2].bytes_moved, 32 * pjds_sectors + P.row_length.size() * 4 + vectors);
    for (const FormatCost& c : costs) {
      if (A.nnz() == 0) continue;
      EXPECT_DOUBLE_EQ(c.code_balance, static_cast<double>(c.bytes_moved) / (2.0 * A.nnz()));
    }
  }
}

TEST(SpmvFormatCosts, FloatValuesHalveTheValueBytes) {
  PoissonParams p;
  p.size = {10, 10, 10};
  const CsrMatrix<double> A = poisson_matrix(p);
  const std::vector<FormatCost> as_double = spmv_format_costs(A), as_float = spmv_format_costs(A, 4);
  EXPECT_EQ(as_double[0].bytes - as_float[0].bytes, static_cast<std::uint64_t>(A.nnz()) * 4);
  EXPECT_EQ(as_float[1].bytes, ellpack_r_from_csr(cast_values<float>(A)).bytes());
  EXPECT_EQ(as_float[2].bytes, pjds_from_csr(cast_values<float>(A)).bytes());
}

TEST(SpmvFormatChoice, AutoPicksTheFewestBytesAndAConcreteRequestIsKept) {
  // One dense row makes ELLPACK-R pad every row to n; sorted pJDS pads only the first block.
  const CsrMatrix<double> A = irregular(400, 5);
  const std::vector<std::vector<FormatCost>> levels = {spmv_format_costs(A)};
  const FormatChoice automatic = choose_spmv_format(SpmvFormat::automatic, levels, {3});
  std::uint64_t fewest = levels[0][0].bytes_moved;
  for (const FormatCost& c : levels[0]) fewest = std::min(fewest, c.bytes_moved);
  for (const FormatCost& c : levels[0]) {
    if (c.format != automatic.format) continue;
    EXPECT_EQ(c.bytes_moved, fewest);
  }
  EXPECT_NE(automatic.format, SpmvFormat::ellpack_r);
  EXPECT_NE(automatic.reason.find("ellpack-r"), std::string::npos) << automatic.reason;
  for (SpmvFormat f : {SpmvFormat::csr, SpmvFormat::ellpack_r, SpmvFormat::pjds})
    EXPECT_EQ(choose_spmv_format(f, levels, {3}).format, f);
  EXPECT_THROW(choose_spmv_format(SpmvFormat::automatic, levels, {3, 1}), Error);
}

// Over ranks on GPUs csr is left out of `auto` (amgsolve/solver.cpp): the cheaper of the other two, said so.
TEST(SpmvFormatChoice, CsrLeftOutPicksTheCheaperOfTheOthers) {
  PoissonParams p;  // regular rows: csr moves its row pointers, the others their row lengths
  p.size = {20, 20, 20};
  const std::vector<std::vector<FormatCost>> levels = {spmv_format_costs(poisson_matrix(p))};
  const FormatChoice choice = choose_spmv_format(SpmvFormat::automatic, levels, {3}, /*csr_allowed=*/false);
  const std::uint64_t ellpack_r = levels[0][1].bytes_moved, pjds = levels[0][2].bytes_moved;
  EXPECT_EQ(choice.format, ellpack_r <= pjds ? SpmvFormat::ellpack_r : SpmvFormat::pjds);
  EXPECT_NE(choice.reason.find("csr"), std::string::npos) << choice.reason;
  EXPECT_NE(choice.reason.find("(left out)"), std::string::npos) << choice.reason;
  EXPECT_EQ(choose_spmv_format(SpmvFormat::csr, levels, {3}, false).format, SpmvFormat::csr);  // asked for
}

}  // namespace
}  // namespace amgsolve
