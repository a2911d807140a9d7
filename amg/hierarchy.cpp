// The hierarchy on the cpu backend, the one every host user (AmgHierarchy) builds; the cuda backend's is
// instantiated in amg/cuda/hierarchy.cpp.
#include "amg/hierarchy.hpp"

#include "amg/resetup.hpp"
#include "amg/smoothed_aggregation.hpp"

namespace amgsolve {

template class Hierarchy<CpuBackend, double>;
template class Hierarchy<CpuBackend, float>;
template class SmoothedAggregation<CpuBackend, double>;
template class SmoothedAggregation<CpuBackend, float>;

}  // namespace amgsolve
