// Builds without VTK: the writers exist and say why they cannot run.
#include "common/error.hpp"
#include "output/vtk_writer.hpp"

namespace amgsolve {
namespace {

[[noreturn]] void unavailable(const std::string& path) {
  throw InputError("cannot write " + path + ": built without VTK (install libvtk9-dev and rebuild)");
}

}  // namespace

bool vtk_available() { return false; }

void write_vti(const std::string& path, const Grid&, const std::vector<ScalarField>&,
               const std::vector<IntegerField>&) {
  unavailable(path);
}

void write_voxel_vti(const std::string& path, const VoxelDomain&, const std::vector<ScalarField>&,
                     const std::vector<IntegerField>&, const std::string&) {
  unavailable(path);
}

void write_skin_vtp(const std::string& path, const VoxelDomain&, const std::vector<SkinFace>&,
                    const std::vector<ScalarField>&, const std::string&) {
  unavailable(path);
}

void write_picture_vti(const std::string& path, const PixelGrid&, const std::vector<ScalarField>&,
                       const std::string&) {
  unavailable(path);
}

}  // namespace amgsolve
