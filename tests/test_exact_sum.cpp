// The exact accumulator and the block partition the distributed reductions rest on: sums that do not depend
// on order or splitting, checked against sums known exactly, and partitions that start on block boundaries.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <new>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/exact_sum.hpp"
#include "common/parallel.hpp"
#include "common/thread_errors.hpp"
#include "distributed/partition.hpp"

namespace amgsolve {
namespace {

double exact_sum(const std::vector<double>& values) {
  ExactSum sum;
  for (double v : values) sum.add(v);
  return sum.value();
}

TEST(ExactSum, CancellationThatDoubleArithmeticLoses) {
  EXPECT_EQ(exact_sum({1e100, 1.0, -1e100}), 1.0);
  EXPECT_EQ(exact_sum({1.0, 1e-300, -1.0}), 1e-300);
  EXPECT_EQ(exact_sum({0x1p-1074, 0x1p-1074, -0x1p-1073}), 0.0);  // subnormals
  EXPECT_EQ(exact_sum({std::numeric_limits<double>::max(), -std::numeric_limits<double>::max(), 3.5}), 3.5);
  EXPECT_EQ(exact_sum({-2.5, -0.25}), -2.75);
  EXPECT_EQ(exact_sum({}), 0.0);
}

TEST(ExactSum, EveryDoubleComesBackExactly) {
  std::mt19937_64 random(7);
  std::uniform_real_distribution<double> exponent(-1070, 1020);
  for (int k = 0; k < 2000; ++k) {
    const double x = (k % 2 ? -1 : 1) * std::ldexp(1.0 + static_cast<double>(random() % 1000003) / 1000003.0,
                                                      static_cast<int>(exponent(random)));
    EXPECT_EQ(exact_sum({x}), x) << x;
  }
}

// Integers of up to 40 bits scaled by powers of two: their sum is known exactly (in a wide integer) and
// representable, so the accumulator must return it whatever the order and however the terms are split.
TEST(ExactSum, OrderAndSplittingDoNotMatter) {
  std::mt19937_64 random(11);
  std::vector<double> values;
  long long exact = 0;
  for (int k = 0; k < 5000; ++k) {
    const long long n = static_cast<long long>(random() % (1ULL << 40)) - (1LL << 39);
    exact += n;
    values.push_back(std::ldexp(static_cast<double>(n), -20));
  }
  const double expected = std::ldexp(static_cast<double>(exact), -20);
  ASSERT_EQ(static_cast<long long>(std::ldexp(expected, 20)), exact);  // representable
  EXPECT_EQ(exact_sum(values), expected);
  for (int trial = 0; trial < 5; ++trial) {
    std::shuffle(values.begin(), values.end(), random);
    ExactSum left, right;
    const std::size_t cut = random() % values.size();
    for (std::size_t i = 0; i < values.size(); ++i) (i < cut ? left : right).add(values[i]);
    left.merge(right);
    EXPECT_EQ(left.value(), expected);
  }
}

TEST(ExactSum, FaithfulOnGeneralValues) {
  std::mt19937_64 random(3);
  std::normal_distribution<double> normal;
  std::vector<double> values(100000);
  for (double& v : values) v = normal(random) * std::exp(normal(random) * 5);
  long double reference = 0;  // 64-bit significand: enough to check to a few ulps
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end(), [](double a, double b) { return std::abs(a) < std::abs(b); });
  for (double v : sorted) reference += v;
  const double sum = exact_sum(values);
  EXPECT_LE(std::abs(sum - static_cast<double>(reference)), 4 * std::abs(sum) * std::numeric_limits<double>::epsilon());
  std::reverse(values.begin(), values.end());
  EXPECT_EQ(exact_sum(values), sum);
}

TEST(ExactSum, InfinityAndNanPropagate) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(exact_sum({1.0, inf, 2.0}), inf);
  EXPECT_EQ(exact_sum({-inf, 1.0}), -inf);
  EXPECT_TRUE(std::isnan(exact_sum({inf, -inf})));
  EXPECT_TRUE(std::isnan(exact_sum({1.0, std::nan("")})));
}

// A rank summing its blocks and the ranks merging gives the single-process sum: what a distributed dot
// product relies on.
TEST(ExactSum, BlockSumsMergedOverRangesEqualTheWholeSum) {
  std::mt19937_64 random(5);
  std::uniform_real_distribution<double> uniform(-1, 1);
  const std::int64_t n = 5 * kReductionBlock + 123;
  std::vector<double> v(static_cast<std::size_t>(n));
  for (double& x : v) x = uniform(random) * 1e3;
  const double whole = deterministic_sum<double>(n, [&](std::int64_t i) { return v[i] * v[i]; });
  for (int ranks : {1, 2, 3, 4, 8}) {
    const BlockPartition partition(n, ranks);
    ExactSum merged;
    for (int r = 0; r < ranks; ++r) {
      const double* first = v.data() + partition.begin(r);
      merged.merge(deterministic_partial_sum(partition.count(r), [&](std::int64_t i) { return first[i] * first[i]; }));
    }
    EXPECT_EQ(merged.value(), whole) << ranks << " ranks";
  }
}

TEST(BlockPartition, RangesCoverTheRowsAndStartOnBlocks) {
  for (std::int64_t n : {std::int64_t{0}, std::int64_t{1}, kReductionBlock - 1, kReductionBlock, 3 * kReductionBlock + 5,
                         std::int64_t{1} << 33}) {
    for (int ranks : {1, 2, 3, 4, 8, 16}) {
      const BlockPartition p(n, ranks);
      EXPECT_EQ(p.begin(0), 0);
      EXPECT_EQ(p.size(), n);
      for (int r = 0; r < ranks; ++r) {
        EXPECT_LE(p.begin(r), p.end(r));
        EXPECT_TRUE(p.begin(r) % kReductionBlock == 0 || p.begin(r) == n);
        if (p.count(r) > 0) {
          EXPECT_EQ(p.owner(p.begin(r)), r);
          EXPECT_EQ(p.owner(p.end(r) - 1), r);
        }
      }
      // Balanced to a block: no rank holds more than one block (whole or the last, partial one) more than
      // another, and the ranks without rows are the last ones.
      std::int64_t most = 0, least = n;
      for (int r = 0; r < ranks; ++r) {
        const std::int64_t blocks = (p.count(r) + kReductionBlock - 1) / kReductionBlock;
        most = std::max(most, blocks), least = std::min(least, blocks);
        if (r > 0 && p.count(r) > 0) {
          EXPECT_GT(p.count(r - 1), 0);
        }
      }
      EXPECT_LE(most - least, 1);
    }
  }
}

// first_index_where names the first failing row of a check: the smallest index where the predicate holds,
// as a serial scan finds it, on any thread count (bad entries in several threads' parts, and none at all).
TEST(FirstIndexWhere, IsTheSerialScansAnswerOnAnyThreadCount) {
  const std::int64_t n = 5 * kReductionBlock + 17;
  for (const std::vector<std::int64_t>& bad : std::vector<std::vector<std::int64_t>>{
           {}, {n - 1}, {3 * kReductionBlock + 5, n - 2}, {2 * kReductionBlock, 4 * kReductionBlock, 7}}) {
    std::vector<char> is_bad(static_cast<std::size_t>(n), 0);
    for (std::int64_t i : bad) is_bad[static_cast<std::size_t>(i)] = 1;
    const std::int64_t serial = std::find(is_bad.begin(), is_bad.end(), 1) - is_bad.begin();
    for (int threads : {1, 2, 3}) {
      omp_set_num_threads(threads);
      EXPECT_EQ(first_index_where(n, [&](std::int64_t i) { return is_bad[static_cast<std::size_t>(i)] != 0; }), serial)
          << threads << " threads";
    }
  }
  omp_set_num_threads(omp_get_num_procs());
}

// any_index_where says whether the predicate holds anywhere: in the serial first rows, in one thread's
// chunks or another's, in the last entry, nowhere; and it stops early: a match in the first rows asks no
// other, and on one thread (its chunks taken in order) none past the first match.
TEST(AnyIndexWhere, SaysWhetherAnyHoldsOnAnyThreadCount) {
  const std::int64_t n = 50 * 4096 + 17;
  for (const std::vector<std::int64_t>& hits : std::vector<std::vector<std::int64_t>>{
           {}, {0}, {4095}, {4096}, {n - 1}, {30 * 4096 + 5}, {2 * 4096, 40 * 4096, 7}}) {
    std::vector<char> hit(static_cast<std::size_t>(n), 0);
    for (std::int64_t i : hits) hit[static_cast<std::size_t>(i)] = 1;
    for (int threads : {1, 2, 3}) {
      omp_set_num_threads(threads);
      std::atomic<std::int64_t> asked{0};
      const bool any = any_index_where(n, [&](std::int64_t i) {
        ++asked;
        return hit[static_cast<std::size_t>(i)] != 0;
      });
      EXPECT_EQ(any, !hits.empty()) << threads << " threads";
      const std::int64_t first_hit = hits.empty() ? n : *std::min_element(hits.begin(), hits.end());
      if (!hits.empty() && (first_hit < 4096 || threads == 1)) {
        EXPECT_EQ(asked.load(), first_hit + 1) << "stopped at the first match, " << threads << " threads";
      }
      if (hits.empty()) {
        EXPECT_EQ(asked.load(), n) << "every index asked";
      }
    }
  }
  EXPECT_FALSE(any_index_where(0, [](std::int64_t) { return true; }));
  omp_set_num_threads(omp_get_num_procs());
}

// An exception inside a parallel region reaches the caller after it (outside ThreadErrors it ends the process):
// the first thread's to fail is rethrown as it was thrown, the other threads skip what is left and every
// thread reaches the region's end (no barrier waits for ever); without a failure every iteration runs and
// nothing is thrown. On 1 to 4 threads (more than this machine's cores), a failure in the first, a middle
// and the last iteration, and in several threads at once.
TEST(ThreadErrors, AnExceptionInsideARegionIsThrownAfterIt) {
  const std::int64_t n = 10000;
  for (int threads : {1, 2, 3, 4}) {
    omp_set_num_threads(threads);
    for (const std::vector<std::int64_t>& failing :
         std::vector<std::vector<std::int64_t>>{{}, {0}, {n / 2}, {n - 1}, {1, n / 3, 2 * n / 3, n - 2}}) {
      ThreadErrors errors;
      std::vector<char> ran(static_cast<std::size_t>(n), 0);
      int finished = 0, team = 0;
#pragma omp parallel
      {
#pragma omp master
        team = omp_get_num_threads();
#pragma omp for schedule(static)
        for (std::int64_t i = 0; i < n; ++i)
          errors.run([&] {
            if (std::find(failing.begin(), failing.end(), i) != failing.end())
              throw std::runtime_error("iteration " + std::to_string(i));
            ran[static_cast<std::size_t>(i)] = 1;
          });
#pragma omp atomic
        ++finished;
      }
      EXPECT_EQ(finished, team);
      SCOPED_TRACE(std::to_string(threads) + " threads, " + std::to_string(failing.size()) + " failing");
      if (failing.empty()) {
        EXPECT_FALSE(errors.failed());
        EXPECT_NO_THROW(errors.rethrow());
        EXPECT_EQ(std::count(ran.begin(), ran.end(), 1), n);
        continue;
      }
      EXPECT_TRUE(errors.failed());
      try {
        errors.rethrow();
        ADD_FAILURE() << "nothing rethrown";
      } catch (const std::runtime_error& e) {
        const std::string what = e.what();
        EXPECT_TRUE(std::any_of(failing.begin(), failing.end(),
                                [&](std::int64_t i) { return what == "iteration " + std::to_string(i); }))
            << what;
      }
      for (std::int64_t i : failing) EXPECT_EQ(ran[static_cast<std::size_t>(i)], 0);
    }
  }
  omp_set_num_threads(omp_get_num_procs());
}

// run() says whether its work ran: false once a failure is kept, also for work that would not throw.
TEST(ThreadErrors, RunReportsWhetherTheWorkRan) {
  ThreadErrors errors;
  int calls = 0;
  EXPECT_TRUE(errors.run([&] { ++calls; }));
  EXPECT_FALSE(errors.run([&] { throw std::bad_alloc(); }));
  EXPECT_FALSE(errors.run([&] { ++calls; }));
  EXPECT_EQ(calls, 1);
  EXPECT_THROW(errors.rethrow(), std::bad_alloc);
}

}  // namespace
}  // namespace amgsolve
