#pragma once
// The GPU `rmerge` (rmerge.cu) with a chosen sub-warp size W: tests and programs that want several in one
// process build their own instances here; the registered instance takes W from AMGSOLVE_RMERGE_WIDTH.
// Plain C++: callable from files the host compiler builds.
#include <memory>

#include "spgemm/spgemm.hpp"

namespace amgsolve {

// Throws Error when W is not one of 2, 4, 8, 16 and 32.
std::unique_ptr<SpgemmBackend> make_rmerge_gpu(int sub_warp_size);

}  // namespace amgsolve
