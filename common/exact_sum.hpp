#pragma once
// An exact accumulator for sums of doubles (Kulisch's long accumulator: U. Kulisch, "Computer Arithmetic and
// Validity", 2nd ed., 2013, chapter 8; the same idea as ReproBLAS's reproducible reductions). Every finite
// double is a multiple of 2^-1074 below 2^1024, so it is an integer of at most 2098 bits in that unit; the
// accumulator keeps that integer in 32-bit limbs held in int64 words, and adding a double adds its 53-bit
// mantissa into three limbs, exactly. The result is therefore independent of the order of the additions
// and of how they were split: the same for any thread count and, merged limb by limb with an integer
// MPI_SUM (exact and commutative), for any number of ranks. That is what makes a distributed dot product
// bit-identical to the single-process one (common/parallel.hpp sums fixed blocks, then the block sums here).
#include <array>
#include <cmath>
#include <cstdint>

namespace amgsolve {

class ExactSum {
 public:
  static constexpr int kLimbBits = 32;
  static constexpr int kLimbs = 68;        // 2098 bits of range and 78 bits of headroom for the carries
  static constexpr int kLowestExponent = -1074;  // the unit: the smallest subnormal, 2^-1074

  void add(double x) {
    if (!std::isfinite(x)) {  // infinities and NaN: their sum does not depend on the order either
      special_ += x;
      return;
    }
    if (x == 0.0) return;
    int exponent = 0;
    const double fraction = std::frexp(x, &exponent);  // x = fraction 2^exponent, 0.5 <= |fraction| < 1
    auto mantissa = static_cast<std::int64_t>(std::ldexp(fraction, 53));  // exact: |mantissa| < 2^53
    int bit = exponent - 53 - kLowestExponent;  // x = mantissa 2^(bit + kLowestExponent)
    if (bit < 0) {  // a subnormal: the low bits of its mantissa are zero
      mantissa /= std::int64_t{1} << -bit;
      bit = 0;
    }
    const bool negative = mantissa < 0;
    const auto magnitude = static_cast<std::uint64_t>(negative ? -mantissa : mantissa);
    const int shift = bit % kLimbBits;
    const std::uint64_t low = (magnitude & kLimbMask) << shift;  // below 2^64
    const std::uint64_t high = (magnitude >> kLimbBits) << shift;  // below 2^53
    const std::uint64_t parts[3] = {low & kLimbMask, (low >> kLimbBits) + (high & kLimbMask), high >> kLimbBits};
    const int limb = bit / kLimbBits;
    for (int k = 0; k < 3; ++k) {
      const auto part = static_cast<std::int64_t>(parts[k]);
      limbs_[limb + k] += negative ? -part : part;
    }
    if (++pending_ == kAddsBeforeCarry) normalise();
  }

  // this += other (both exact: the result is the sum of everything either was given).
  void merge(const ExactSum& other) {
    for (int k = 0; k < kLimbs; ++k) limbs_[k] += other.limbs_[k];
    special_ += other.special_;
    pending_ += other.pending_ + 1;
    normalise();
  }

  // The sum rounded to a double: a function of the exact sum only (faithful: within an ulp).
  double value() const {
    if (special_ != 0.0 || std::isnan(special_)) return special_;
    ExactSum copy = *this;
    copy.normalise();
    int top = kLimbs - 1;
    while (top >= 0 && copy.limbs_[top] == 0) --top;
    if (top < 0) return 0.0;
    const bool negative = copy.limbs_[top] < 0;
    if (negative) {
      for (auto& limb : copy.limbs_) limb = -limb;
      copy.normalise();
      while (copy.limbs_[top] == 0) --top;
    }
    // Three limbs hold at least 65 significant bits, more than a double's 53: added from the top down.
    double magnitude = 0.0;
    for (int k = top; k >= 0 && k > top - 3; --k)
      magnitude += std::ldexp(static_cast<double>(copy.limbs_[k]), kLimbBits * k + kLowestExponent);
    return negative ? -magnitude : magnitude;
  }

  // Carries propagated: every limb but the top one in [0, 2^32), the top one signed. A unique form for each
  // sum, so merging the limbs as integers (MPI_SUM over ranks) is exact.
  void normalise() {
    for (int k = 0; k + 1 < kLimbs; ++k) {
      const std::int64_t carry = limbs_[k] >> kLimbBits;  // arithmetic shift: the floor of the division
      limbs_[k] -= carry * (std::int64_t{1} << kLimbBits);
      limbs_[k + 1] += carry;
    }
    pending_ = 0;
  }

  // The words, for a reduction over ranks (normalise() first; add as int64, then normalise again).
  std::array<std::int64_t, kLimbs>& limbs() { return limbs_; }
  double& special() { return special_; }

 private:
  static constexpr std::uint64_t kLimbMask = (std::uint64_t{1} << kLimbBits) - 1;
  // Each addition adds under 2^33 to a limb; carries are propagated long before an int64 could overflow.
  static constexpr std::int64_t kAddsBeforeCarry = std::int64_t{1} << 28;

  std::array<std::int64_t, kLimbs> limbs_{};
  double special_ = 0.0;
  std::int64_t pending_ = 0;
};

}  // namespace amgsolve
