#pragma once
// CsrMatrix on the GPU: the same three arrays with the same index widths (int64 row offsets, int32 column
// indices), held in DeviceArray (a thrust::device_vector that, like Array, does not zero-fill on resize).
// to_device / to_host copy a matrix across and are the only transfers the GPU SpGEMM backends make; callers
// time device work separately from them. Header only, for .cu files (the GPU backends in spgemm/cuda/,
// later the device-resident solve).
#include "common/cuda/device_array.cuh"
#include "sparse/csr.hpp"

namespace amgsolve {

template <class Value>
struct DeviceCsr {
  Index rows = 0;
  Index cols = 0;
  DeviceArray<Offset> row_ptr;  // rows + 1 entries once filled
  DeviceArray<Index> col;
  DeviceArray<Value> val;

  Offset nnz() const { return static_cast<Offset>(col.size()); }
};

// a_ii of row i of a device CSR's arrays (0 when the row has no diagonal entry): a binary search in the
// sorted row. For kernels.
template <class Value>
__device__ Value diagonal_entry(const Offset* row_ptr, const Index* col, const Value* val, Index i) {
  Offset lo = row_ptr[i], hi = row_ptr[i + 1];
  while (lo < hi) {
    const Offset mid = lo + (hi - lo) / 2;
    if (col[mid] < i)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < row_ptr[i + 1] && col[lo] == i ? val[lo] : Value(0);
}

template <class Value>
DeviceCsr<Value> to_device(const CsrMatrix<Value>& A) {
  DeviceCsr<Value> D;
  D.rows = A.rows;
  D.cols = A.cols;
  D.row_ptr = upload(A.row_ptr);
  D.col = upload(A.col);
  D.val = upload(A.val);
  return D;
}

template <class Value>
CsrMatrix<Value> to_host(const DeviceCsr<Value>& D) {
  CsrMatrix<Value> A(D.rows, D.cols);
  download(D.row_ptr, A.row_ptr);
  download(D.col, A.col);
  download(D.val, A.val);
  return A;
}

}  // namespace amgsolve
