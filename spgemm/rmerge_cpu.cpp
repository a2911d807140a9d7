// Iterative row merging (RMerge) on the CPU.
//
// F. Gremse, A. Höfter, L. O. Schwen, F. Kiessling, U. Naumann, "GPU-accelerated sparse matrix-matrix
// multiplication by iterative row merging", SIAM J. Sci. Comput. 37(1), 2015, C54-C71
// (../shared/papers/rmerge-gremse-2015.txt), sections 2.2-2.3 and Listing 2.
//
// MulLimited(G, B): for a left factor with at most W nonzeros per row, each output row merges at most W
// sorted rows of B: W cursors, repeatedly take the minimal column among them (the paper's sub-warp min
// reduction), add up the scaled values at that column (its sub-warp sum) and advance those cursors.
// Two passes: row lengths, prefix sum, fill.
// General A: split A = A_k G_{k-1} ... G_1 so that every factor has at most W nonzeros per row (each row
// of A_i becomes ceil(nnz/W) rows of G_i; A_{i+1} sums those rows with weight one) and multiply from the
// right: B <- G_1 B, B <- G_2 B, ..., C = A_k B. The number of rounds grows as log_W(longest row of A).
// W = 32 by default (the GPU's warp, the paper's largest sub-warp); a constructor argument
// (make_rmerge_cpu), and for the registered backend the environment variable AMGSOLVE_RMERGE_CPU_WIDTH
// (2 to 65536). The last product uses the smallest power of two >= its longest row, as the paper does.
#include "spgemm/rmerge_cpu.hpp"

#include <algorithm>
#include <bit>
#include <limits>
#include <string>
#include <vector>

#include "common/environment.hpp"
#include "common/error.hpp"
#include "common/parallel.hpp"
#include "common/timer.hpp"
#include "spgemm/product_memory.hpp"
#include "spgemm/registry.hpp"

namespace amgsolve {
namespace {

template <class Value>
Index longest_row(const CsrMatrix<Value>& A) {
  Index longest = 0;
#pragma omp parallel for schedule(static) reduction(max : longest)
  for (Index i = 0; i < A.rows; ++i) longest = std::max(longest, A.row_length(i));
  return longest;
}

// A = A_next * G, with G's rows the chunks of at most W entries of A's rows and A_next of ones.
template <class Value>
void decompose(const CsrMatrix<Value>& A, Index W, CsrMatrix<Value>& A_next, CsrMatrix<Value>& G) {
  std::vector<Offset> first_chunk(static_cast<std::size_t>(A.rows) + 1, 0);
  for (Index i = 0; i < A.rows; ++i) first_chunk[i + 1] = first_chunk[i] + (Offset{A.row_length(i)} + W - 1) / W;
  if (first_chunk.back() > std::numeric_limits<Index>::max())  // the chunks are G's rows, A_next's columns
    throw Error("rmerge-cpu: " + std::to_string(first_chunk.back()) + " chunks of " + std::to_string(W) +
                " entries are more than 2^31 - 1 rows; a larger AMGSOLVE_RMERGE_CPU_WIDTH or another backend "
                "multiplies it");
  const auto chunks = static_cast<Index>(first_chunk.back());
  G = CsrMatrix<Value>(chunks, A.cols);
  A_next = CsrMatrix<Value>(A.rows, chunks);
  for (Index i = 0; i < A.rows; ++i) {
    A_next.row_ptr[i + 1] = first_chunk[i + 1];
    for (Offset c = first_chunk[i]; c < first_chunk[i + 1]; ++c)
      G.row_ptr[c + 1] = std::min<Offset>(A.row_begin(i) + (c - first_chunk[i] + 1) * W, A.row_end(i));
  }
  G.col.assign(A.col.begin(), A.col.end());  // G holds A's entries in A's order
  G.val.assign(A.val.begin(), A.val.end());
  A_next.col.resize(static_cast<std::size_t>(chunks));
  A_next.val.assign(static_cast<std::size_t>(chunks), Value(1));
  for (Index c = 0; c < chunks; ++c) A_next.col[c] = c;
}

// Merges the rows of B selected by row i of G (at most W of them); emit(col, value) per output entry.
template <class Value, class Emit>
void merge_row(const CsrMatrix<Value>& G, const CsrMatrix<Value>& B, Index i, Offset* pos, Offset* end,
               Value* weight, Emit&& emit) {
  int active = 0;
  for (Offset k = G.row_begin(i); k < G.row_end(i); ++k) {
    const Index r = G.col[k];
    if (B.row_length(r) == 0) continue;
    pos[active] = B.row_begin(r);
    end[active] = B.row_end(r);
    weight[active] = G.val[k];
    ++active;
  }
  while (active > 0) {
    Index col = B.col[pos[0]];
    for (int c = 1; c < active; ++c) col = std::min(col, B.col[pos[c]]);
    Value sum = 0;
    for (int c = 0; c < active;) {
      if (B.col[pos[c]] == col) {
        sum += weight[c] * B.val[pos[c]];
        if (++pos[c] == end[c]) {  // row exhausted: move the last cursor into its slot
          --active;
          pos[c] = pos[active];
          end[c] = end[active];
          weight[c] = weight[active];
          continue;
        }
      }
      ++c;
    }
    emit(col, sum);
  }
}

// C = G B for G with at most W nonzeros per row (MulLimited, section 2.2); adds its pass times to stats.
template <class Value>
CsrMatrix<Value> mul_limited(const CsrMatrix<Value>& G, const CsrMatrix<Value>& B, Index W, SpgemmStats& stats) {
  CsrMatrix<Value> C(G.rows, B.cols);
  Timer timer;
#pragma omp parallel
  {
    std::vector<Offset> pos(static_cast<std::size_t>(W)), end(static_cast<std::size_t>(W));
    std::vector<Value> weight(static_cast<std::size_t>(W));
#pragma omp for schedule(dynamic, 256)
    for (Index i = 0; i < G.rows; ++i) {
      Offset count = 0;
      merge_row(G, B, i, pos.data(), end.data(), weight.data(), [&](Index, Value) { ++count; });
      C.row_ptr[static_cast<std::size_t>(i) + 1] = count;
    }
  }
  allocate_product(C, "rmerge-cpu");
  stats.symbolic_seconds += timer.seconds();
  timer.restart();
#pragma omp parallel
  {
    std::vector<Offset> pos(static_cast<std::size_t>(W)), end(static_cast<std::size_t>(W));
    std::vector<Value> weight(static_cast<std::size_t>(W));
#pragma omp for schedule(dynamic, 256)
    for (Index i = 0; i < G.rows; ++i) {
      Offset out = C.row_begin(i);
      merge_row(G, B, i, pos.data(), end.data(), weight.data(), [&](Index col, Value v) {
        C.col[out] = col;
        C.val[out++] = v;
      });
    }
  }
  stats.numeric_seconds += timer.seconds();
  return C;
}

class RMergeCpu : public SpgemmBackendFor<RMergeCpu> {
 public:
  explicit RMergeCpu(Index merge_width = kDefaultRMergeCpuWidth) : merge_width_(checked_width(merge_width)) {}

  std::string name() const override { return "rmerge-cpu"; }
  std::string description() const override {
    return "OpenMP iterative row merging, A = A_k G_(k-1)..G_1, W = " + std::to_string(merge_width_) +
           " (Gremse et al. 2015)";
  }
  BackendKind runs_on() const override { return BackendKind::cpu; }

  template <class Value>
  CsrMatrix<Value> product(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, SpgemmStats& stats) const {
    const Index W = merge_width_;
    stats.multiplications = spgemm_multiplications(A, B);
    // left * right is the product still to do: A * B at first, A_(i+1) * (G_i ... G_1 B) after round i.
    const CsrMatrix<Value>* left = &A;
    const CsrMatrix<Value>* right = &B;
    CsrMatrix<Value> owned_left, owned_right, split_left, split_g;
    Index longest = longest_row(A);
    std::uint64_t peak = 0;
    while (longest > W) {
      decompose(*left, W, split_left, split_g);
      CsrMatrix<Value> merged = mul_limited(split_g, *right, W, stats);
      // Held at once: the previous round's factor and product, this round's factors and product.
      peak = std::max<std::uint64_t>(peak, owned_left.bytes() + owned_right.bytes() + split_left.bytes() +
                                               split_g.bytes() + merged.bytes());
      owned_right = std::move(merged);
      owned_left = std::move(split_left);
      right = &owned_right;
      left = &owned_left;
      longest = static_cast<Index>((Offset{longest} + W - 1) / W);
    }
    const Index width = std::max<Index>(1, static_cast<Index>(std::bit_ceil(static_cast<std::uint32_t>(std::max<Index>(longest, 1)))));
    CsrMatrix<Value> C = mul_limited(*left, *right, width, stats);
    stats.nnz = C.nnz();
    stats.extra_bytes = peak;
    return C;
  }

 private:
  static Index checked_width(Index W) {
    if (W < kLeastRMergeCpuWidth || W > kMostRMergeCpuWidth)
      throw InputError("SpGEMM backend 'rmerge-cpu': merge width " + std::to_string(W) + " is not from " +
                       std::to_string(kLeastRMergeCpuWidth) + " to " + std::to_string(kMostRMergeCpuWidth));
    return W;
  }

  Index merge_width_;
};

// The registered instance: W from AMGSOLVE_RMERGE_CPU_WIDTH, read once when the registry is filled. A
// bad value makes this backend unavailable, saying why, instead of failing every use of the registry.
class RMergeCpuFromEnvironment : public RMergeCpu {
 public:
  RMergeCpuFromEnvironment() : RMergeCpuFromEnvironment(width_from_environment()) {}
  std::string unavailable_reason() const override { return environment_error_; }

 private:
  struct Setting {
    Index width = kDefaultRMergeCpuWidth;
    std::string error;  // why the variable's value cannot be used
  };
  explicit RMergeCpuFromEnvironment(const Setting& s) : RMergeCpu(s.width), environment_error_(s.error) {}

  static Setting width_from_environment() {
    Setting s;
    try {
      if (const auto W = integer_from_environment(kRMergeCpuWidthVariable, kLeastRMergeCpuWidth, kMostRMergeCpuWidth))
        s.width = static_cast<Index>(*W);
    } catch (const Error& e) {
      s.error = e.what();
    }
    return s;
  }

  std::string environment_error_;
};

}  // namespace
}  // namespace amgsolve

namespace amgsolve {

std::unique_ptr<SpgemmBackend> make_rmerge_cpu(Index merge_width) { return std::make_unique<RMergeCpu>(merge_width); }

}  // namespace amgsolve

AMGSOLVE_REGISTER_SPGEMM(rmerge_cpu, RMergeCpuFromEnvironment)
