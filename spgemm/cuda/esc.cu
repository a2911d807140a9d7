// Baseline: expand-sort-compress (ESC) SpGEMM with Thrust, the method of CUSP.
//
// N. Bell, S. Dalton and L. N. Olson, "Exposing fine-grained parallelism in algebraic multigrid methods",
// SIAM J. Sci. Comput. 34(4), 2012, C123-C152, section on sparse matrix-matrix multiplication
// (expand-sort-compress). Every product is one independent unit of work, whatever the row lengths:
//   expand:   write every nontrivial product a_ik * b_kj as a (key, value) pair, key = i << 32 | j
//             (i, j >= 0, so the unsigned key orders by row, then column); product p belongs to the
//             entry a_ik found by binary search in the running sum of nnz(B row k) over A's entries;
//   sort:     thrust::sort_by_key on the 64-bit keys (a radix sort); the order among equal keys does
//             not matter because they are summed next;
//   compress: thrust::reduce_by_key sums each run of equal keys into one entry of C; C's columns are
//             the keys' low halves and row i starts where the first key of row >= i lies.
// The cost is memory: all products at once, twice over during the sort, so products that would not fit
// in the free device memory are refused with an Error before anything is expanded.
//
// ESC has no separate symbolic pass. symbolic_seconds covers the work until C's pattern and nnz are
// known (count, expand, sort, count distinct keys), numeric_seconds the compression into C. Both are
// timed with cudaEvents; the host <-> device copies of A, B and C are in neither (SpgemmStats has no field
// for them, and a device-resident caller would not make them).
#include <thrust/binary_search.h>
#include <thrust/functional.h>
#include <thrust/inner_product.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/reduce.h>
#include <thrust/scan.h>
#include <thrust/sort.h>
#include <thrust/transform.h>

#include <algorithm>
#include <cstdint>

#include "common/cuda/check.cuh"
#include "common/cuda/event_timer.cuh"
#include "sparse/cuda/device_csr.cuh"
#include "spgemm/cuda/gpu_backend.cuh"
#include "spgemm/registry.hpp"

namespace amgsolve {
namespace {

using Key = std::uint64_t;

constexpr int kBlock = 256;
constexpr Offset kMaxBlocks = 1 << 16;  // grid-stride loops cover the rest

__host__ __device__ inline Key pack(Offset row, Index col) {
  return (static_cast<Key>(row) << 32) | static_cast<std::uint32_t>(col);
}

struct RowOfKey {
  __host__ __device__ Offset operator()(Key key) const { return static_cast<Offset>(key >> 32); }
};

struct ColumnOfKey {
  __host__ __device__ Index operator()(Key key) const { return static_cast<Index>(key & 0xffffffffu); }
};

// Products contributed by each entry a_ik of A: the length of row k of B.
struct ProductsOfEntry {
  const Offset* b_row_ptr;
  __host__ __device__ Offset operator()(Index k) const { return b_row_ptr[k + 1] - b_row_ptr[k]; }
};

// The segment s in [0, segments) with offsets[s] <= position < offsets[s + 1], for non-decreasing offsets
// starting at 0 (upper_bound - 1, so empty segments are skipped).
__device__ Offset segment_of(const Offset* offsets, Offset segments, Offset position) {
  Offset low = 0, high = segments;
  while (high - low > 1) {
    const Offset middle = low + (high - low) / 2;
    if (offsets[middle] <= position)
      low = middle;
    else
      high = middle;
  }
  return low;
}

// Expand: product p -> (key, a_ik * b_kj). first[s] is the position of entry s of A's first product.
template <class Value>
__global__ void expand(Offset products, Index a_rows, Offset a_nnz, const Offset* __restrict__ a_row_ptr,
                       const Index* __restrict__ a_col, const Value* __restrict__ a_val,
                       const Offset* __restrict__ first, const Offset* __restrict__ b_row_ptr,
                       const Index* __restrict__ b_col, const Value* __restrict__ b_val, Key* __restrict__ key,
                       Value* __restrict__ value) {
  const Offset stride = static_cast<Offset>(gridDim.x) * blockDim.x;
  for (Offset p = static_cast<Offset>(blockIdx.x) * blockDim.x + threadIdx.x; p < products; p += stride) {
    const Offset s = segment_of(first, a_nnz, p);         // the entry a_ik
    const Offset i = segment_of(a_row_ptr, a_rows, s);    // its row
    const Offset b = b_row_ptr[a_col[s]] + (p - first[s]);  // the entry b_kj
    key[p] = pack(i, b_col[b]);
    value[p] = a_val[s] * b_val[b];
  }
}

int blocks_for(Offset work) { return static_cast<int>(std::min(kMaxBlocks, (work + kBlock - 1) / kBlock)); }

// Device memory a product needs per expanded product, at the larger of two peaks: the sort's (the pairs
// twice: the radix sort's double buffer) and the compression's (the sorted pairs, and for each of up to as
// many distinct keys its key, column and value: C before its size is known, nnz(C) <= products).
template <class Value>
constexpr std::uint64_t bytes_per_product() {
  const std::uint64_t pair = sizeof(Key) + sizeof(Value);
  return std::max<std::uint64_t>(2 * pair, pair + sizeof(Key) + sizeof(Index) + sizeof(Value));
}

// Peak device memory beyond A and B: bytes_per_product for every product, the 64-bit first-product offsets
// and C's row offsets.
template <class Value>
std::uint64_t expansion_bytes(Offset products, Offset a_nnz, Index rows) {
  return static_cast<std::uint64_t>(products) * bytes_per_product<Value>() +
         static_cast<std::uint64_t>(a_nnz) * sizeof(Offset) + (static_cast<std::uint64_t>(rows) + 1) * sizeof(Offset);
}

template <class Value>
void require_expansion_fits(Offset products, Offset a_nnz, Index rows) {
  std::size_t free_bytes = 0, total_bytes = 0;
  AMGSOLVE_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  // Compared per product first, so that the byte count cannot overflow for absurd product counts.
  const bool fits = static_cast<std::uint64_t>(products) <= free_bytes / bytes_per_product<Value>() &&
                    expansion_bytes<Value>(products, a_nnz, rows) <= free_bytes;
  if (!fits)
    throw Error("SpGEMM backend 'esc' cannot expand " + std::to_string(products) + " products: that needs " +
                std::to_string(expansion_bytes<Value>(products, a_nnz, rows) >> 20) + " MiB of GPU memory, " +
                std::to_string(free_bytes >> 20) + " MiB are free");
}

// Keys and values of every product, sorted by key; returns the number of distinct keys, nnz(C).
template <class Value>
Offset expand_and_sort(const DeviceCsr<Value>& A, const DeviceCsr<Value>& B, Offset products,
                       DeviceArray<Key>& keys, DeviceArray<Value>& values) {
  DeviceArray<Offset> first(static_cast<std::size_t>(A.nnz()));
  thrust::transform(A.col.begin(), A.col.end(), first.begin(), ProductsOfEntry{raw_data(B.row_ptr)});
  thrust::exclusive_scan(first.begin(), first.end(), first.begin());
  keys.resize(static_cast<std::size_t>(products));
  values.resize(static_cast<std::size_t>(products));
  expand<Value><<<blocks_for(products), kBlock>>>(products, A.rows, A.nnz(), raw_data(A.row_ptr), raw_data(A.col),
                                                  raw_data(A.val), raw_data(first), raw_data(B.row_ptr),
                                                  raw_data(B.col), raw_data(B.val), raw_data(keys), raw_data(values));
  AMGSOLVE_CUDA_CHECK_LAUNCH();
  first.clear();
  first.shrink_to_fit();  // freed before the sort allocates its buffers
  thrust::sort_by_key(keys.begin(), keys.end(), values.begin());
  // Distinct keys: the first one plus every key that differs from its predecessor.
  return thrust::inner_product(keys.begin() + 1, keys.end(), keys.begin(), Offset(1), thrust::plus<Offset>(),
                               thrust::not_equal_to<Key>());
}

// Sums equal keys into C and builds its row offsets.
template <class Value>
DeviceCsr<Value> compress(Index rows, Index cols, Offset nnz, const DeviceArray<Key>& keys,
                          const DeviceArray<Value>& values) {
  DeviceCsr<Value> C;
  C.rows = rows;
  C.cols = cols;
  DeviceArray<Key> unique_keys(static_cast<std::size_t>(nnz));
  C.val.resize(static_cast<std::size_t>(nnz));
  thrust::reduce_by_key(keys.begin(), keys.end(), values.begin(), unique_keys.begin(), C.val.begin());
  C.col.resize(static_cast<std::size_t>(nnz));
  thrust::transform(unique_keys.begin(), unique_keys.end(), C.col.begin(), ColumnOfKey{});
  // row_ptr[i] = number of entries in rows < i: a vectorised lower_bound of i in the sorted row numbers.
  const auto row_of = thrust::make_transform_iterator(unique_keys.begin(), RowOfKey{});
  C.row_ptr.resize(static_cast<std::size_t>(rows) + 1);
  thrust::lower_bound(row_of, row_of + nnz, thrust::counting_iterator<Offset>(0),
                      thrust::counting_iterator<Offset>(Offset(rows) + 1), C.row_ptr.begin());
  return C;
}

class ExpandSortCompress : public GpuSpgemmBackend<ExpandSortCompress> {
 public:
  std::string name() const override { return "esc"; }
  std::string description() const override {
    return "baseline: expand-sort-compress with Thrust (CUSP; Bell, Dalton & Olson 2012)";
  }

  template <class Value>
  DeviceCsr<Value> device_product(const DeviceCsr<Value>& A, const DeviceCsr<Value>& B, SpgemmStats& stats) const {
    require_expansion_fits<Value>(stats.multiplications, A.nnz(), A.rows);
    CudaEventTimer timer;
    DeviceArray<Key> keys;
    DeviceArray<Value> values;
    const Offset nnz = expand_and_sort(A, B, stats.multiplications, keys, values);
    stats.symbolic_seconds = timer.seconds();
    timer.restart();
    DeviceCsr<Value> C = compress(A.rows, B.cols, nnz, keys, values);
    stats.numeric_seconds = timer.seconds();
    stats.extra_bytes = expansion_bytes<Value>(stats.multiplications, A.nnz(), A.rows);
    return C;
  }
};

}  // namespace
}  // namespace amgsolve

AMGSOLVE_REGISTER_SPGEMM(esc, ExpandSortCompress)
