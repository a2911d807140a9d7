#pragma once
// The SpMV formats built on the device from a device CSR matrix, with the layouts of the CPU references
// (sparse/ellpack_r.cpp, sparse/pjds.cpp: pjds_from_csr(M, 32, false)), so that a hierarchy built on the
// device never goes to the host for its solve:
//   ellpack-r  row lengths, the longest row, then every row written down its column of the padded_rows x
//              width rectangle (padding: column 0, value 0);
//   pjds       rows sorted by length, longest first, stably (thrust::stable_sort_by_key), so equal lengths keep
//              their order as on the CPU; element j of sorted row i at col_start[j] + i, where column j
//              holds the blocks of 32 sorted rows whose first row is longer than j.
#include <cstdint>
#include <limits>
#include <string>

#include <thrust/device_ptr.h>
#include <thrust/execution_policy.h>
#include <thrust/extrema.h>
#include <thrust/functional.h>
#include <thrust/scan.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>
#include <thrust/transform.h>

#include "backend/cuda/vector_kernels.cuh"
#include "common/error.hpp"
#include "common/cuda/device_array.cuh"
#include "sparse/cuda/device_csr.cuh"

namespace amgsolve::device {

inline constexpr Index kFormatBlockRows = 32;  // the warp: ELLPACK-R's padding, pJDS's blocks

inline Index padded_rows_for(Index rows) {
  const std::int64_t padded = (static_cast<std::int64_t>(rows) + kFormatBlockRows - 1) / kFormatBlockRows * kFormatBlockRows;
  if (padded > std::numeric_limits<Index>::max())
    throw InputError("a matrix of " + std::to_string(rows) + " rows is too large for the GPU's ELLPACK-R and pJDS formats (32-bit rows)");
  return static_cast<Index>(padded);
}

struct RowLengths {  // length[i] = row_ptr[i + 1] - row_ptr[i] (0 past the rows)
  const Offset* row_ptr;
  Index rows;
  Index* length;
  __device__ void operator()(Index i) const { length[i] = i < rows ? static_cast<Index>(row_ptr[i + 1] - row_ptr[i]) : 0; }
};

// The row lengths of M, padded_rows of them (zeros past the last row).
inline DeviceArray<Index> row_lengths(const Offset* row_ptr, Index rows, Index padded_rows, cudaStream_t stream) {
  DeviceArray<Index> length(static_cast<std::size_t>(padded_rows));
  for_each_row(padded_rows, RowLengths{row_ptr, rows, raw_data(length)}, stream);
  return length;
}

template <class Value>
struct FillEllpackR {  // row i of the CSR down column i of the rectangle
  const Offset* row_ptr;
  const Index* csr_col;
  const Value* csr_val;
  Index rows, padded_rows, width;
  Index* col;
  Value* val;
  __device__ void operator()(Index i) const {
    const Offset begin = i < rows ? row_ptr[i] : 0;
    const Index length = i < rows ? static_cast<Index>(row_ptr[i + 1] - begin) : 0;
    for (Index j = 0; j < width; ++j) {
      const std::size_t at = static_cast<std::size_t>(j) * static_cast<std::size_t>(padded_rows) + i;
      col[at] = j < length ? csr_col[begin + j] : 0;
      val[at] = j < length ? csr_val[begin + j] : Value(0);
    }
  }
};

// rows_with[j] = 32 x the blocks whose first sorted row is longer than j. The lengths are sorted down, so
// those blocks are a prefix: a binary search for the first block whose first row is not longer than j.
struct RowsWithElement {
  const Index* sorted_length;
  Index padded_rows;
  Offset* rows_with;
  __device__ void operator()(Index j) const {
    Index low = 0, high = padded_rows / kFormatBlockRows;  // the answer, in blocks, is in [low, high]
    while (low < high) {
      const Index mid = low + (high - low) / 2;
      if (sorted_length[static_cast<std::size_t>(mid) * kFormatBlockRows] > j)
        low = mid + 1;
      else
        high = mid;
    }
    rows_with[j] = static_cast<Offset>(low) * kFormatBlockRows;
  }
};

template <class Value>
struct FillPjds {  // sorted row i: its original row's entries at col_start[j] + i
  const Offset* row_ptr;
  const Index* csr_col;
  const Value* csr_val;
  const Index* permutation;
  const Offset* col_start;
  Index* col;
  Value* val;
  __device__ void operator()(Index i) const {
    const Index original = permutation[i];
    for (Offset k = row_ptr[original]; k < row_ptr[original + 1]; ++k) {
      const Offset at = col_start[k - row_ptr[original]] + i;
      col[at] = csr_col[k];
      val[at] = csr_val[k];
    }
  }
};

}  // namespace amgsolve::device
