#pragma once
// Smoothed aggregation's own steps on the cuda backend, as amg/smoothed_aggregation.hpp calls them: the
// overloads taking a CudaBackend of the functions in amg/strength.hpp, filtered_matrix.hpp,
// mis2_aggregation.hpp, tentative_prolongation.hpp, smoothed_prolongation.hpp and spectral_radius.hpp. Plain C++ (the setup is
// compiled by the host compiler); each is defined in the .cu file beside its method's, and tested against
// the cpu backend's (tests/test_gpu_setup.cpp).
#include <cstdint>
#include <memory>

#include "amg/cuda/cuda_strength.hpp"
#include "amg/nullspace.hpp"
#include "amg/filtered_matrix.hpp"
#include "amg/strength.hpp"
#include "backend/cuda/cuda_backend.hpp"
#include "sparse/csr.hpp"

namespace amgsolve {

struct DeviceAggregates;  // amg/cuda/setup.cuh

// The aggregates of a level, on the device.
struct CudaAggregates {
  std::shared_ptr<const DeviceAggregates> device;
  Index count = 0;
};

template <class Value>
CudaStrength strength_of_connection(const CudaBackend& backend, const DeviceCsrMatrix<Value>& A, double theta);
template <class Value>
DeviceCsrMatrix<Value> filtered_matrix(const CudaBackend& backend, const DeviceCsrMatrix<Value>& A,
                                       const CudaStrength& strength, const DeviceVector<double>& weights,
                                       IsolatedRows isolated);

CudaAggregates mis2_aggregation(const CudaBackend& backend, const CudaStrength& strength, std::uint64_t seed);
void aggregate_left_out_nodes(const CudaBackend& backend, CudaAggregates& aggregates);
// Every node's aggregate, copied to the host (the finest level's, for the output).
Array<Index> aggregate_ids(const CudaBackend& backend, CudaAggregates& aggregates);

// weights: B^2 of the level's nodes, empty on the finest level (amg/tentative_prolongation.hpp).
template <class Value>
DeviceCsrMatrix<Value> tentative_prolongation(const CudaBackend& backend, const CudaAggregates& aggregates,
                                              const DeviceVector<double>& weights, DeviceVector<double>& coarse_weights);

// The row with the largest |sum_j a_ij| / sum_j |a_ij| (amg/nullspace.hpp).
template <class Value>
RowSum largest_relative_row_sum(const CudaBackend& backend, const DeviceCsrMatrix<Value>& A);
// amg.nullspace for a matrix on the device (a re-setup's check), as resolve_nullspace decides on the host.
NullspaceChoice resolve_nullspace(const CudaBackend& backend, const DeviceCsrMatrix<double>& A, NullspaceChoice choice);

template <class Value>
void scale_and_add_tentative(const CudaBackend& backend, DeviceCsrMatrix<Value>& P, const DeviceCsrMatrix<Value>& A_f,
                             const DeviceCsrMatrix<Value>& T, double omega);

template <class Value>
double gershgorin_bound_dinv_a(const CudaBackend& backend, const DeviceCsrMatrix<Value>& A);
// The Lanczos passes (amg/spectral_radius.hpp). A non-positive diagonal entry gives infinities that the
// recurrence reports as a NumericalError (the level's diagonal has been checked before anyway). The level's
// reduction block is not used: the device sums in its own order (backend/cuda/vector_kernels.cuh), and its
// estimate agrees with the CPU's to rounding.
template <class Value>
DeviceVector<double> inverse_sqrt_diagonal(const CudaBackend& backend, const DeviceCsrMatrix<Value>& A);
DeviceVector<double> seeded_vector(const CudaBackend& backend, Index n, std::uint64_t seed);
void lanczos_rescale(const CudaBackend& backend, const DeviceVector<double>& src, double divisor, DeviceVector<double>& v);
template <class Value>
double lanczos_product(const CudaBackend& backend, const DeviceCsrMatrix<Value>& A, const DeviceVector<double>& scale,
                       double beta, const DeviceVector<double>& v_prev, const DeviceVector<double>& v,
                       DeviceVector<double>& w, DeviceVector<double>& scaled, std::int64_t block);
double lanczos_orthogonalize(const CudaBackend& backend, double alpha, const DeviceVector<double>& v,
                             DeviceVector<double>& w, std::int64_t block);

}  // namespace amgsolve
