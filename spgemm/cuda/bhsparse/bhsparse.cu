// bhSPARSE: GPU SpGEMM by upper-bound binning, with a heap, a bitonic ESC and a merge-path method.
//
// W. Liu and B. Vinter, "A framework for general sparse matrix-matrix multiplication on GPUs and
// heterogeneous processors", J. Parallel Distrib. Comput. 85 (2015) 47-61 (extended version of their
// IPDPS 2014 paper). The four stages of section 4.1, each in one place:
//   1. upper bound (Algorithm 2, below): u_i = sum over a_ik of nnz(B row k), the products of row i of C,
//      one thread per row, 64-bit;
//   2. binning (Algorithm 3, bins.cuh; below): each row goes to one of 38 bins by u_i, and the temporary
//      matrix C~ is pre-allocated by the hybrid method: u_i entries for rows with u_i <= 512, 256 for the
//      longer ones, which grow progressively in stage 3;
//   3. computing the rows of C into C~, one kernel per non-empty bin:
//        bin 1 (one product) and bins 2..32: one thread per row, the heap method (heap.cuh);
//        bins 33..36 (33..512 products):     one block per row, bitonic ESC in shared memory (bitonic_esc.cuh);
//        bin 37 (more than 512):             one block per row, merge path with 2x re-allocation in rounds
//                                            (long_rows.cuh, merge_path.cuh);
//      each also writes nnz(C_i);
//   4. arranging data (below): C's row offsets are the prefix sum of nnz(C_i); each row is copied from C~
//      (or from a long row's last space) to its place in C, one warp per row.
// Rows come out sorted with duplicates combined; explicit products that cancel are kept. Sums are taken in
// each method's order (heap order, sorting-network order, merge order), not the CPU's.
//
// Deviation: stage 2 runs on the GPU (a CUB radix sort of the row numbers by bin on 6 key bits, and one
// lower_bound per bin for the bin boundaries) instead of a CPU loop: U is already on the device, and only
// the 39 bin boundaries, the per-bin counters the paper keeps on the host, are copied back. The other
// deviations (exact fit test, repeated level-1 merges) are described in long_rows.cuh.
//
// Timing (cudaEvents; host <-> device copies of A, B and C are in neither, as for the other GPU backends):
//   symbolic_seconds: stages 1-3 and the prefix sum giving C's row offsets. bhSPARSE has no separate
//                     symbolic pass: stage 3 computes pattern and values together, and nnz(C) is known
//                     only after it;
//   numeric_seconds:  stage 4, allocating C's columns and values and copying the rows into them.
// extra_bytes is the peak of the device temporaries this file allocates (U, the bin arrays and CUB's sort
// space, C~ with its offsets, nnz(C_i), the long rows' state and every re-allocation round's space); the
// small scratch of Thrust's scans is not counted.
//
// Tested against gustavson by tests/test_gpu.cpp (GpuBackends/GpuSpgemm.MatchesGustavsonInDoubleAndFloat/
// bhsparse), whose inputs reach every bin group, the long rows' shared-memory re-allocation and their
// global-memory (level-1) rounds. Whether that has run on a device yet, the description says (issue #26
// tracks the first GPU run); block sizes, the 2048-entry scratchpad and the launch order are untuned.
#include <cub/device/device_radix_sort.cuh>
#include <thrust/binary_search.h>
#include <thrust/fill.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/scan.h>
#include <thrust/sequence.h>
#include <thrust/transform.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "common/cuda/check.cuh"
#include "common/cuda/event_timer.cuh"
#include "sparse/cuda/device_csr.cuh"
#include "spgemm/cuda/bhsparse/bins.cuh"
#include "spgemm/cuda/bhsparse/bitonic_esc.cuh"
#include "spgemm/cuda/bhsparse/device_views.cuh"
#include "spgemm/cuda/bhsparse/heap.cuh"
#include "spgemm/cuda/bhsparse/long_rows.cuh"
#include "spgemm/cuda/gpu_backend.cuh"
#include "spgemm/registry.hpp"

namespace amgsolve {
namespace bhsparse {
namespace {

constexpr int kThreads = 256;  // one-thread-per-item kernels
constexpr int kWarp = 32;

// ---- Stage 1: upper bounds (Algorithm 2)

template <class Value>
__global__ void count_row_products(ProductView<Value> m, Index rows, Offset* upper_bound) {
  const Offset stride = static_cast<Offset>(gridDim.x) * blockDim.x;
  for (Offset i = static_cast<Offset>(blockIdx.x) * blockDim.x + threadIdx.x; i < rows; i += stride) {
    Offset products = 0;
    for (Offset p = m.A.begin(i); p < m.A.end(i); ++p) products += m.products_of_entry(p);
    upper_bound[i] = products;
  }
}

template <class Value>
DeviceArray<Offset> row_upper_bounds(const ProductView<Value>& m, Index rows, TemporaryBytes& tally) {
  DeviceArray<Offset> upper_bound(static_cast<std::size_t>(rows));
  tally.allocated(upper_bound);
  count_row_products<Value><<<blocks_for(rows, kThreads), kThreads>>>(m, rows, raw_data(upper_bound));
  check_launch();
  return upper_bound;
}

// ---- Stage 2: binning (Algorithm 3) and the hybrid pre-allocation of C~

// The rows of C grouped by bin; the bin boundaries on the host decide which kernels stage 3 launches.
struct Bins {
  DeviceArray<Index> rows;   // row numbers, by bin, ascending within a bin (the radix sort is stable)
  std::vector<Offset> begin;  // bin b holds rows[begin[b], begin[b + 1])

  const Index* rows_of(int bin) const { return raw_data(rows) + begin[bin]; }
  Offset size(int bin) const { return begin[bin + 1] - begin[bin]; }
  // Consecutive bins [first, last] are consecutive in `rows`.
  Offset size(int first, int last) const { return begin[last + 1] - begin[first]; }
};

Bins bin_rows(const DeviceArray<Offset>& upper_bound, TemporaryBytes& tally) {
  const std::size_t rows = upper_bound.size();
  DeviceArray<BinId> bin(rows), sorted_bin(rows);
  DeviceArray<Index> row(rows);
  Bins bins;
  bins.rows.resize(rows);
  tally.allocated(bin);
  tally.allocated(sorted_bin);
  tally.allocated(row);
  tally.allocated(bins.rows);
  thrust::transform(upper_bound.begin(), upper_bound.end(), bin.begin(), BinOfRow{});
  thrust::sequence(row.begin(), row.end());

  std::size_t sort_bytes = 0;
  const auto sort = [&](void* space) {
    AMGSOLVE_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(space, sort_bytes, raw_data(bin), raw_data(sorted_bin),
                                                        raw_data(row), raw_data(bins.rows), static_cast<Offset>(rows),
                                                        0, kBinBits));
  };
  sort(nullptr);  // asks for the size of the sort's space
  // At least one byte: a null space would make the second call another size query instead of the sort.
  DeviceArray<unsigned char> sort_space(std::max<std::size_t>(sort_bytes, 1));
  tally.allocated(sort_space);
  sort(raw_data(sort_space));
  tally.released(sort_space);
  tally.released(bin);
  tally.released(row);

  // Bin b starts at the first sorted bin id >= b; b = kBinCount gives the end.
  DeviceArray<Offset> begin(kBinCount + 1);
  thrust::lower_bound(sorted_bin.begin(), sorted_bin.end(), thrust::counting_iterator<int>(0),
                      thrust::counting_iterator<int>(kBinCount + 1), begin.begin());
  download(begin, bins.begin);
  tally.released(sorted_bin);
  return bins;
}

// The temporary matrix C~ of section 4.1: row i has room for preallocated_size(u_i) entries from offset[i].
template <class Value>
struct TemporaryMatrix {
  DeviceArray<Offset> offset;
  DeviceArray<Index> col;
  DeviceArray<Value> val;

  RowOutput<Value> output(Offset* row_nnz) { return {raw_data(offset), raw_data(col), raw_data(val), row_nnz}; }
};

template <class Value>
TemporaryMatrix<Value> preallocate(const DeviceArray<Offset>& upper_bound, TemporaryBytes& tally) {
  const std::size_t rows = upper_bound.size();
  TemporaryMatrix<Value> c_tilde;
  c_tilde.offset.resize(rows + 1);
  tally.allocated(c_tilde.offset);
  thrust::fill_n(c_tilde.offset.begin(), 1, Offset(0));
  const auto sizes = thrust::make_transform_iterator(upper_bound.begin(), PreallocatedSize{});
  thrust::inclusive_scan(sizes, sizes + rows, c_tilde.offset.begin() + 1);
  const Offset entries = c_tilde.offset.back();  // nnz(C~), line 28 of Algorithm 3
  c_tilde.col.resize(static_cast<std::size_t>(entries));
  c_tilde.val.resize(static_cast<std::size_t>(entries));
  tally.allocated(c_tilde.col);
  tally.allocated(c_tilde.val);
  return c_tilde;
}

// ---- Stage 3: the rows of bins 1..36 (bin 37 is LongRows, long_rows.cuh)

template <int kSlots, class Value>
void launch_bitonic_esc(const ProductView<Value>& m, const Bins& bins, int bin, const RowOutput<Value>& out) {
  static_assert(kSlots >= 64 && kSlots <= 512, "bin group 4");
  const Offset count = bins.size(bin);
  if (count == 0) return;
  bitonic_esc_rows<kSlots, Value><<<blocks_for(count, 1), esc_threads<kSlots>()>>>(m, bins.rows_of(bin), count, out);
  check_launch();
}

template <class Value>
void compute_short_rows(const ProductView<Value>& m, const Bins& bins, const RowOutput<Value>& out) {
  if (const Offset count = bins.size(kSingleProductBin); count > 0) {
    single_product_rows<Value>
        <<<blocks_for(count, kThreads), kThreads>>>(m, bins.rows_of(kSingleProductBin), count, out);
    check_launch();
  }
  for (int bin = kFirstHeapBin; bin <= kLastHeapBin; ++bin) {  // "31 GPU kernel programs ... if not empty"
    const Offset count = bins.size(bin);
    if (count == 0) continue;
    heap_rows<Value><<<blocks_for(count, kHeapThreads), kHeapThreads, heap_shared_bytes<Value>(bin)>>>(
        m, bins.rows_of(bin), count, bin, out);
    check_launch();
  }
  static_assert(kLastEscBin - kFirstEscBin == 3, "one launch per bin of group 4 below");
  launch_bitonic_esc<esc_slots(kFirstEscBin)>(m, bins, kFirstEscBin, out);
  launch_bitonic_esc<esc_slots(kFirstEscBin + 1)>(m, bins, kFirstEscBin + 1, out);
  launch_bitonic_esc<esc_slots(kFirstEscBin + 2)>(m, bins, kFirstEscBin + 2, out);
  launch_bitonic_esc<esc_slots(kFirstEscBin + 3)>(m, bins, kFirstEscBin + 3, out);
}

// C's row offsets from the row sizes; returns nnz(C).
Offset row_offsets(const DeviceArray<Offset>& row_nnz, DeviceArray<Offset>& row_ptr) {
  row_ptr.resize(row_nnz.size() + 1);
  thrust::fill_n(row_ptr.begin(), 1, Offset(0));
  thrust::inclusive_scan(row_nnz.begin(), row_nnz.end(), row_ptr.begin() + 1);
  return row_ptr.back();
}

// ---- Stage 4: arranging data

template <class Value>
__device__ void copy_row_with_warp(const Index* from_col, const Value* from_val, Offset length, Index* to_col,
                                   Value* to_val) {
  for (Offset e = threadIdx.x % kWarp; e < length; e += kWarp) {
    to_col[e] = from_col[e];
    to_val[e] = from_val[e];
  }
}

__device__ inline Offset first_warp() { return (static_cast<Offset>(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp; }
__device__ inline Offset warp_count() { return static_cast<Offset>(gridDim.x) * blockDim.x / kWarp; }

// Rows of bins 1..36, which stage 3 left in C~.
template <class Value>
__global__ void copy_rows_from_c_tilde(const Index* rows, Offset count, RowOutput<Value> c_tilde, const Offset* c_row_ptr,
                                       Index* c_col, Value* c_val) {
  for (Offset r = first_warp(); r < count; r += warp_count()) {
    const Index row = rows[r];
    const Offset from = c_tilde.offset[row], to = c_row_ptr[row];
    copy_row_with_warp(c_tilde.col + from, c_tilde.val + from, c_row_ptr[row + 1] - to, c_col + to, c_val + to);
  }
}

// Rows of bin 37, from wherever their last round left them.
template <class Value>
__global__ void copy_long_rows(LongRowsView<Value> long_rows, Offset count, const Offset* c_row_ptr, Index* c_col,
                               Value* c_val) {
  for (Offset j = first_warp(); j < count; j += warp_count()) {
    const Index row = long_rows.rows[j];
    const Offset to = c_row_ptr[row];
    copy_row_with_warp(long_rows.sequence_col[j], long_rows.sequence_val[j], c_row_ptr[row + 1] - to, c_col + to,
                       c_val + to);
  }
}

template <class Value>
void arrange(DeviceCsr<Value>& C, Offset nnz, const Bins& bins, const RowOutput<Value>& c_tilde,
             LongRows<Value>& long_rows) {
  C.col.resize(static_cast<std::size_t>(nnz));
  C.val.resize(static_cast<std::size_t>(nnz));
  constexpr Offset kRowsPerBlock = kThreads / kWarp;
  // Bin 0's rows are empty; bins 1..36 are consecutive in bins.rows.
  if (const Offset count = bins.size(kSingleProductBin, kLastEscBin); count > 0) {
    copy_rows_from_c_tilde<Value><<<blocks_for(count, kRowsPerBlock), kThreads>>>(
        bins.rows_of(kSingleProductBin), count, c_tilde, raw_data(C.row_ptr), raw_data(C.col), raw_data(C.val));
    check_launch();
  }
  if (const Offset count = long_rows.count(); count > 0) {
    copy_long_rows<Value><<<blocks_for(count, kRowsPerBlock), kThreads>>>(long_rows.view(), count, raw_data(C.row_ptr),
                                                                          raw_data(C.col), raw_data(C.val));
    check_launch();
  }
}

}  // namespace
}  // namespace bhsparse

namespace {

class Bhsparse : public GpuSpgemmBackend<Bhsparse> {
 public:
  std::string name() const override { return "bhsparse"; }
  std::string description() const override {
    return "bhSPARSE (Liu & Vinter 2015): upper-bound bins; heap, bitonic ESC and merge path with 2x re-allocation "
           "(not yet run on a GPU)";
  }

  template <class Value>
  DeviceCsr<Value> device_product(const DeviceCsr<Value>& A, const DeviceCsr<Value>& B, SpgemmStats& stats) const {
    using namespace bhsparse;
    TemporaryBytes tally;
    CudaEventTimer timer;
    const ProductView<Value> m{view_of(A), view_of(B)};

    DeviceArray<Offset> upper_bound = row_upper_bounds(m, A.rows, tally);  // stage 1
    const Bins bins = bin_rows(upper_bound, tally);                          // stage 2
    TemporaryMatrix<Value> c_tilde = preallocate<Value>(upper_bound, tally);
    tally.released(upper_bound);

    DeviceArray<Offset> row_nnz(static_cast<std::size_t>(A.rows), Offset(0));  // stage 3 (bin 0 stays 0)
    tally.allocated(row_nnz);
    const RowOutput<Value> out = c_tilde.output(raw_data(row_nnz));
    compute_short_rows(m, bins, out);
    LongRows<Value> long_rows(bins.rows_of(kLongRowBin), bins.size(kLongRowBin), tally);
    long_rows.compute(m, out, B.cols, raw_data(row_nnz), tally);

    DeviceCsr<Value> C;
    C.rows = A.rows;
    C.cols = B.cols;
    const Offset nnz = row_offsets(row_nnz, C.row_ptr);
    stats.symbolic_seconds = timer.seconds();

    timer.restart();
    arrange(C, nnz, bins, out, long_rows);  // stage 4
    stats.numeric_seconds = timer.seconds();
    stats.extra_bytes = tally.peak();
    return C;
  }
};

}  // namespace
}  // namespace amgsolve

AMGSOLVE_REGISTER_SPGEMM(bhsparse, Bhsparse)
