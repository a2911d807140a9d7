#pragma once
// AMGSOLVE_HOST_DEVICE marks a function that the CPU's code and the GPU's kernels share: one definition, so
// that both compute the same bits by construction. Compiled by nvcc it is __host__ __device__, by the host
// compiler a plain function.
#if defined(__CUDACC__)
#define AMGSOLVE_HOST_DEVICE __host__ __device__
#else
#define AMGSOLVE_HOST_DEVICE
#endif
