// The hierarchy on the mpi backend: smoothed aggregation (amg/smoothed_aggregation.hpp) with the mpi
// backend's operations and steps (backend/mpi/mpi_backend.hpp, amg/mpi/distributed_setup.hpp), so every
// level is built on the ranks' rows.
#include "amg/hierarchy.hpp"
#include "amg/mpi/distributed_setup.hpp"
#include "amg/mpi/system_setup.hpp"
#include "amg/resetup.hpp"
#include "amg/smoothed_aggregation.hpp"
#include "backend/mpi/mpi_backend.hpp"

namespace amgsolve {

template class Hierarchy<MpiBackend, double>;
template class Hierarchy<MpiBackend, float>;
template class SmoothedAggregation<MpiBackend, double>;
template class SmoothedAggregation<MpiBackend, float>;

}  // namespace amgsolve
