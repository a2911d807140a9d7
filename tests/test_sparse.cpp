// CSR basics against dense references; the large arrays' memory policy.
#include <omp.h>
#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <functional>
#include <string>
#include <limits>

#include "common/allocator.hpp"
#include "common/error.hpp"
#include "common/memory.hpp"
#include "sparse/csr_ops.hpp"

#include "test_support.hpp"

namespace amgsolve {
namespace {

using test::random_sparse;
using test::to_dense;

TEST(Csr, FromTripletsSumsDuplicatesAndSortsRows) {
  const CsrMatrix<double> A = csr_from_triplets<double>(3, 4, {{2, 3, 1.0}, {0, 1, 2.0}, {2, 0, 4.0}, {0, 1, 3.0}});
  ASSERT_TRUE(is_valid_csr(A));
  EXPECT_EQ(A.nnz(), 3);
  Eigen::MatrixXd expected = Eigen::MatrixXd::Zero(3, 4);
  expected(0, 1) = 5.0;
  expected(2, 0) = 4.0;
  expected(2, 3) = 1.0;
  EXPECT_EQ(to_dense(A), expected);
  EXPECT_EQ(A.row_length(1), 0);
}

TEST(Csr, TransposeMatchesDenseForAnyThreadCount) {
  const CsrMatrix<double> A = random_sparse(300, 170, 0.05, 11, {3, 50}, {0, 169});
  for (int threads : {1, 2, 3}) {
    omp_set_num_threads(threads);
    const CsrMatrix<double> T = transpose(A);
    ASSERT_TRUE(is_valid_csr(T));
    EXPECT_EQ(to_dense(T), to_dense(A).transpose()) << threads << " threads";
  }
  omp_set_num_threads(2);
}

TEST(Csr, SpmvAndResidualMatchDense) {
  const CsrMatrix<double> A = random_sparse(120, 120, 0.1, 5, {7});
  Vector<double> x(120), y, r;
  for (int i = 0; i < 120; ++i) x[i] = std::sin(i);
  spmv(A, x, y);
  const Eigen::VectorXd xd = Eigen::Map<Eigen::VectorXd>(x.data(), 120);
  const Eigen::VectorXd yd = to_dense(A) * xd;
  for (int i = 0; i < 120; ++i) EXPECT_NEAR(y[i], yd[i], 1e-13);
  residual(A, x, x, r);
  for (int i = 0; i < 120; ++i) EXPECT_NEAR(r[i], x[i] - yd[i], 1e-13);
}

TEST(Csr, DiagonalIsZeroWhereMissing) {
  const CsrMatrix<double> A = csr_from_triplets<double>(3, 3, {{0, 0, 2.0}, {1, 2, 1.0}, {2, 2, -3.0}});
  EXPECT_EQ(diagonal(A), (Vector<double>{2.0, 0.0, -3.0}));
}

// Short rows are scanned, long ones searched: both against the dense matrix, with diagonal entries missing
// here and there, and a block of rows whose diagonal lies first_row columns further right (a rank's rows).
TEST(Csr, DiagonalEqualsTheDenseOnesInShortAndLongRows) {
  for (const double density : {0.01, 0.3}) {  // about 2 and 60 entries a row
    const CsrMatrix<double> random = test::random_sparse(200, 200, density, 17);
    std::vector<Triplet<double>> t;  // its off-diagonal entries, and a diagonal but in every seventh row
    for (Index i = 0; i < random.rows; ++i) {
      for (Offset k = random.row_begin(i); k < random.row_end(i); ++k)
        if (random.col[k] != i) t.push_back({i, random.col[k], random.val[k]});
      if (i % 7 != 0) t.push_back({i, i, 1.0 + i});
    }
    const CsrMatrix<double> A = csr_from_triplets<double>(200, 200, t);
    const Eigen::MatrixXd dense = test::to_dense(A);
    const Vector<double> d = diagonal(A);
    Index missing = 0;
    for (Index i = 0; i < A.rows; ++i) {
      EXPECT_EQ(d[i], dense(i, i)) << "row " << i << ", density " << density;
      missing += dense(i, i) == 0.0 ? 1 : 0;
    }
    EXPECT_GT(missing, 0) << "density " << density;
    CsrMatrix<double> rows(50, A.cols);  // rows 100..149 of A
    rows.row_ptr.assign(A.row_ptr.begin() + 100, A.row_ptr.begin() + 151);
    for (auto& offset : rows.row_ptr) offset -= A.row_ptr[100];
    rows.col.assign(A.col.begin() + A.row_ptr[100], A.col.begin() + A.row_ptr[150]);
    rows.val.assign(A.val.begin() + A.row_ptr[100], A.val.begin() + A.row_ptr[150]);
    const Vector<double> block = diagonal(rows, 100);
    for (Index i = 0; i < 50; ++i) EXPECT_EQ(block[i], dense(100 + i, 100 + i)) << "row " << 100 + i;
  }
}

TEST(Csr, LargestAsymmetryFindsTheEntry) {
  CsrMatrix<double> A = csr_from_triplets<double>(3, 3, {{0, 0, 2}, {0, 1, -1}, {1, 0, -1}, {1, 1, 2}, {2, 1, 0.5}});
  const Asymmetry a = largest_asymmetry(A);
  EXPECT_DOUBLE_EQ(a.relative, 1.0);  // (2,1) present, (1,2) missing
  EXPECT_TRUE((a.row == 1 && a.col == 2) || (a.row == 2 && a.col == 1));
  const CsrMatrix<double> S = csr_from_triplets<double>(2, 2, {{0, 0, 2}, {0, 1, -1}, {1, 0, -1}, {1, 1, 2}});
  EXPECT_EQ(largest_asymmetry(S).relative, 0.0);
}

// Entries near double's limits: the diagonals' geometric mean is taken as sqrt(a_ii) sqrt(a_jj), since their
// product overflows beyond 1.3e154 (every asymmetry then looked relative 0, and an asymmetric matrix passed).
TEST(Csr, LargestAsymmetryHoldsEntriesNearDoublesLimits) {
  for (const double scale : {1e300, 1e-300}) {
    const CsrMatrix<double> A = csr_from_triplets<double>(
        2, 2, {{0, 0, 2 * scale}, {0, 1, -scale}, {1, 0, -0.5 * scale}, {1, 1, 2 * scale}});
    EXPECT_DOUBLE_EQ(largest_asymmetry(A).relative, 0.25) << scale;  // |(-1) - (-0.5)| / 2
  }
}

// The messages name the entry in the file's numbering (from 1) or scipy's (from 0, said so), and a small
// difference in digits that show it (1e-08, not 0.000000).
TEST(Csr, SpdCandidateMessagesNameTheEntryAndTheDifference) {
  const CsrMatrix<double> A =
      csr_from_triplets<double>(2, 2, {{0, 0, 2}, {0, 1, -1}, {1, 0, -1.00000001}, {1, 1, 2}});
  const auto message = [&](int first_index) {
    try {
      require_spd_candidate("A", A, first_index);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  // 1e-8 apart, against the diagonal 2: 5e-9 relative
  EXPECT_EQ(message(1), "A: matrix is not symmetric: entries (1, 2) and (2, 1) differ (relative difference 5e-09)");
  EXPECT_EQ(message(0), "A: matrix is not symmetric: entries (0, 1) and (1, 0) differ (relative difference 5e-09) "
                        "(indices counted from 0)");
}

// Round-off in an assembled matrix is no asymmetry: entries of 1e-17 whose mirrors differ in every digit,
// where the diagonal is 4, are measured against the diagonal. A symmetric scaling D A D (D from 1e-8 to
// 1e8) changes neither answer: a real asymmetry between a large and a small row is still found.
TEST(Csr, SymmetryIsMeasuredAgainstTheDiagonal) {
  std::vector<Triplet<double>> noisy = {{0, 0, 4}, {0, 1, -1}, {1, 0, -1}, {1, 1, 4},  {1, 2, -1},
                                        {2, 1, -1}, {2, 2, 4}, {0, 2, 2.2e-17}, {2, 0, -1.1e-17}};
  std::vector<Triplet<double>> asymmetric = noisy;
  asymmetric.back().value = -0.5;  // (2, 0) against (0, 2) = 2.2e-17: 0.5 / 4 relative, named from row 0
  const std::vector<double> scaling = {1e8, 1.0, 1e-8};
  const auto scaled = [&](std::vector<Triplet<double>> entries) {
    for (Triplet<double>& t : entries) t.value *= scaling[t.row] * scaling[t.col];
    return entries;
  };
  for (const auto& [name, entries] : {std::pair{"as assembled", noisy}, std::pair{"scaled", scaled(noisy)}})
    EXPECT_NO_THROW(require_spd_candidate("A", csr_from_triplets<double>(3, 3, entries))) << name;
  for (const auto& [name, entries] :
       {std::pair{"as assembled", asymmetric}, std::pair{"scaled", scaled(asymmetric)}}) {
    const Asymmetry a = largest_asymmetry(csr_from_triplets<double>(3, 3, entries));
    EXPECT_EQ(a.row, 0) << name;
    EXPECT_EQ(a.col, 2) << name;
    EXPECT_NEAR(a.relative, 0.125, 1e-12) << name;
  }
}

// A diagonal entry below double's normal range (a matrix in units that make it 1e-310) is named, with what
// to do, rather than failing later as "not positive definite".
TEST(Csr, SpdCandidateRefusesASubnormalDiagonalByName) {
  const CsrMatrix<double> A = csr_from_triplets<double>(2, 2, {{0, 0, 2}, {1, 1, 3e-310}});
  try {
    require_spd_candidate("A", A, 1);
    ADD_FAILURE() << "a subnormal diagonal was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "A: diagonal entry 2 is 3e-310, below double's normal range (2.2e-308): scale the matrix");
  }
  EXPECT_NO_THROW(require_spd_candidate("A", csr_from_triplets<double>(1, 1, {{0, 0, 1e-300}}), 1));
}

// Against a dense scan of every pair, on a nearly symmetric random matrix with a few perturbed and one-sided
// entries, and the same answer on any thread count.
TEST(Csr, LargestAsymmetryIsTheDenseMaximumOnAnyThreadCount) {
  const Index n = 300;
  std::vector<Triplet<double>> t;
  std::uint64_t state = 12345;
  const auto next = [&state] { return (state = state * 6364136223846793005ULL + 1442695040888963407ULL) >> 33; };
  for (Index i = 0; i < n; ++i) {
    t.push_back({i, i, 4.0});
    for (int e = 0; e < 4; ++e) {
      const Index j = static_cast<Index>(next() % n);
      if (j == i) continue;
      const double v = -1.0 - static_cast<double>(next() % 100) / 100;
      t.push_back({i, j, v});
      if (next() % 50 != 0) t.push_back({j, i, next() % 40 == 0 ? v * 1.01 : v});  // some perturbed, some missing
    }
  }
  const CsrMatrix<double> A = csr_from_triplets<double>(n, n, t);
  std::vector<double> dense(static_cast<std::size_t>(n) * n, 0.0);
  for (Index i = 0; i < n; ++i)
    for (Offset k = A.row_begin(i); k < A.row_end(i); ++k) dense[static_cast<std::size_t>(i) * n + A.col[k]] = A.val[k];
  const auto relative = [&](Index i, Index j) {  // the pair's difference against it and the diagonals
    const double a = dense[static_cast<std::size_t>(i) * n + j], b = dense[static_cast<std::size_t>(j) * n + i];
    const double di = dense[static_cast<std::size_t>(i) * n + i], dj = dense[static_cast<std::size_t>(j) * n + j];
    const double scale = std::max({std::abs(a), std::abs(b), std::sqrt(std::abs(di * dj))});
    return scale > 0 ? std::abs(a - b) / scale : 0.0;
  };
  double expected = 0;
  for (Index i = 0; i < n; ++i)
    for (Index j = 0; j < n; ++j) expected = std::max(expected, relative(i, j));
  ASSERT_GT(expected, 0.0);
  Asymmetry first;
  const int saved = omp_get_max_threads();
  for (const int threads : {1, 2, 3, 7}) {
    omp_set_num_threads(threads);
    const Asymmetry a = largest_asymmetry(A);
    EXPECT_DOUBLE_EQ(a.relative, expected) << threads << " threads";
    EXPECT_DOUBLE_EQ(relative(a.row, a.col), expected);
    if (threads == 1) first = a;
    EXPECT_EQ(a.row, first.row);
    EXPECT_EQ(a.col, first.col);
  }
  omp_set_num_threads(saved);
}

TEST(Csr, IsValidRejectsUnsortedAndOutOfRange) {
  CsrMatrix<double> A = csr_from_triplets<double>(2, 2, {{0, 0, 1}, {0, 1, 1}});
  EXPECT_TRUE(is_valid_csr(A));
  std::swap(A.col[0], A.col[1]);
  EXPECT_FALSE(is_valid_csr(A));
  A.col[0] = 5;
  EXPECT_FALSE(is_valid_csr(A));
}

TEST(Csr, CastValuesKeepsPattern) {
  const CsrMatrix<double> A = random_sparse(40, 30, 0.2, 3);
  const CsrMatrix<float> F = cast_values<float>(A);
  EXPECT_EQ(F.col, A.col);
  EXPECT_EQ(F.row_ptr, A.row_ptr);
  EXPECT_LT((to_dense(F) - to_dense(A)).norm(), 1e-6 * to_dense(A).norm());
}

// Page faults this process has taken so far (minor: a fresh page mapped in).
long minor_page_faults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

// Faults taken while an Array of `bytes` is allocated and every page of it written once.
long faults_of_fresh_array(std::size_t bytes) {
  const long before = minor_page_faults();
  Array<char> block(bytes);
  for (std::size_t b = 0; b < bytes; b += 4096) block[b] = 1;
  return minor_page_faults() - before;
}

// The memory a run may plan for is bounded by the address-space limit as well as by the machine's
// MemAvailable: with 256 MiB of address space left, that is what is available.
TEST(Memory, AvailableMemoryHeedsTheAddressSpaceLimit) {
  if (available_memory_bytes() < (std::uint64_t{512} << 20)) GTEST_SKIP() << "under 512 MiB free: proves nothing";
  std::uint64_t available = 0;
  if (!test::with_address_space_headroom(std::uint64_t{256} << 20, [&] { available = available_memory_bytes(); }))
    GTEST_SKIP() << "a hard limit is set";
  EXPECT_LE(available, std::uint64_t{256} << 20);
  EXPECT_GT(available, std::uint64_t{200} << 20);
}

// Ranks on one node draw on its free memory at once: a share that one process may hold is refused where the
// node's 8 ranks each hold it, and the message gives their sum. What one process alone needs counts once.
TEST(Memory, EachRanksShareIsCountedOnceForEveryRankOfTheNode) {
  const std::uint64_t free = available_memory_bytes();
  if (free < (std::uint64_t{64} << 20)) GTEST_SKIP() << "under 64 MiB free, or unknown: proves nothing";
  const std::uint64_t share = free / 4;
  const auto refusal = [share](int ranks, bool each_rank) {
    set_ranks_on_this_node(ranks);
    std::string message;
    try {
      if (each_rank) require_memory_of_each_rank(share, "this rank's share");
      else require_memory(share, "rank 0's extra");
    } catch (const InputError& e) {
      message = e.what();
    }
    set_ranks_on_this_node(1);
    return message;
  };
  EXPECT_EQ(refusal(1, true), "");
  EXPECT_EQ(refusal(8, false), "");
  const std::string eight = refusal(8, true);
  EXPECT_NE(eight.find("this rank's share needs about " + format_bytes(share) + " of memory, about " +
                       format_bytes(8 * share) + " for the 8 ranks on this node together, but only "),
            std::string::npos)
      << eight;
}

// Under ulimit -v a run needs more address space than resident memory (arrays sized for an upper bound, a
// heap never trimmed): 100 MiB of memory fits in 256 MiB of address space, 200 MiB does not, and the
// message says what the limit is.
TEST(Memory, UnderAnAddressSpaceLimitTheEstimateIsAskedWithRoomToMap) {
  if (available_memory_bytes() < (std::uint64_t{512} << 20)) GTEST_SKIP() << "under 512 MiB free: proves nothing";
  std::string small, large;
  const bool limited = test::with_address_space_headroom(std::uint64_t{256} << 20, [&] {
    try {
      require_memory(std::uint64_t{100} << 20, "the small problem");
    } catch (const InputError& e) {
      small = e.what();
    }
    try {
      require_memory(std::uint64_t{200} << 20, "the large problem");
    } catch (const InputError& e) {
      large = e.what();
    }
  });
  if (!limited) GTEST_SKIP() << "a hard limit is set";
  EXPECT_EQ(small, "");
  EXPECT_NE(large.find("the large problem needs about 200.00 MiB of memory, about 300.00 MiB of address space, but "
                       "ulimit -v leaves only"), std::string::npos) << large;
  // The threads' share is named where there are several (on a many-core node they are often the cause).
  if (omp_get_max_threads() > 1)
    EXPECT_NE(large.find("(raise it, choose a smaller problem, or run fewer threads (--threads): the " +
                         std::to_string(omp_get_max_threads()) + " map about " +
                         format_bytes((std::uint64_t{72} << 20) * static_cast<std::uint64_t>(omp_get_max_threads() - 1)) +
                         " of it)"),
              std::string::npos) << large;
  else
    EXPECT_EQ(large.find("threads"), std::string::npos) << large;
}

// With keep_freed_memory, a smaller array allocated after a large one is freed reuses its pages: no new
// faults. Without it, glibc gives a block this large (over its 32 MiB mmap ceiling) back to the OS on
// free, and the next one faults again (once per 4 KiB page, or per 2 MiB with transparent huge pages).
TEST(Memory, FreedArraysAreReusedWithoutPageFaults) {
  if (!keep_freed_memory()) GTEST_SKIP() << "not glibc: malloc's policy cannot be set";
  constexpr std::size_t kBytes = std::size_t{64} << 20;
  const long first = faults_of_fresh_array(kBytes);
  const long second = faults_of_fresh_array(kBytes / 2);
  EXPECT_GT(first, 0);
  EXPECT_LE(8 * second, first) << "first touch " << first << " faults, reuse " << second;
}

// Faults taken while two Arrays (a product's columns and values: one twice the other) are allocated and
// written once.
long faults_of_fresh_pair(std::size_t bytes) {
  const long before = minor_page_faults();
  Array<std::int32_t> col(bytes / sizeof(std::int32_t));
  Array<double> val(2 * bytes / sizeof(double));
  for (std::size_t b = 0; b < col.size(); b += 1024) col[b] = 1;
  for (std::size_t b = 0; b < val.size(); b += 512) val[b] = 1;
  return minor_page_faults() - before;
}

// The same two arrays again, as every repeated product or solve allocates them: the freed blocks must
// hold the new ones. (With aligned operator new, glibc 2.36 kept the pieces cut off around each block
// in its caches, the freed blocks did not merge, the second array no longer fitted, and every
// repetition took fresh pages and grew the heap: 452 MiB more per round for a 237 + 474 MB pair. Newer
// glibc merges those pieces at once, and the old allocator may pass there.) Each test runs in its own
// process under ctest; in a process whose earlier tests freed this much, the first round reuses pages
// too, and the test says so and skips.
TEST(Memory, RepeatedArrayPairsReuseTheirPages) {
  if (!keep_freed_memory()) GTEST_SKIP() << "not glibc: malloc's policy cannot be set";
  constexpr std::size_t kBytes = std::size_t{48} << 20;
  const long first = faults_of_fresh_pair(kBytes);
  if (first < 16) GTEST_SKIP() << "the first round reused pages freed by earlier tests in this process";
  const long second = faults_of_fresh_pair(kBytes);
  const long third = faults_of_fresh_pair(kBytes);
  EXPECT_LE(8 * second, first) << "first touch " << first << " faults, second round " << second;
  EXPECT_LE(8 * third, first) << "first touch " << first << " faults, third round " << third;
}

// Arrays are 64-byte aligned whatever their size, and a size whose bytes overflow is refused.
TEST(Memory, ArraysAreCacheLineAlignedAndOverflowIsRefused) {
  for (std::size_t n : {std::size_t{1}, std::size_t{3}, std::size_t{1000}, std::size_t{1} << 22}) {
    Array<char> small(n);
    Array<double> large(n);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(small.data()) % 64, 0u) << n;
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(large.data()) % 64, 0u) << n;
  }
  LargeArrayAllocator<double> allocator;
  // Bytes past the top, bytes plus the alignment's room past the top, bytes that wrap around to 0.
  constexpr std::size_t kMax = std::numeric_limits<std::size_t>::max();
  for (std::size_t n : {kMax / 4, kMax / 8, kMax / 8 + 1}) {
    EXPECT_THROW(
        {
          double* block = allocator.allocate(n);
          allocator.deallocate(block, n);
        },
        std::bad_alloc)
        << n;
  }
}

}  // namespace
}  // namespace amgsolve
