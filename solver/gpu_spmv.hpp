#pragma once
// SpMV in ELLPACK-R and pJDS on the GPU (solver/cuda/spmv.cu), callable from plain C++: the matrix and x
// are copied to the device, the kernel of Kreutzer et al. (Listings 1 and 2, one thread per row) runs,
// and y is copied back. These entry points exist for testing the kernels against the CPU references;
// the device-resident solve (issue #6) will keep everything on the GPU.
// Without CUDA, or without a device, they throw amgsolve::Error saying why (gpu_status() tells first).
#include "solver/ellpack_r.hpp"
#include "solver/pjds.hpp"

namespace amgsolve {

template <class Value>
void gpu_spmv(const EllpackR<Value>& E, const Vector<Value>& x, Vector<Value>& y);

template <class Value>
void gpu_spmv(const Pjds<Value>& P, const Vector<Value>& x, Vector<Value>& y);

}  // namespace amgsolve
