#pragma once
// What `amgsolve --version` prints: the version, the git commit it was built from, the build type and
// compiler, and which optional parts (CUDA, MPI, VTK) are built in. Generated at build time (app/CMakeLists.txt).
#include <string>

namespace amgsolve {

std::string version_text();

}  // namespace amgsolve
