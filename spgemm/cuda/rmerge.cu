// RMerge: SpGEMM by iterative row merging on the GPU.
//
// F. Gremse, A. Höfter, L. O. Schwen, F. Kiessling, U. Naumann, "GPU-accelerated sparse matrix-matrix
// multiplication by iterative row merging", SIAM J. Sci. Comput. 37(1), 2015, C54-C71
// (../shared/papers/rmerge-gremse-2015.txt). Implemented:
//   section 2.2, Fig. 2.2, Listing 1: MulLimited(G, B) for a G with at most W nonzeros per row, one output
//     row per sub-warp of W in {2, 4, 8, 16, 32} threads, shuffle min and sum, thread blocks of 128
//     (the kernels are in rmerge_kernels.cuh). Two passes: row lengths, an exclusive prefix sum into C's
//     int64 row offsets, fill. No shared memory, and no memory but C's.
//   section 2.3, Listing 2: a general A is split as A = A_k G_(k-1) ... G_1, every row of A_r cut into
//     ceil(nnz / W) rows of G_r and A_(r+1) adding them back up with ones; then B <- G_1 B, B <- G_2 B, ...,
//     C = A_k B. Each split divides the longest row by W (rounded up), so there are
//     ceil(log_W(longest row of A)) of them; the last product uses the smallest sub-warp that holds A_k's
//     longest row (SufficientSubWarpSize), e.g. 8 for a 7-point stencil A, which then needs no split.
// The decomposition is the one of the CPU version (rmerge_cpu.cpp), done on the device. As the paper
// notes, G_1 shares A's columns and values; the later factors are all ones with entry e in column e, so
// only their row offsets are stored (LeftFactor in rmerge_kernels.cuh).
//
// W, the sub-warp size of the splitting: 16 by default, the paper's choice (section 3.4, Fig. 3.5: 2.33
// against 2.22 Gflops on average for 16 and 32); a constructor argument, and for the registered backend
// the environment variable AMGSOLVE_RMERGE_WIDTH (2, 4, 8, 16 or 32), read once when the registry is
// filled (a bad value makes the backend unavailable, with the reason).
//
// Statistics (cudaEvents, summed over the rounds): symbolic_seconds covers the longest-row reduction, the
// splitting, the row-length passes, prefix sums and allocations; numeric_seconds the fill passes.
// extra_bytes is the peak of the device temporaries: the splitting's row offsets, the intermediate
// products (at most two at a time, section 2.3) and CUB's scan workspace; not the few bytes Thrust takes
// for the one longest-row reduction. The host <-> device copies are in none of them (see gpu_backend.cuh).
//
// Not done: the improvements of section 4 (rows finished early are still copied through the later
// rounds; no per-row choice of kernel).
//
// Tested against gustavson by tests/test_gpu.cpp (including a row long enough for two splits); whether that
// has run on a device yet, the description says (issue #26 tracks the first GPU run).
#include <cub/device/device_scan.cuh>
#include <thrust/execution_policy.h>
#include <thrust/functional.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/transform_reduce.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "common/cuda/check.cuh"
#include "common/cuda/event_timer.cuh"
#include "common/environment.hpp"
#include "sparse/cuda/device_csr.cuh"
#include "spgemm/cuda/gpu_backend.cuh"
#include "spgemm/cuda/rmerge.hpp"
#include "spgemm/cuda/rmerge_kernels.cuh"
#include "spgemm/registry.hpp"

namespace amgsolve {
namespace {

using rmerge::LeftFactor;
using rmerge::RightRows;

// Default sub-warp size of the splitting: the paper's, 16 (section 3.4: 2.33 Gflops on average against
// 2.22 for 32 and 2.10 for 8).
constexpr int kDefaultSubWarpSize = 16;
constexpr const char* kSubWarpSizeVariable = "AMGSOLVE_RMERGE_WIDTH";

// Launch shape of the simple per-row kernels of the splitting (grid-stride loops cover the rest).
constexpr int kRowBlock = 256;
constexpr Offset kMaxRowBlocks = 1 << 16;

// ---- Sub-warp sizes

bool is_sub_warp_size(long long W) { return W >= 2 && W <= 32 && (W & (W - 1)) == 0; }

int checked_sub_warp_size(int W) {
  if (!is_sub_warp_size(W))
    throw Error("SpGEMM backend 'rmerge': sub-warp size " + std::to_string(W) + " is not one of 2, 4, 8, 16, 32");
  return W;
}

// AMGSOLVE_RMERGE_WIDTH when set (and not empty), else the default.
int sub_warp_size_from_environment() {
  const std::string hint = "; SpGEMM backend 'rmerge' takes a sub-warp size of 2, 4, 8, 16 or 32";
  std::optional<long long> W;
  try {
    W = integer_from_environment(kSubWarpSizeVariable, 2, 32);
  } catch (const Error& e) {
    throw Error(e.what() + hint);
  }
  if (W && !is_sub_warp_size(*W)) throw Error(std::string(kSubWarpSizeVariable) + "=" + std::to_string(*W) + hint);
  return W ? static_cast<int>(*W) : kDefaultSubWarpSize;
}

// SufficientSubWarpSize of Listing 2: the smallest sub-warp size >= longest (a power of two, at least 2).
int sufficient_sub_warp_size(Offset longest) {
  int W = 2;
  while (W < longest) W *= 2;
  return W;
}

// Calls launch(std::integral_constant<int, W>{}): the kernels take W as a template argument, as in the
// paper, so that the reductions of Listing 1 unroll.
template <class Launch>
void with_sub_warp_size(int W, Launch&& launch) {
  switch (W) {
    case 2: return launch(std::integral_constant<int, 2>{});
    case 4: return launch(std::integral_constant<int, 4>{});
    case 8: return launch(std::integral_constant<int, 8>{});
    case 16: return launch(std::integral_constant<int, 16>{});
    case 32: return launch(std::integral_constant<int, 32>{});
  }
  checked_sub_warp_size(W);  // throws
}

// W x (128 / W) threads per block (section 2.2), one block per 128 / W rows.
template <int W>
dim3 sub_warp_block() {
  return dim3(W, rmerge::kBlockThreads / W);
}
template <int W>
dim3 sub_warp_grid(Index rows) {
  constexpr Offset rows_per_block = rmerge::kBlockThreads / W;
  return dim3(static_cast<unsigned>((Offset(rows) + rows_per_block - 1) / rows_per_block));
}

int row_blocks(Offset work) {
  return static_cast<int>(std::clamp<Offset>((work + kRowBlock - 1) / kRowBlock, 1, kMaxRowBlocks));
}

// ---- Bookkeeping

// Adds the device time since the previous call to one phase of the statistics.
class PhaseTimer {
 public:
  explicit PhaseTimer(SpgemmStats& stats) : stats_(stats) {}
  void count_as_symbolic() { stats_.symbolic_seconds += lap(); }
  void count_as_numeric() { stats_.numeric_seconds += lap(); }

 private:
  double lap() {
    const double seconds = timer_.seconds();
    timer_.restart();
    return seconds;
  }
  CudaEventTimer timer_;
  SpgemmStats& stats_;
};

template <class T>
std::uint64_t bytes_of(const DeviceArray<T>& array) {
  return static_cast<std::uint64_t>(array.size()) * sizeof(T);
}
template <class Value>
std::uint64_t bytes_of(const DeviceCsr<Value>& M) {
  return bytes_of(M.row_ptr) + bytes_of(M.col) + bytes_of(M.val);
}
template <class First, class Second, class... Rest>
std::uint64_t bytes_of(const First& first, const Second& second, const Rest&... rest) {
  return bytes_of(first) + bytes_of(second, rest...);
}

// Row lengths -> row offsets, with CUB's device-wide exclusive sum ("the rowStarts vector of C is computed
// using a parallel prefix sum", section 2.2). One workspace serves all the sums of a product; it only grows.
class OffsetScan {
 public:
  // `values` holds n lengths and one spare slot at the end. Afterwards values[i] is the sum of the lengths
  // before i and values[n] the total, which is returned.
  Offset lengths_to_offsets(DeviceArray<Offset>& values) {
    const std::size_t count = values.size();
    Offset* data = raw_data(values);
    AMGSOLVE_CUDA_CHECK(cudaMemset(data + count - 1, 0, sizeof(Offset)));  // the spare slot adds nothing
    std::size_t bytes = 0;
    AMGSOLVE_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, data, count));
    reserve(bytes);
    AMGSOLVE_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(raw_data(workspace_), bytes, data, count));
    Offset total = 0;
    AMGSOLVE_CUDA_CHECK(cudaMemcpy(&total, data + count - 1, sizeof(Offset), cudaMemcpyDeviceToHost));
    return total;
  }

  std::uint64_t bytes() const { return bytes_of(workspace_); }

 private:
  // At least one byte: CUB takes a null workspace as a request for its size and would not scan.
  void reserve(std::size_t bytes) {
    bytes = std::max<std::size_t>(bytes, 1);
    if (workspace_.size() >= bytes) return;
    workspace_.clear();
    workspace_.shrink_to_fit();  // freed before the larger one is allocated; its contents do not matter
    workspace_.resize(bytes);
  }

  DeviceArray<char> workspace_;
};

// ---- Section 2.3: splitting A_r = A_(r+1) G_r. Row i of A_r (entries row_ptr[i] .. row_ptr[i + 1] - 1)
// becomes ceil(length / W) consecutive rows of G_r, "chunks" of W of its entries in order (the last one
// shorter); row i of A_(r+1) has a one in the column of each of its chunks.

// chunks[i] = number of chunks of row i; chunks[rows] is the prefix sum's spare slot.
__global__ void count_chunks(Index rows, const Offset* __restrict__ row_ptr, int W, Offset* __restrict__ chunks) {
  const Offset stride = static_cast<Offset>(gridDim.x) * blockDim.x;
  for (Offset i = static_cast<Offset>(blockIdx.x) * blockDim.x + threadIdx.x; i < rows; i += stride)
    chunks[i] = (row_ptr[i + 1] - row_ptr[i] + W - 1) / W;
}

// chunk_ptr: G_r's row offsets into A_r's entries. Chunk c of row i starts (c - first_chunk[i]) W entries
// into the row; a row's last chunk ends where the next nonempty row's first chunk starts (empty rows have
// none), the very last one at row_ptr[rows], which the extra thread i = rows writes. One thread per row:
// the loop is long only for rows of many times W entries, whose merging costs far more.
__global__ void chunk_offsets(Index rows, const Offset* __restrict__ row_ptr, const Offset* __restrict__ first_chunk,
                              int W, Offset* __restrict__ chunk_ptr) {
  const Offset stride = static_cast<Offset>(gridDim.x) * blockDim.x;
  for (Offset i = static_cast<Offset>(blockIdx.x) * blockDim.x + threadIdx.x; i <= rows; i += stride) {
    if (i == rows) {
      chunk_ptr[first_chunk[rows]] = row_ptr[rows];
      continue;
    }
    const Offset first = first_chunk[i];
    for (Offset c = first; c < first_chunk[i + 1]; ++c) chunk_ptr[c] = row_ptr[i] + (c - first) * W;
  }
}

struct RowSplitting {
  DeviceArray<Offset> next_ptr;   // A_(r+1)'s row offsets: the first chunk of each row (rows + 1)
  DeviceArray<Offset> chunk_ptr;  // G_r's row offsets into A_r's entries (chunks + 1)
  Index chunks = 0;               // rows of G_r, and of the product G_r ... G_1 B
};

template <class Value>
RowSplitting split_rows(const LeftFactor<Value>& left, int W, OffsetScan& scan) {
  RowSplitting split;
  split.next_ptr.resize(static_cast<std::size_t>(left.rows) + 1);
  count_chunks<<<row_blocks(left.rows), kRowBlock>>>(left.rows, left.row_ptr, W, raw_data(split.next_ptr));
  AMGSOLVE_CUDA_CHECK_LAUNCH();
  const Offset chunks = scan.lengths_to_offsets(split.next_ptr);
  // The chunks are the rows of an intermediate product, whose row numbers are Index columns of A_(r+1).
  if (chunks > std::numeric_limits<Index>::max())
    throw Error("SpGEMM backend 'rmerge': splitting A into rows of " + std::to_string(W) + " gives " +
                std::to_string(chunks) + " rows, more than 32-bit indices can number");
  split.chunks = static_cast<Index>(chunks);
  split.chunk_ptr.resize(static_cast<std::size_t>(chunks) + 1);
  chunk_offsets<<<row_blocks(Offset(left.rows) + 1), kRowBlock>>>(left.rows, left.row_ptr, raw_data(split.next_ptr),
                                                                   W, raw_data(split.chunk_ptr));
  AMGSOLVE_CUDA_CHECK_LAUNCH();
  return split;
}

struct RowLength {
  const Offset* row_ptr;
  __host__ __device__ Offset operator()(Index i) const { return row_ptr[i + 1] - row_ptr[i]; }
};

// MaxRowLength of Listing 2 (a transform-reduce, section 2.1).
template <class Value>
Offset longest_row(const DeviceCsr<Value>& A) {
  if (A.rows == 0) return 0;
  return thrust::transform_reduce(thrust::device, thrust::counting_iterator<Index>(0),
                                  thrust::counting_iterator<Index>(A.rows), RowLength{raw_data(A.row_ptr)}, Offset(0),
                                  thrust::maximum<Offset>());
}

// ---- Section 2.2: MulLimited(G, B) = G B for G with at most W entries per row.

template <class Value>
RightRows<Value> rows_of(const DeviceCsr<Value>& B) {
  return {raw_data(B.row_ptr), raw_data(B.col), raw_data(B.val)};
}

template <class Value>
DeviceCsr<Value> mul_limited(int W, const LeftFactor<Value>& G, const DeviceCsr<Value>& B, OffsetScan& scan,
                             PhaseTimer& timer) {
  DeviceCsr<Value> C;
  C.rows = G.rows;
  C.cols = B.cols;
  C.row_ptr.resize(static_cast<std::size_t>(G.rows) + 1);
  if (G.rows > 0)  // no empty launches
    with_sub_warp_size(W, [&](auto width) {
      constexpr int kW = decltype(width)::value;
      rmerge::count_row_lengths<kW, Value>
          <<<sub_warp_grid<kW>(G.rows), sub_warp_block<kW>()>>>(G, rows_of(B), raw_data(C.row_ptr));
      AMGSOLVE_CUDA_CHECK_LAUNCH();
    });
  const Offset nnz = scan.lengths_to_offsets(C.row_ptr);
  C.col.resize(static_cast<std::size_t>(nnz));
  C.val.resize(static_cast<std::size_t>(nnz));
  timer.count_as_symbolic();
  if (nnz > 0)
    with_sub_warp_size(W, [&](auto width) {
      constexpr int kW = decltype(width)::value;
      rmerge::fill_rows<kW, Value><<<sub_warp_grid<kW>(G.rows), sub_warp_block<kW>()>>>(
          G, rows_of(B), raw_data(C.row_ptr), raw_data(C.col), raw_data(C.val));
      AMGSOLVE_CUDA_CHECK_LAUNCH();
    });
  timer.count_as_numeric();
  return C;
}

// ---- Section 2.3, Listing 2: the backend.

class RMerge : public GpuSpgemmBackend<RMerge> {
 public:
  explicit RMerge(int sub_warp_size = kDefaultSubWarpSize) : sub_warp_size_(checked_sub_warp_size(sub_warp_size)) {}

  std::string name() const override { return "rmerge"; }
  std::string description() const override {
    return "iterative row merging with sub-warps, A = A_k G_(k-1)..G_1, W = " + std::to_string(sub_warp_size_) +
           " (Gremse et al. 2015; not yet run on a GPU)";
  }

  template <class Value>
  DeviceCsr<Value> device_product(const DeviceCsr<Value>& A, const DeviceCsr<Value>& B, SpgemmStats& stats) const {
    const int W = sub_warp_size_;
    stats.symbolic_seconds = stats.numeric_seconds = 0;
    PhaseTimer timer(stats);
    OffsetScan scan;
    Offset longest = longest_row(A);
    timer.count_as_symbolic();

    LeftFactor<Value> left{A.rows, raw_data(A.row_ptr), raw_data(A.col), raw_data(A.val)};  // A_1 = A
    DeviceArray<Offset> left_ptr;  // A_r's row offsets for r >= 2
    DeviceCsr<Value> merged;       // G_(r-1) ... G_1 B for r >= 2
    const DeviceCsr<Value>* right = &B;
    std::uint64_t peak_bytes = 0;
    while (longest > W) {
      RowSplitting split = split_rows(left, W, scan);
      peak_bytes = std::max(peak_bytes, bytes_of(left_ptr, split.next_ptr, split.chunk_ptr, merged) + scan.bytes());
      const LeftFactor<Value> G{split.chunks, raw_data(split.chunk_ptr), left.col, left.val};
      left_ptr = std::move(split.next_ptr);  // G_r has its own offsets: A_r's are not needed any more
      left = LeftFactor<Value>{A.rows, raw_data(left_ptr), nullptr, nullptr};
      timer.count_as_symbolic();
      DeviceCsr<Value> product = mul_limited(W, G, *right, scan, timer);
      peak_bytes = std::max(peak_bytes, bytes_of(left_ptr, split.chunk_ptr, merged, product) + scan.bytes());
      merged = std::move(product);  // the previous intermediate is freed here
      right = &merged;
      longest = (longest + W - 1) / W;  // DivUp: the longest row of A_(r+1)
    }
    DeviceCsr<Value> C = mul_limited(sufficient_sub_warp_size(longest), left, *right, scan, timer);
    stats.extra_bytes = std::max(peak_bytes, bytes_of(left_ptr, merged) + scan.bytes());
    return C;
  }

 private:
  int sub_warp_size_;
};

// The registered instance: W from AMGSOLVE_RMERGE_WIDTH, read once when the registry is filled. A bad
// value makes this backend unavailable, saying why, instead of failing every use of the registry.
class RMergeFromEnvironment : public RMerge {
 public:
  RMergeFromEnvironment() : RMerge(kDefaultSubWarpSize) {
    try {
      static_cast<RMerge&>(*this) = RMerge(sub_warp_size_from_environment());
    } catch (const Error& e) {
      environment_error_ = e.what();
    }
  }
  std::string unavailable_reason() const override {
    return environment_error_.empty() ? RMerge::unavailable_reason() : environment_error_;
  }

 private:
  std::string environment_error_;
};

}  // namespace

std::unique_ptr<SpgemmBackend> make_rmerge_gpu(int sub_warp_size) { return std::make_unique<RMerge>(sub_warp_size); }

}  // namespace amgsolve

AMGSOLVE_REGISTER_SPGEMM(rmerge, RMergeFromEnvironment)
