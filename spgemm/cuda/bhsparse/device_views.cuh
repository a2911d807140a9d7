#pragma once
// What the bhsparse kernels see (spgemm/cuda/bhsparse/): raw device pointers to A and B, to the temporary
// matrix C~ and to the row sizes of C, plus the launch helpers every bin family uses. Kernels cannot take a
// DeviceArray, so the driver (bhsparse.cu) hands them these small views by value.
#include <algorithm>
#include <cstdint>
#include <limits>

#include "common/cuda/check.cuh"
#include "sparse/cuda/device_csr.cuh"

namespace amgsolve::bhsparse {

// One CSR operand. Columns are sorted and unique within each row (the CsrMatrix contract), which the
// heap, ESC and merge methods all rely on only through B's rows being sorted, duplicate-free sequences.
template <class Value>
struct CsrView {
  const Offset* row_ptr;
  const Index* col;
  const Value* val;

  __device__ Offset begin(Offset row) const { return row_ptr[row]; }
  __device__ Offset end(Offset row) const { return row_ptr[row + 1]; }
  __device__ Offset length(Offset row) const { return end(row) - begin(row); }
};

template <class Value>
CsrView<Value> view_of(const DeviceCsr<Value>& M) {
  return {raw_data(M.row_ptr), raw_data(M.col), raw_data(M.val)};
}

template <class Value>
struct ProductView {
  CsrView<Value> A;
  CsrView<Value> B;

  // Products contributed by the entry of A at position p: the length of B's row A.col[p].
  __device__ Offset products_of_entry(Offset p) const { return B.length(A.col[p]); }
};

// Where stage 3 writes row i: C~'s row i (space for preallocated_size(u_i) entries from offset[i]) and the
// final length nnz(C_i) (paper, section 4.1: "the numbers of nonzero entries ... are updated").
template <class Value>
struct RowOutput {
  const Offset* offset;  // rows + 1 offsets into col / val
  Index* col;
  Value* val;
  Offset* nnz;  // nnz(C_i), one per row of C
};

// Larger than every real column index (columns are < B.cols <= 2^31 - 1): pads sorting networks.
constexpr Index kNoColumn = std::numeric_limits<Index>::max();

template <class T>
__host__ __device__ constexpr T smaller(T a, T b) {
  return b < a ? b : a;
}

// First position in the sorted col[0, length) whose column is not less than `key`.
__device__ inline Offset lower_bound_column(const Index* col, Offset length, Index key) {
  Offset low = 0, high = length;
  while (low < high) {
    const Offset middle = low + (high - low) / 2;
    if (col[middle] < key)
      low = middle + 1;
    else
      high = middle;
  }
  return low;
}

// Grids are capped (kernels loop over the rest): block counts past 2^16 buy nothing on current GPUs and the
// cap keeps every launch valid whatever the row count.
constexpr Offset kMaxBlocks = 1 << 16;

inline int blocks_for(Offset work, Offset work_per_block) {
  return static_cast<int>(std::max<Offset>(1, std::min(kMaxBlocks, (work + work_per_block - 1) / work_per_block)));
}

// After each launch: the launch error now. Execution errors surface at the next synchronisation (a Thrust
// call, the copy of a count to the host, or the timer), so the independent bin kernels are not serialised;
// with AMGSOLVE_CUDA_SYNC_LAUNCHES (the tests, the sanitizer runs) at the launch, naming the kernel.
inline void check_launch() { AMGSOLVE_CUDA_CHECK_LAUNCH(); }

// Peak bytes of the device temporaries (SpgemmStats::extra_bytes): told of every allocation and release.
class TemporaryBytes {
 public:
  template <class T>
  void allocated(const DeviceArray<T>& array) {
    allocated_bytes(array.size() * sizeof(T));
  }
  template <class T>
  void released(DeviceArray<T>& array) {
    const std::uint64_t bytes = array.size() * sizeof(T);
    array.clear();
    array.shrink_to_fit();
    now_ -= bytes;
  }
  void allocated_bytes(std::uint64_t bytes) {
    now_ += bytes;
    peak_ = std::max(peak_, now_);
  }
  void released_bytes(std::uint64_t bytes) { now_ -= bytes; }
  std::uint64_t peak() const { return peak_; }

 private:
  std::uint64_t now_ = 0;
  std::uint64_t peak_ = 0;
};

}  // namespace amgsolve::bhsparse
