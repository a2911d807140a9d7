// MAGNUS (spgemm/magnus/): the chunk counts of section 3.5 against a brute-force minimisation of
// eq. (2), and every row category (sort, dense, fine level, coarse level) against Gustavson and a dense
// product, with cache sizes shrunk so the fine and coarse levels run on small matrices.
#include <omp.h>

#include <bit>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string>

#include "spgemm/accumulator.hpp"
#include "spgemm/bitonic_sort.hpp"
#include "spgemm/magnus/magnus.hpp"
#include "spgemm/magnus/shared_columns.hpp"
#include "spgemm/registry.hpp"
#include "test_support.hpp"
#include "textbook_gustavson.hpp"

namespace amgsolve {
namespace {

using magnus::CacheGeometry;
using magnus::ChunkParameters;

// Eq. (2) for n chunks over m columns.
double fine_level_bytes(double m, double n, double s_dense, double s_chunk) { return m * s_dense / n + n * s_chunk; }

TEST(MagnusParameters, FineChunkCountMinimisesTheCachedStorage) {
  const CacheGeometry cache{std::size_t{2} << 20, 64};
  const double s_chunk = 4 + 4 + 2 * 64;
  for (std::uint64_t cols : {std::uint64_t{1000}, std::uint64_t{1} << 16, std::uint64_t{3} << 20, std::uint64_t{1} << 26})
    for (std::size_t s_dense : {std::size_t{1}, std::size_t{9}, std::size_t{12}}) {
      const ChunkParameters p = magnus::chunk_parameters(cols, s_dense, cache);
      ASSERT_FALSE(p.coarse) << cols;  // 2 MiB of L2 holds the fine level up to about 2^29 columns
      EXPECT_EQ(p.columns, std::bit_ceil(cols));
      double best = 1e300;
      std::uint64_t best_n = 0;
      for (std::uint64_t n = 1; n <= p.columns; n *= 2) {
        const double s = fine_level_bytes(static_cast<double>(p.columns), static_cast<double>(n),
                                          static_cast<double>(s_dense), s_chunk);
        if (s < best) {
          best = s;
          best_n = n;
        }
      }
      EXPECT_EQ(p.fine_chunks, best_n) << cols << " columns, s_dense " << s_dense;
      EXPECT_EQ(std::uint64_t{1} << p.fine_shift, p.columns / p.fine_chunks);
      EXPECT_DOUBLE_EQ(p.fine_level_bytes, best);
    }
}

TEST(MagnusParameters, CoarseLevelStartsWhereTheFineLevelOverflowsL2) {
  const CacheGeometry cache{1024, 64};
  const double s_chunk = 136, s_dense = 9;
  // Eq. (5): m_CmaxL2 = floor_pow2(1024^2 / (4 * 9 * 136)) = floor_pow2(214.2) = 128.
  const ChunkParameters p = magnus::chunk_parameters(4096, 9, cache);
  ASSERT_TRUE(p.coarse);
  EXPECT_EQ(p.coarse_shift, 7);
  EXPECT_EQ(p.coarse_chunks, 4096u / 128u);  // eq. (7)
  // Eq. (6): n_fine = round_pow2(sqrt(128 * 9 / 136)) = round_pow2(2.9) = 4.
  EXPECT_EQ(p.fine_chunks, 4u);
  EXPECT_EQ(p.fine_shift, 5);
  EXPECT_LE(p.fine_level_bytes, 1024.0);
  // Below the threshold the fine level alone suffices.
  EXPECT_FALSE(magnus::chunk_parameters(64, 9, cache).coarse);
  EXPECT_GT(2 * std::sqrt(4096 * s_dense * s_chunk), 1024.0);
}

struct Case {
  const char* name;
  std::size_t l2;
  Offset sort_threshold;
  bool streaming;
  bool vector_sort = true;
  double products_per_cursor_visit = 1e30;  // segmented rows off unless a case asks for them
};

class MagnusCategories : public ::testing::TestWithParam<Case> {};

TEST_P(MagnusCategories, MatchGustavsonBitwiseAndTheDenseProduct) {
  const Case c = GetParam();
  magnus::Options o;
  o.cache = {c.l2, 64};
  o.sort_threshold = c.sort_threshold;
  o.streaming_stores = c.streaming;
  o.vector_sort = c.vector_sort;
  o.batch_bytes = 4096;  // several coarse batches
  o.products_per_cursor_visit = c.products_per_cursor_visit;
  // Wide B (4096 columns) with empty rows and columns, plus a dense row in A.
  CsrMatrix<double> A = test::random_sparse(300, 200, 0.08, 11, {5, 17}, {3});
  const CsrMatrix<double> B = test::random_sparse(200, 4096, 0.02, 12, {9}, {0, 4095});
  std::vector<Triplet<double>> t;
  for (Index i = 0; i < A.rows; ++i)
    for (Offset k = A.row_begin(i); k < A.row_end(i); ++k) t.push_back({i, A.col[k], A.val[k]});
  for (Index j = 0; j < A.cols; ++j) t.push_back({42, j, 0.5});
  A = csr_from_triplets(A.rows, A.cols, std::move(t));

  const CsrMatrix<double> G = test::textbook_gustavson(A, B);
  SpgemmStats stats;
  magnus::RowCategories cats, symbolic_cats;
  CsrMatrix<double> C;
  // C written directly (it fits the last-level cache), then streamed (a cache of 0 bytes).
  for (const std::size_t llc : {std::size_t{32} << 20, std::size_t{0}}) {
    o.cache.llc_bytes = llc;
    C = magnus::multiply(A, B, o, stats, &cats, &symbolic_cats);
    ASSERT_TRUE(is_valid_csr(C));
    EXPECT_TRUE(C.row_ptr == G.row_ptr) << "last-level cache " << llc;
    EXPECT_TRUE(C.col == G.col) << "last-level cache " << llc;
    EXPECT_TRUE(C.val == G.val) << "last-level cache " << llc;  // same summation order: bitwise equal
    EXPECT_EQ(stats.nnz, C.nnz());
  }
  EXPECT_LT((test::to_dense(C) - test::to_dense(A) * test::to_dense(B)).cwiseAbs().maxCoeff(), 1e-12);
  std::printf("%s: rows sort %lld, dense %lld, segmented %lld, fine %lld, coarse %lld\n", c.name,
              static_cast<long long>(cats.sort), static_cast<long long>(cats.dense),
              static_cast<long long>(cats.segmented), static_cast<long long>(cats.fine),
              static_cast<long long>(cats.coarse));
  EXPECT_EQ(cats.sort + cats.dense + cats.segmented + cats.fine + cats.coarse, A.rows);
  const std::string name = c.name;
  if (name == "fine") {
    EXPECT_GT(cats.fine, 0);
  } else if (name.starts_with("segmented")) {
    EXPECT_GT(cats.segmented, 0);
  } else if (name.starts_with("coarse")) {
    EXPECT_GT(cats.coarse, 0);
    if (name == "coarse_symbolic_segmented") {
      EXPECT_GT(symbolic_cats.segmented, 0);
    }
  } else if (name == "dense") {
    EXPECT_GT(cats.dense, 0);
  } else {
    EXPECT_EQ(cats.sort, A.rows);  // every row is below a threshold of 100000 products
  }
}

// l2 16 KiB: fine level alone (dense capacity 1008 columns < the rows' ranges), or segments of 512
// columns where rows may be segmented (~1300 products, 16 rows of B, 8 segments: 10 products per visit);
// 1 KiB: coarse level; 512 bytes with segmented rows: the symbolic phase's rows (a bitmap of 2048
// columns, 2 segments) are segmented, the numeric phase's go to the coarse level.
INSTANTIATE_TEST_SUITE_P(AllPaths, MagnusCategories,
                         ::testing::Values(Case{"sort", std::size_t{1} << 20, 100000, true},
                                           Case{"dense", std::size_t{1} << 20, 8, true},
                                           Case{"fine", std::size_t{16} << 10, 8, true},
                                           Case{"segmented", std::size_t{16} << 10, 8, true, true, 8},
                                           Case{"segmented_std_sort", std::size_t{16} << 10, 8, true, false, 8},
                                           Case{"coarse_symbolic_segmented", 512, 8, true, true, 8},
                                           Case{"coarse", 1024, 8, true},
                                           Case{"coarse_plain_stores", 1024, 8, false},
                                           Case{"coarse_sorted_chunks", 1024, 64, true},
                                           Case{"sort_with_std_sort", std::size_t{1} << 20, 100000, true, false},
                                           Case{"coarse_chunks_std_sort", 1024, 64, true, false}),
                         [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

// Wide, sparse rows as in MAGNUS's uniform random set (Fig. 9): the numeric phase cuts them into more
// fine chunks than section 3.5's count, so that the chunks fit the register accumulator (at 2^20
// columns with 16-bit keys, neighbouring chunks two at a time), and takes the branch-free dense loops
// where columns repeat unpredictably. With the AVX-512 kernels and without, C
// equals gustavson's: same pattern, same summation order, so equal values (a dense reference would need
// 32 x 2^22 doubles). Both runs stream C (a last-level cache of 0 bytes: the dense and segmented rows
// are streamed, the fine ones written directly).
TEST(MagnusWideRows, RegisterSizedChunksMatchGustavson) {
  const auto uniform = [](Index rows, Index cols, int per_row, std::uint64_t seed) {
    std::vector<Triplet<double>> t;
    for (Index i = 0; i < rows; ++i)
      for (int e = 0; e < per_row; ++e) {
        const std::uint64_t key = static_cast<std::uint64_t>(i) * static_cast<std::uint64_t>(per_row) + e;
        // Some explicit (negative) zeros. Compared by value below: gustavson's own paths differ in the sign
        // of a sum of zeros (its unmarked path starts sums at +0.0).
        t.push_back({i, static_cast<Index>(seeded_hash(seed, key) % static_cast<std::uint64_t>(cols)),
                     key % 97 == 0 ? -0.0 : seeded_uniform(seed + 1, key) - 0.5});
      }
    return csr_from_triplets(rows, cols, std::move(t));
  };
  const CsrMatrix<double> A = uniform(32, 256, 256, 5);
  // Numeric categories: 2^16 columns dense, 2^18 segmented (4 segments of 2^16), 2^20-2^24 fine; the
  // symbolic phase's (a bitmap, 8 times as wide) are dense up to 2^22 and segmented at 2^24. The
  // symbolic loop is branch-free at 2^16-2^20 (at 2^20 only for its few words per product).
  for (const Index cols : {Index{1} << 16, Index{1} << 18, Index{1} << 20, Index{1} << 22, Index{1} << 24}) {
    const CsrMatrix<double> B = uniform(256, cols, 256, 6);
    const CsrMatrix<double> reference = test::textbook_gustavson(A, B);
    for (const bool vector : {true, false})
      for (const bool single_columns : {false, true}) {
        magnus::Options o;
        o.cache = {std::size_t{2} << 20, 64, 0};
        o.vector_sort = vector;
        o.single_columns = single_columns;
        SpgemmStats stats;
        magnus::RowCategories cats, symbolic_cats;
        const CsrMatrix<double> C = magnus::multiply(A, B, o, stats, &cats, &symbolic_cats);
        const std::string where = std::to_string(cols) + " columns, vector " + std::to_string(vector) +
                                  ", shortcut " + std::to_string(single_columns);
        ASSERT_TRUE(is_valid_csr(C));
        EXPECT_TRUE(C.row_ptr == reference.row_ptr) << where;
        EXPECT_TRUE(C.col == reference.col) << where;
        EXPECT_TRUE(C.val == reference.val) << where;
        EXPECT_EQ(cols == (1 << 16) ? cats.dense : cols == (1 << 18) ? cats.segmented : cats.fine, A.rows) << where;
        // The symbolic categories of the whole product (on B's shared columns they are A B_shared's).
        if (!single_columns) {
          EXPECT_EQ(cols == (1 << 24) ? symbolic_cats.segmented : symbolic_cats.dense, A.rows) << where;
        }
      }
  }
}

// The AVX-512 networks against std::sort for every length they handle (padding of partial registers),
// with duplicates, zero and the largest key (equal to the padding); longer inputs take std::sort.
TEST(SortAccumulator, BitonicNetworkSortsKeysLikeStdSort) {
  RecordProperty("avx512", vector_sort_available() ? "yes" : "no (std::sort path only)");
  for (std::size_t n = 0; n <= kVectorSortMaxKeys + 3; ++n)
    for (std::uint64_t seed = 0; seed < 20; ++seed) {
      std::vector<std::uint64_t> keys(n);
      for (std::size_t t = 0; t < n; ++t) {
        const std::uint64_t h = seeded_hash(seed, t);
        keys[t] = h % 7 == 0 ? ~std::uint64_t{0} : h % 11 == 0 ? 0 : (h % 40) << 32 | (h >> 40);
      }
      std::vector<std::uint64_t> expected = keys;
      std::sort(expected.begin(), expected.end());
      sort_keys(keys.data(), n);
      ASSERT_EQ(keys, expected) << "n = " << n << ", seed " << seed;
    }
}

// The 32-bit network sorts column indices: up to 128 of them, distinct (as a dense accumulator lists
// them) or not, including 0 and the largest Index.
// n column indices from the seed: the largest Index, 0, and either few distinct ones (even seeds: many
// duplicates) or spread over the whole range.
std::vector<std::int32_t> columns_to_sort(std::size_t n, std::uint64_t seed) {
  std::vector<std::int32_t> cols(n);
  for (std::size_t t = 0; t < n; ++t) {
    const std::uint64_t h = seeded_hash(seed, t);
    cols[t] = h % 13 == 0 ? std::numeric_limits<std::int32_t>::max()
              : h % 11 == 0 ? 0
              : seed % 2 == 0 ? static_cast<std::int32_t>(h % 50)
                              : static_cast<std::int32_t>(h >> 33);
  }
  return cols;
}

TEST(SortAccumulator, BitonicNetworkSortsColumnsLikeStdSort) {
  RecordProperty("avx512", vector_sort_available() ? "yes" : "no (std::sort path only)");
  for (std::size_t n = 0; n <= kVectorSortMaxColumns + 3; ++n)
    for (std::uint64_t seed = 0; seed < 20; ++seed) {
      std::vector<std::int32_t> cols = columns_to_sort(n, seed + 100);
      std::vector<std::int32_t> expected = cols;
      std::sort(expected.begin(), expected.end());
      sort_columns(cols.data(), n);
      ASSERT_EQ(cols, expected) << "n = " << n << ", seed " << seed;
    }
}

// The AVX2 network (what CPUs without AVX-512 sort columns with), called directly so that it runs on AVX-512
// CPUs too: every length up to its 64 lanes (8 registers, partial ones padded), duplicates, 0 and the
// largest Index; longer inputs are refused and left as they were.
TEST(SortAccumulator, Avx2NetworkSortsColumnsLikeStdSort) {
  std::vector<std::int32_t> probe(1, 0);
  if (!sort_columns_avx2(probe.data(), probe.size())) GTEST_SKIP() << "this CPU lacks AVX2: no AVX2 network to test";
  for (std::size_t n = 0; n <= kAvx2SortMaxColumns + 3; ++n)
    for (std::uint64_t seed = 0; seed < 40; ++seed) {
      std::vector<std::int32_t> cols = columns_to_sort(n, seed + 300);
      std::vector<std::int32_t> expected = cols;
      std::sort(expected.begin(), expected.end());
      const std::vector<std::int32_t> given = cols;
      // Between guards: a partial register's overlapping access must stay within the n columns.
      constexpr std::int32_t kGuard = -3;
      std::vector<std::int32_t> guarded{kGuard};
      guarded.insert(guarded.end(), cols.begin(), cols.end());
      guarded.push_back(kGuard);
      const bool sorted = sort_columns_avx2(guarded.data() + 1, n);
      ASSERT_EQ(sorted, n <= kAvx2SortMaxColumns) << "n = " << n;
      ASSERT_TRUE(guarded.front() == kGuard && guarded.back() == kGuard) << "written outside, n = " << n;
      cols.assign(guarded.begin() + 1, guarded.end() - 1);
      ASSERT_EQ(cols, sorted ? expected : given) << "n = " << n << ", seed " << seed;
    }
}

// The columns and values written, against `expected`'s entries in order (values bit for bit: -0.0 is not
// +0.0), and kUnwritten past them.
constexpr std::int32_t kUnwritten = -7;
void expect_entries(const std::vector<std::int32_t>& cols, const std::vector<double>& vals, std::int32_t written,
                    const std::map<std::int32_t, double>& expected) {
  ASSERT_EQ(static_cast<std::size_t>(written), expected.size());
  std::size_t t = 0;
  for (const auto& [col, val] : expected) {
    ASSERT_EQ(cols[t], col) << "entry " << t;
    ASSERT_EQ(std::bit_cast<std::uint64_t>(vals[t]), std::bit_cast<std::uint64_t>(val)) << "entry " << t;
    ++t;
  }
  for (; t < cols.size(); ++t)
    ASSERT_TRUE(cols[t] == kUnwritten && vals[t] == kUnwritten) << "written past the entries";
}

// accumulate_in_registers on items (columns below 2^column_bits), against `expected` (the entries of C,
// columns with base added, each sum in stream order).
void expect_register_accumulator_gives(const std::vector<ColumnValue<double>>& items, std::int32_t base,
                                       const std::map<std::int32_t, double>& expected, bool vector,
                                       int column_bits = kRegisterAccumulatorColumnBits) {
  const std::size_t n = items.size();
  std::vector<std::int32_t> cols(n + 1, kUnwritten);
  std::vector<double> vals(n + 1, kUnwritten);
  const std::int32_t written =
      accumulate_in_registers(items.data(), n, base, cols.data(), vals.data(), vector, column_bits);
  SCOPED_TRACE("vector " + std::to_string(vector) + ", column bits " + std::to_string(column_bits));
  expect_entries(cols, vals, written, expected);
}

// n products with columns below 2^column_bits drawn to repeat (from 3 values, n / 3 + 1, or all), the
// largest and 0 among them, each value the stream's; `expected` gets their in-order sums (+ base).
std::vector<ColumnValue<double>> random_chunk(std::size_t n, int column_bits, std::uint64_t seed, std::int32_t base,
                                              std::map<std::int32_t, double>& expected) {
  const std::int32_t largest = (std::int32_t{1} << column_bits) - 1;
  std::vector<ColumnValue<double>> items(n);
  for (std::size_t t = 0; t < n; ++t) {
    const std::uint64_t h = seeded_hash(seed + 300, t);
    const std::uint64_t values = n / 3 + 1;
    const auto col = seed % 3 == 0   ? static_cast<std::int32_t>(h % 3)
                     : seed % 3 == 1 ? static_cast<std::int32_t>(h % values * static_cast<std::uint64_t>(largest) /
                                                                 values)
                     : h % 17 == 0   ? largest
                     : h % 13 == 0   ? 0
                                     : static_cast<std::int32_t>((h >> 20) % (static_cast<std::uint64_t>(largest) + 1));
    items[t] = {col, seeded_uniform(seed, t) - 0.5};
    auto [it, fresh] = expected.try_emplace(base + col, items[t].val);
    if (!fresh) it->second += items[t].val;
  }
  return items;
}

// The register accumulator against a std::map that sums each column's values in stream order (so the
// sums match bitwise): every length it takes (1, 2 and 4 registers, partial ones), columns drawn from
// 3 values (long runs: the scalar sum past 8 products of a column), from n / 3 + 1 values (runs of a
// few products: summed in registers), from all (mostly distinct, including 0 and the largest
// allowed), on both paths, with 32-bit keys (columns below 2^25) and 16-bit ones (below 2^10, where the
// largest column's key at position 63 is the padding's). Nothing is written past the distinct entries.
TEST(SortAccumulator, RegisterAccumulatorSumsRepeatedColumnsInStreamOrder) {
  RecordProperty("avx512", vector_sort_available() ? "yes" : "no (std::sort path twice)");
  constexpr std::int32_t kBase = 1000;
  for (const int column_bits : {kRegisterAccumulatorColumnBits, kNarrowKeyColumnBits})
    for (const bool vector : {true, false})
      for (std::size_t n = 1; n <= kRegisterAccumulatorMax; ++n)
        for (std::uint64_t seed = 0; seed < 12; ++seed) {
          std::map<std::int32_t, double> expected;
          const std::vector<ColumnValue<double>> items = random_chunk(n, column_bits, seed, kBase, expected);
          SCOPED_TRACE("n = " + std::to_string(n) + ", seed " + std::to_string(seed));
          expect_register_accumulator_gives(items, kBase, expected, vector, column_bits);
        }
}

// 16-bit keys where the last product's key is all ones (column 1023, position 63 of 64) and where a
// chunk shorter than 64 ends in column 1023, once (its value -0.0) or twice: the padding (all ones too)
// must neither merge with that column nor be written. Alone (16-bit keys from 33 products on) and as
// either chunk of a pair with a chunk of 17 products (16-bit keys from 17 on, one register for up to 32).
TEST(SortAccumulator, NarrowKeysKeepTheLargestColumnApartFromPadding) {
  RecordProperty("avx512", vector_sort_available() ? "yes" : "no (std::sort path twice)");
  constexpr std::int32_t kLargest = (1 << kNarrowKeyColumnBits) - 1, kSecondBase = 1 << 26;
  for (const std::size_t n : {17, 31, 32, 33, 48, 63, 64})
    for (const std::size_t largest_at : {n - 1, n - 2, std::size_t{0}})
      for (const bool twice : {false, true}) {
        std::vector<ColumnValue<double>> items(n);
        for (std::size_t t = 0; t < n; ++t) {
          const bool largest = t == largest_at || (twice && t == (largest_at + 1) % n);
          // Alone, the largest column's value is -0.0: a sum with anything (a padding lane's 0.0) turns it +0.0.
          const double value = largest && !twice ? -0.0 : 1.0 / static_cast<double>(t + 3);
          items[t] = {largest ? kLargest : static_cast<std::int32_t>(t * 7 % 1000), value};
        }
        const auto entries_from = [&](std::int32_t base, std::map<std::int32_t, double>& expected) {
          for (const ColumnValue<double>& item : items) {
            auto [it, fresh] = expected.try_emplace(base + item.col, item.val);
            if (!fresh) it->second += item.val;
          }
        };
        SCOPED_TRACE("n = " + std::to_string(n) + ", largest at " + std::to_string(largest_at) + ", twice " +
                     std::to_string(twice));
        std::map<std::int32_t, double> alone;
        entries_from(0, alone);
        for (const bool vector : {true, false}) {
          expect_register_accumulator_gives(items, 0, alone, vector, kNarrowKeyColumnBits);
          for (const bool first : {true, false}) {
            std::map<std::int32_t, double> expected;
            const auto partner = random_chunk(17, kNarrowKeyColumnBits, n, first ? kSecondBase : 0, expected);
            entries_from(first ? 0 : kSecondBase, expected);
            std::vector<std::int32_t> cols(n + 18, kUnwritten);
            std::vector<double> vals(n + 18, kUnwritten);
            const std::int32_t written =
                first ? accumulate_two_in_registers(items.data(), n, 0, partner.data(), 17, kSecondBase, cols.data(),
                                                    vals.data(), vector, kNarrowKeyColumnBits)
                      : accumulate_two_in_registers(partner.data(), 17, 0, items.data(), n, kSecondBase, cols.data(),
                                                    vals.data(), vector, kNarrowKeyColumnBits);
            SCOPED_TRACE(std::string(first ? "first" : "second") + " of a pair, vector " + std::to_string(vector));
            expect_entries(cols, vals, written, expected);
          }
        }
      }
}

// Two chunks at once (accumulate_two_in_registers) give chunk a's entries then b's, exactly those of
// the in-order sums: sizes on both sides of 16 and 32, and 64 (one, two or four registers each; the
// pair path takes 17 to 64), 32- and 16-bit keys, both paths; nothing written past them.
TEST(SortAccumulator, TwoChunksAtOnceGiveEachChunksEntriesInTurn) {
  RecordProperty("avx512", vector_sort_available() ? "yes" : "no (std::sort path twice)");
  constexpr std::int32_t kBaseA = 0, kBaseB = 1 << 26;
  for (const int column_bits : {kRegisterAccumulatorColumnBits, kNarrowKeyColumnBits})
    for (const std::size_t n_a : {1, 16, 17, 31, 32, 33, 57, 64})
      for (const std::size_t n_b : {1, 16, 17, 32, 33, 50, 63, 64})
        for (std::uint64_t seed = 0; seed < 6; ++seed) {
          std::map<std::int32_t, double> expected;
          const auto a = random_chunk(n_a, column_bits, seed, kBaseA, expected);
          const auto b = random_chunk(n_b, column_bits, seed + 50, kBaseB, expected);
          for (const bool vector : {true, false}) {
            std::vector<std::int32_t> cols(n_a + n_b + 1, kUnwritten);
            std::vector<double> vals(n_a + n_b + 1, kUnwritten);
            const std::int32_t written = accumulate_two_in_registers(a.data(), n_a, kBaseA, b.data(), n_b, kBaseB,
                                                                     cols.data(), vals.data(), vector, column_bits);
            SCOPED_TRACE("n_a " + std::to_string(n_a) + ", n_b " + std::to_string(n_b) + ", seed " +
                         std::to_string(seed) + ", column bits " + std::to_string(column_bits) + ", vector " +
                         std::to_string(vector));
            expect_entries(cols, vals, written, expected);
          }
        }
}

// Columns of one or two products only (the pairs path: each pair's first lane adds its second): every
// length, pairs wherever the sort puts them (across the 8- and 16-lane bounds among them), the two
// products of a pair apart in the stream. Against the in-order sums of a std::map, on both paths, with
// 32- and 16-bit keys.
TEST(SortAccumulator, RegisterAccumulatorSumsPairsInStreamOrder) {
  RecordProperty("avx512", vector_sort_available() ? "yes" : "no (std::sort path twice)");
  for (std::size_t n = 2; n <= kRegisterAccumulatorMax; ++n)
    for (std::uint64_t seed = 0; seed < 12; ++seed) {
      // Distinct columns in stream order, some of the first half's (by hash) taken again in place of
      // the last ones.
      std::vector<std::int32_t> columns;
      for (std::int32_t c = 0; columns.size() < n; ++c) columns.push_back(c * 5 + static_cast<std::int32_t>(seed));
      for (std::size_t t = 0, twice = 0; twice < n / 3 && t < n / 2; ++t)
        if (seeded_hash(seed + 900, t) % 3 == 0) columns[n - 1 - twice++] = columns[t];
      std::vector<ColumnValue<double>> items(n);
      std::map<std::int32_t, double> expected;
      std::map<std::int32_t, int> products_of;
      for (std::size_t t = 0; t < n; ++t) {
        items[t] = {columns[t], 1.0 / static_cast<double>(3 + 7 * t + seed)};
        ++products_of[columns[t]];
        auto [it, fresh] = expected.try_emplace(columns[t], items[t].val);
        if (!fresh) it->second += items[t].val;
      }
      ASSERT_TRUE(std::all_of(products_of.begin(), products_of.end(), [](const auto& c) { return c.second <= 2; }));
      SCOPED_TRACE("n = " + std::to_string(n) + ", seed " + std::to_string(seed));
      for (const bool vector : {true, false})
        for (const int column_bits : {kRegisterAccumulatorColumnBits, kNarrowKeyColumnBits})
          expect_register_accumulator_gives(items, 0, expected, vector, column_bits);
    }
}

// Runs of one column of exactly 1, 2, 7, 8, 9, 16 and 17 products (the register path sums pairs in one
// step, runs up to 8 in several, beyond it the scalar one), their sorted places starting on and across
// the 8- and 16-lane register bounds up to the last lanes of 16, 32 and 64 (with no bigger column
// after the run, or two); the products of the runs interleaved in the stream, so that a sum in any order
// but the stream's differs in its last bits. Against the in-order sums of a std::map, on both paths,
// with 32- and 16-bit keys.
TEST(SortAccumulator, RegisterAccumulatorRunsAcrossRegisterBounds) {
  RecordProperty("avx512", vector_sort_available() ? "yes" : "no (std::sort path twice)");
  for (const std::size_t run : {1, 2, 7, 8, 9, 16, 17})
    for (const std::size_t before : {0, 5, 7, 8, 14, 15, 16, 30, 31, 46, 47, 62})  // distinct columns sorted first
      for (const std::size_t after : {0, 2}) {  // bigger columns after the run
        const std::size_t n = before + run + after;
        if (n > kRegisterAccumulatorMax) continue;
        std::vector<ColumnValue<double>> items;
        std::map<std::int32_t, double> expected;
        const auto add = [&](std::int32_t col, double val) {
          items.push_back({col, val});
          auto [it, fresh] = expected.try_emplace(col, val);
          if (!fresh) it->second += val;
        };
        // Stream: the run's products alternate with the smaller columns; the bigger ones come last (all
        // below 2^10, so that 16-bit keys hold them too).
        std::size_t others = 0;
        for (std::size_t t = 0; t < run; ++t) {
          add(600, 1.0 / static_cast<double>(3 + 7 * t));
          if (others < before) add(static_cast<std::int32_t>(others++), 0.1);
        }
        while (others < before) add(static_cast<std::int32_t>(others++), 0.1);
        for (std::size_t t = 0; t < after; ++t)
          add(static_cast<std::int32_t>(1000 + t), 0.5 / static_cast<double>(t + 1));
        SCOPED_TRACE("run " + std::to_string(run) + ", before " + std::to_string(before) + ", after " +
                     std::to_string(after));
        for (const bool vector : {true, false})
          for (const int column_bits : {kRegisterAccumulatorColumnBits, kNarrowKeyColumnBits})
            expect_register_accumulator_gives(items, 0, expected, vector, column_bits);
      }
}

// The marker scan lists exactly the columns stamped in the window, ascending, on both paths (AVX-512
// and scalar): every window length around the 16-lane step, windows starting anywhere, and stamps
// that occupy none, some or all of the window. Nothing is written past the list (ListRoom::exact) or
// past its padding (ListRoom::padded).
TEST(SortAccumulator, MarkerScanListsTheStampedColumnsOnBothPaths) {
  RecordProperty("avx512", vector_sort_available() ? "yes" : "no (scalar path twice)");
  constexpr Index kLength = 200, kStamp = 7;
  for (std::uint64_t seed = 0; seed < 12; ++seed) {
    std::vector<Index> marker(kLength);
    for (Index j = 0; j < kLength; ++j) {
      const std::uint64_t h = seeded_hash(seed + 300, static_cast<std::uint64_t>(j));
      const bool stamped = seed == 0 || (seed > 1 && h % (seed + 1) == 0);  // all, none, or some
      marker[j] = stamped ? kStamp : static_cast<Index>(h % 5);
    }
    for (Index first : {0, 1, 15, 16, 17, 63}) {
      for (Index window = 0; first + window <= kLength && window <= 70; ++window) {
        std::vector<Index> expected;
        for (Index j = first; j < first + window; ++j)
          if (marker[j] == kStamp) expected.push_back(j);
        for (bool vector : {true, false})
          for (ListRoom room : {ListRoom::exact, ListRoom::padded}) {
            // Room for the window (and the padding where allowed), then a guard that must stay untouched.
            const std::size_t room_size =
                static_cast<std::size_t>(window) + (room == ListRoom::padded ? kListPadding : 0);
            constexpr std::size_t kGuard = 24;
            std::vector<Index> cols(room_size + kGuard, -99);
            const Index n = list_marked_columns(marker.data(), kStamp, first, window, cols.data(), vector, room);
            const std::string where = "seed " + std::to_string(seed) + ", first " + std::to_string(first) +
                                      ", window " + std::to_string(window) + (vector ? ", vector" : ", scalar") +
                                      (room == ListRoom::padded ? ", padded" : ", exact");
            // Padded: at most kListPadding entries past the list (gustavson reserves that much past a row's
            // products, which can be far fewer than the window's columns).
            const std::size_t written_up_to =
                static_cast<std::size_t>(n) + (room == ListRoom::padded ? kListPadding : 0);
            for (std::size_t e = written_up_to; e < cols.size(); ++e)
              ASSERT_EQ(cols[e], -99) << where << ", entry " << e;
            cols.resize(static_cast<std::size_t>(std::max<Index>(n, 0)));
            ASSERT_EQ(cols, expected) << where;
          }
      }
    }
  }
}

// The scan with the gather fused in moves exactly the stamped columns' sums out, in column order, and
// leaves every sum of the window zero and every sum outside it untouched; nothing is written past the
// lists (or their padding). Double and float, both paths, both rooms, windows around the 16-lane step.
template <class Value>
void check_marked_entries_are_moved_out() {
  constexpr Index kLength = 120, kStamp = 3;
  constexpr std::size_t kGuard = 24;
  for (std::uint64_t seed = 0; seed < 6; ++seed) {
    std::vector<Index> marker(kLength);
    std::vector<Value> sums(kLength + kGuard, Value{7});  // past kLength: a guard that must stay 7
    for (Index j = 0; j < kLength; ++j) {
      const std::uint64_t h = seeded_hash(seed + 500, static_cast<std::uint64_t>(j));
      const bool stamped = seed == 0 || (seed > 1 && h % (seed + 1) == 0);  // all, none, or some
      marker[j] = stamped ? kStamp : static_cast<Index>(h % 3);
      sums[j] = stamped ? static_cast<Value>(1 + h % 1000) : Value{0};  // unstamped sums are zero
    }
    for (Index start : {0, 5, 16, 33, -1}) {  // -1: windows that end at the last sum
      for (Index window = 0; window <= 70; ++window) {
        const Index first = start >= 0 ? start : kLength - window;
        if (first + window > kLength) break;
        std::vector<Index> expected_cols;
        std::vector<Value> expected_vals;
        for (Index j = first; j < first + window; ++j)
          if (marker[j] == kStamp) expected_cols.push_back(j), expected_vals.push_back(sums[j]);
        for (bool vector : {true, false})
          for (ListRoom room : {ListRoom::exact, ListRoom::padded}) {
            const std::size_t room_size =
                static_cast<std::size_t>(window) + (room == ListRoom::padded ? kListPadding : 0);
            std::vector<Index> cols(room_size + kGuard, -99);
            std::vector<Value> vals(room_size + kGuard, Value{-99});
            std::vector<Value> moved = sums;
            const Index n = list_marked_entries(marker.data(), kStamp, first, window, moved.data(), cols.data(),
                                                vals.data(), vector, room);
            const std::string where = "seed " + std::to_string(seed) + ", first " + std::to_string(first) +
                                      ", window " + std::to_string(window) + (vector ? ", vector" : ", scalar") +
                                      (room == ListRoom::padded ? ", padded" : ", exact");
            // Padded: at most kListPadding entries past the list (gustavson reserves that much past a row's
            // products, which can be far fewer than the window's columns).
            const std::size_t written_up_to =
                static_cast<std::size_t>(n) + (room == ListRoom::padded ? kListPadding : 0);
            for (std::size_t e = written_up_to; e < cols.size(); ++e) {
              ASSERT_EQ(cols[e], -99) << where << ", column entry " << e;
              ASSERT_EQ(vals[e], Value{-99}) << where << ", value entry " << e;
            }
            for (Index j = 0; j < kLength + static_cast<Index>(kGuard); ++j) {
              const bool in_window = j >= first && j < first + window;
              ASSERT_EQ(moved[j], in_window ? Value{0} : sums[j]) << where << ", sum " << j;
            }
            cols.resize(static_cast<std::size_t>(std::max<Index>(n, 0)));
            vals.resize(cols.size());
            ASSERT_EQ(cols, expected_cols) << where;
            ASSERT_EQ(vals, expected_vals) << where;
          }
      }
    }
  }
}

TEST(SortAccumulator, FusedScanMovesTheStampedSumsOut) {
  RecordProperty("avx512", vector_sort_available() ? "yes" : "no (scalar path twice)");
  check_marked_entries_are_moved_out<double>();
  check_marked_entries_are_moved_out<float>();
}

// The bit listing lists exactly the set bits, ascending, and clears every word, on both paths: bitmaps
// empty, full, sparse and dense, lengths around the 8-word block and the 512-word segment, words with
// more than four bits (the AVX-512 kernel's loop) and fewer. Nothing is written past the padding.
TEST(SortAccumulator, BitListingListsTheSetBitsAndClearsThem) {
  RecordProperty("avx512", vector_sort_available() ? "yes" : "no (scalar path twice)");
  for (Index count : {0, 1, 7, 8, 9, 63, 512, 513, 1100})
    for (std::uint64_t density : {0, 1, 3, 40, 64}) {  // set bits per 64 on average (64: all)
      std::vector<std::uint64_t> words(static_cast<std::size_t>(count));
      std::vector<Index> expected;
      for (Index q = 0; q < count; ++q)
        for (int b = 0; b < 64; ++b)
          if (density == 64 ||
              seeded_hash(density * 7919 + static_cast<std::uint64_t>(count), 64u * q + b) % 64 < density) {
            words[q] |= std::uint64_t{1} << b;
            expected.push_back(64 * q + b);
          }
      for (bool vector : {true, false}) {
        std::vector<std::uint64_t> bits = words;
        constexpr std::size_t kGuard = 8;
        std::vector<Index> cols(expected.size() + kListPadding + kGuard, -99);
        const Index n = list_set_bits(bits.data(), count, cols.data(), vector);
        const std::string where = std::to_string(count) + " words, density " + std::to_string(density) +
                                  (vector ? ", vector" : ", scalar");
        for (std::size_t e = expected.size() + kListPadding; e < cols.size(); ++e) ASSERT_EQ(cols[e], -99) << where;
        ASSERT_EQ(n, static_cast<Index>(expected.size())) << where;
        cols.resize(expected.size());
        ASSERT_EQ(cols, expected) << where;
        ASSERT_TRUE(std::all_of(bits.begin(), bits.end(), [](std::uint64_t w) { return w == 0; })) << where;
      }
    }
}

// count_set_bits counts what std::popcount counts, word by word, and clears the words.
TEST(SortAccumulator, CountSetBitsCountsAndClears) {
  for (std::size_t count : {0, 1, 7, 64, 1000})
    for (std::uint64_t density : {0, 1, 40, 64}) {
      std::vector<std::uint64_t> words(count);
      Offset expected = 0;
      for (std::size_t q = 0; q < count; ++q) {
        for (int b = 0; b < 64; ++b)
          if (density == 64 || seeded_hash(density + 17 * count, 64u * q + b) % 64 < density)
            words[q] |= std::uint64_t{1} << b;
        for (std::uint64_t w = words[q]; w != 0; w &= w - 1) ++expected;  // Kernighan, not popcount
      }
      EXPECT_EQ(count_set_bits(words.data(), count), expected) << count << " words, density " << density;
      EXPECT_TRUE(std::all_of(words.begin(), words.end(), [](std::uint64_t w) { return w == 0; }));
    }
}

// B's shared columns are those with two or more nonzeros: shared_column_entries keeps exactly B's
// entries in them (checked against a count of every column), in B's order, each renumbered by its
// column's rank among the shared columns, on any thread count. Two Bs: a random one, and one wide
// enough (2^20 columns) that the ranks are counted in several blocks, with shared columns at both ends.
TEST(MagnusSingleColumns, SharedEntriesAreThoseInColumnsWithTwoOrMoreNonzerosRankedInOrder) {
  std::vector<Triplet<double>> wide_entries;
  const Index wide_columns = Index{1} << 20;
  for (Index k = 0; k < 40; ++k)
    for (Index t = 0; t < 30; ++t)
      wide_entries.push_back(
          {k, static_cast<Index>((Offset{k} * 7919 + Offset{t} * 104729 * (k % 3 + 1)) % wide_columns), 1.0});
  // Shared columns at the ends and on either side of a block boundary (4096 words = 2^18 columns).
  for (const Index k : {0, 39}) wide_entries.push_back({k, wide_columns - 1, 1.0});
  for (const Index k : {10, 20}) wide_entries.push_back({k, 3 << 18, 1.0});
  for (const Index k : {11, 21}) wide_entries.push_back({k, (3 << 18) - 1, 1.0});
  wide_entries.push_back({5, 0, 1.0});  // and row 0's first entry
  const CsrMatrix<double> wide = csr_from_triplets(40, wide_columns, std::move(wide_entries));
  for (const CsrMatrix<double>& B : {test::random_sparse<double>(300, 20000, 0.0005, 31, {7, 8}, {5}), wide}) {
    std::map<Index, int> nonzeros_in;
    for (const Index c : B.col) ++nonzeros_in[c];
    std::map<Index, Index> rank;  // of each shared column among them, in column order
    for (const auto& [column, nonzeros] : nonzeros_in)
      if (nonzeros >= 2) rank.emplace(column, static_cast<Index>(rank.size()));
    CsrMatrix<double> expected(B.rows, static_cast<Index>(rank.size()));
    for (Index k = 0; k < B.rows; ++k) {
      for (Offset e = B.row_begin(k); e < B.row_end(k); ++e)
        if (nonzeros_in[B.col[e]] >= 2) expected.col.push_back(rank.at(B.col[e]));
      expected.row_ptr[static_cast<std::size_t>(k) + 1] = static_cast<Offset>(expected.col.size());
    }
    ASSERT_GT(expected.nnz(), 0);
    ASSERT_LT(expected.nnz(), B.nnz());  // both kinds of column occur
    const int threads = omp_get_max_threads();
    for (const int t : {1, 3}) {
      omp_set_num_threads(t);
      const CsrMatrix<double> S = magnus::shared_column_entries(B);
      const std::string where = std::to_string(B.cols) + " columns, " + std::to_string(t) + " threads";
      EXPECT_EQ(S.rows, B.rows) << where;
      EXPECT_EQ(S.cols, expected.cols) << where;
      EXPECT_TRUE(S.row_ptr == expected.row_ptr) << where;
      EXPECT_TRUE(S.col == expected.col) << where;
      EXPECT_TRUE(S.val.empty()) << where;
    }
    omp_set_num_threads(threads);
  }
}

// The symbolic phase on the shared columns alone: every row of C gets its exact length (the distinct
// columns of its products, counted here with a std::set), and C equals gustavson's, with the shortcut
// and without, on a wide B of single, shared and empty columns with empty rows in A and B, and with
// caches shrunk so that the symbolic phase on A B_shared runs dense, segmented, fine and coarse rows.
// With the shortcut the phase accumulates only the products in shared columns.
TEST(MagnusSingleColumns, ShortcutCountsEveryRowExactly) {
  const CsrMatrix<double> A = test::random_sparse<double>(200, 300, 0.06, 41, {0, 13, 199}, {4});
  const CsrMatrix<double> B = test::random_sparse<double>(300, 50000, 0.0006, 42, {17, 18}, {9, 10});
  const Offset products = spgemm_multiplications(A, B);
  ASSERT_TRUE(magnus::single_columns_pay(B.nnz(), B.cols, products));
  std::vector<Offset> lengths(static_cast<std::size_t>(A.rows) + 1, 0);
  for (Index i = 0; i < A.rows; ++i) {
    std::set<Index> columns;
    for (Offset ka = A.row_begin(i); ka < A.row_end(i); ++ka)
      for (Offset kb = B.row_begin(A.col[ka]); kb < B.row_end(A.col[ka]); ++kb) columns.insert(B.col[kb]);
    const auto r = static_cast<std::size_t>(i);
    lengths[r + 1] = lengths[r] + static_cast<Offset>(columns.size());
  }
  const CsrMatrix<double> reference = test::textbook_gustavson(A, B);
  // Cache sizes (and products per cursor visit) that put the symbolic rows of A B_shared in each
  // category (B_shared has B's ~700 shared columns, renumbered).
  struct Setting {
    std::size_t l2, line;
    double products_per_cursor_visit;
    Offset magnus::RowCategories::*category;
  };
  for (const Setting& setting : {Setting{std::size_t{1} << 20, 64, 24, &magnus::RowCategories::dense},
                                 Setting{64, 64, 0.5, &magnus::RowCategories::segmented},
                                 Setting{128, 8, 24, &magnus::RowCategories::fine},
                                 Setting{64, 64, 24, &magnus::RowCategories::coarse}})
    for (const bool single_columns : {true, false}) {
      magnus::Options o;
      o.cache = {setting.l2, setting.line};
      o.sort_threshold = 4;
      o.products_per_cursor_visit = setting.products_per_cursor_visit;
      o.single_columns = single_columns;
      SpgemmStats stats;
      magnus::RowCategories symbolic_cats;
      const CsrMatrix<double> C = magnus::multiply(A, B, o, stats, nullptr, &symbolic_cats);
      const std::string where = "L2 " + std::to_string(setting.l2) + ", shortcut " + std::to_string(single_columns);
      if (single_columns) {
        EXPECT_GT(symbolic_cats.*setting.category, A.rows / 2) << where;
      }
      EXPECT_EQ(symbolic_cats.products < products / 2, single_columns) << where;
      EXPECT_LE(symbolic_cats.products, products) << where;
      EXPECT_TRUE(std::equal(lengths.begin(), lengths.end(), C.row_ptr.begin(), C.row_ptr.end())) << where;
      EXPECT_TRUE(C.col == reference.col) << where;
      EXPECT_TRUE(C.val == reference.val) << where;
    }
  // Square operators with no fewer nonzeros than columns never take it, however many products.
  const CsrMatrix<double> square = test::random_sparse<double>(500, 500, 0.01, 43);
  ASSERT_GE(square.nnz(), square.cols);
  EXPECT_FALSE(magnus::single_columns_pay(square.nnz(), square.cols, Offset{1} << 40));
}

// A B whose columns all hold one nonzero at most: B_shared has no columns, the symbolic phase
// accumulates nothing, and every row's length is its products; C equals gustavson's.
TEST(MagnusSingleColumns, OnlySingleColumnsNeedNoAccumulator) {
  const CsrMatrix<double> A = test::random_sparse<double>(60, 40, 0.2, 51, {3});
  std::vector<Triplet<double>> entries;
  for (Index k = 0; k < 40; ++k)
    for (Index t = 0; t < 25; ++t) entries.push_back({k, k * 25 + t, 1.0 + 0.01 * t});  // distinct columns
  const CsrMatrix<double> B = csr_from_triplets(40, 40 * 25 + 3000, std::move(entries));
  const Offset products = spgemm_multiplications(A, B);
  ASSERT_TRUE(magnus::single_columns_pay(B.nnz(), B.cols, products));
  EXPECT_EQ(magnus::shared_column_entries(B).cols, 0);
  SpgemmStats stats;
  magnus::RowCategories symbolic_cats;
  const CsrMatrix<double> C = magnus::multiply(A, B, magnus::system_options(), stats, nullptr, &symbolic_cats);
  EXPECT_EQ(symbolic_cats.products, 0);
  const CsrMatrix<double> reference = test::textbook_gustavson(A, B);
  EXPECT_TRUE(C.row_ptr == reference.row_ptr);
  EXPECT_TRUE(C.col == reference.col);
  EXPECT_TRUE(C.val == reference.val);
  EXPECT_EQ(C.nnz(), products);
}

TEST(Magnus, CoarseLevelIsIdenticalForAnyThreadCount) {
  magnus::Options o;
  o.cache = {1024, 64};
  o.sort_threshold = 8;
  o.batch_bytes = 8192;
  const CsrMatrix<float> A = test::random_sparse<float>(400, 300, 0.05, 21);
  const CsrMatrix<float> B = test::random_sparse<float>(300, 5000, 0.01, 22);
  const int threads = omp_get_max_threads();
  SpgemmStats stats;
  omp_set_num_threads(1);
  const CsrMatrix<float> C1 = magnus::multiply(A, B, o, stats);
  omp_set_num_threads(3);
  const CsrMatrix<float> C3 = magnus::multiply(A, B, o, stats);
  omp_set_num_threads(threads);
  EXPECT_TRUE(C1.col == C3.col);
  EXPECT_TRUE(C1.val == C3.val);
  EXPECT_LT((test::to_dense(C1) - test::to_dense(A) * test::to_dense(B)).cwiseAbs().maxCoeff(), 1e-4);
}

}  // namespace
}  // namespace amgsolve
