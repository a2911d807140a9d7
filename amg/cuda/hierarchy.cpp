// The hierarchy on the cuda backend: smoothed aggregation (amg/smoothed_aggregation.hpp) with the cuda
// backend's operations and steps (backend/cuda/cuda_backend.hpp, amg/cuda/device_setup.hpp), so every level
// is built on the device. Plain C++: the kernels are behind those declarations.
#include "amg/cuda/device_setup.hpp"
#include "amg/hierarchy.hpp"
#include "amg/resetup.hpp"
#include "amg/smoothed_aggregation.hpp"
#include "backend/cuda/cuda_backend.hpp"

namespace amgsolve {

template class Hierarchy<CudaBackend, double>;
template class Hierarchy<CudaBackend, float>;
template class SmoothedAggregation<CudaBackend, double>;
template class SmoothedAggregation<CudaBackend, float>;

}  // namespace amgsolve
