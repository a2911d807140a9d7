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
