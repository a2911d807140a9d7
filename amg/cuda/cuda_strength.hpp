#pragma once
// A level's strength classification on the cuda backend (the device's graph and kept entries behind a plain
// C++ handle), and what a re-setup does with it: the level keeps it where it is (amg/kept_structure.hpp's
// LevelStructure), and gives it back for the level's new matrix when that has the kept pattern. Complete
// wherever the hierarchy is, so that a hierarchy on the cuda backend can be held by any file.
#include <cstdint>
#include <memory>

#include "sparse/csr.hpp"

namespace amgsolve {

struct DeviceStrength;  // amg/cuda/setup.cuh
class CudaBackend;
template <class V>
class DeviceCsrMatrix;

// The strength graph and kept entries of a level, on the device.
struct CudaStrength {
  std::shared_ptr<const DeviceStrength> device;
  Offset weak_entries = 0;
};

// Its device memory (the graph and one flag per entry of A).
std::uint64_t strength_bytes(const CudaStrength& strength);

// The part a level keeps, and the kept strength given back for the level's new matrix (on the same pattern).
inline CudaStrength& local_strength(CudaStrength& strength) { return strength; }
template <class Value>
const CudaStrength& kept_strength(const CudaBackend&, const CudaStrength& kept, Offset /*weak_entries: kept's own*/,
                                  const DeviceCsrMatrix<Value>& /*A*/) {
  return kept;
}

}  // namespace amgsolve
