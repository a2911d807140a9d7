#include "output/vtk_writer.hpp"

#include <vtkCellData.h>
#include <vtkDataSetAttributes.h>
#include <vtkDoubleArray.h>
#include <vtkFloatArray.h>
#include <vtkUnsignedCharArray.h>
#include <vtkImageData.h>
#include <vtkIntArray.h>
#include <vtkLogger.h>
#include <vtkNew.h>
#include <vtkObject.h>
#include <vtkPointData.h>
#include <vtkXMLImageDataWriter.h>

#include "common/atomic_file.hpp"
#include "common/error.hpp"

#include <cerrno>
#include <cstring>
#include <limits>

namespace amgsolve {
namespace {

void check_length(const std::string& name, std::size_t n, const Grid& grid) {
  if (static_cast<std::int64_t>(n) != grid.points())
    throw Error("VTK field '" + name + "' has " + std::to_string(n) + " values for " + std::to_string(grid.points()) +
                " grid points");
}

// Copies one field into a new VTK point-data array of type VtkArray.
template <class VtkArray, class Values>
void add_point_array(vtkImageData* image, const Grid& grid, const std::string& name, const Values& values) {
  check_length(name, values.size(), grid);
  vtkNew<VtkArray> array;
  array->SetName(name.c_str());
  array->SetNumberOfTuples(static_cast<vtkIdType>(values.size()));
  std::copy(values.begin(), values.end(), array->GetPointer(0));
  image->GetPointData()->AddArray(array);
}

// Writes `image` to `path` through a temporary file. VTK's own error output (many coloured lines per
// failure) is silenced: a failure is reported once, as amgsolve's one-line error.
void write_image(const std::string& path, vtkImageData* image) {
  vtkObject::GlobalWarningDisplayOff();
  vtkLogger::SetStderrVerbosity(vtkLogger::VERBOSITY_OFF);
  AtomicFile target(path);
  vtkNew<vtkXMLImageDataWriter> writer;
  writer->SetFileName(target.temp_path().c_str());
  writer->SetInputData(image);
  writer->SetDataModeToAppended();
  writer->EncodeAppendedDataOff();
  writer->SetCompressorTypeToZLib();
  errno = 0;
  if (writer->Write() != 1)
    throw Error("cannot write VTK file " + path + (errno != 0 ? std::string(": ") + std::strerror(errno) : ""));
  target.commit();
}

// One per-unknown field scattered to the voxels of the domain's box.
template <class VtkArray, class Values>
void add_voxel_array(vtkImageData* image, const VoxelDomain& domain, const std::string& name, const Values& values,
                     typename VtkArray::ValueType outside) {
  if (values.size() != static_cast<std::size_t>(domain.unknowns()))
    throw Error("VTK field '" + name + "' has " + std::to_string(values.size()) + " values for " +
                std::to_string(domain.unknowns()) + " unknowns");
  vtkNew<VtkArray> array;
  array->SetName(name.c_str());
  array->SetNumberOfTuples(static_cast<vtkIdType>(domain.voxels()));
  auto* out = array->GetPointer(0);
#pragma omp parallel for schedule(static)
  for (std::int64_t v = 0; v < domain.voxels(); ++v) {
    const Index u = domain.unknown_of_voxel[v];
    out[v] = u < 0 ? outside : static_cast<typename VtkArray::ValueType>(values[u]);
  }
  image->GetCellData()->AddArray(array);
}

}  // namespace

bool vtk_available() { return true; }

void write_voxel_vti(const std::string& path, const VoxelDomain& domain, const std::vector<ScalarField>& scalars,
                     const std::vector<IntegerField>& integers) {
  vtkNew<vtkImageData> image;
  image->SetDimensions(domain.size[0] + 1, domain.size[1] + 1, domain.size[2] + 1);  // points = voxel corners
  image->SetOrigin(domain.origin[0], domain.origin[1], domain.origin[2]);
  image->SetSpacing(domain.voxel_size, domain.voxel_size, domain.voxel_size);
  for (const ScalarField& f : scalars)
    add_voxel_array<vtkFloatArray>(image, domain, f.name, f.values, std::numeric_limits<float>::quiet_NaN());
  for (const IntegerField& f : integers) add_voxel_array<vtkIntArray>(image, domain, f.name, f.values, 0);

  vtkNew<vtkIntArray> mask;
  mask->SetName("mask");
  mask->SetNumberOfTuples(static_cast<vtkIdType>(domain.voxels()));
  vtkNew<vtkUnsignedCharArray> ghost;
  ghost->SetName(vtkDataSetAttributes::GhostArrayName());
  ghost->SetNumberOfTuples(static_cast<vtkIdType>(domain.voxels()));
  for (std::int64_t v = 0; v < domain.voxels(); ++v) {
    const bool inside = domain.unknown_of_voxel[v] >= 0;
    mask->SetValue(v, inside ? 1 : 0);
    ghost->SetValue(v, inside ? 0 : vtkDataSetAttributes::HIDDENCELL);
  }
  image->GetCellData()->AddArray(mask);
  image->GetCellData()->AddArray(ghost);
  if (!scalars.empty()) image->GetCellData()->SetActiveScalars(scalars.front().name.c_str());
  write_image(path, image);
}

void write_vti(const std::string& path, const Grid& grid, const std::vector<ScalarField>& scalars,
               const std::vector<IntegerField>& integers) {
  vtkNew<vtkImageData> image;
  image->SetDimensions(grid.size[0], grid.size[1], grid.size[2]);
  image->SetOrigin(grid.origin[0], grid.origin[1], grid.origin[2]);
  image->SetSpacing(grid.spacing[0], grid.spacing[1], grid.spacing[2]);
  for (const ScalarField& f : scalars) add_point_array<vtkDoubleArray>(image, grid, f.name, f.values);
  for (const IntegerField& f : integers) add_point_array<vtkIntArray>(image, grid, f.name, f.values);
  if (!scalars.empty()) image->GetPointData()->SetActiveScalars(scalars.front().name.c_str());
  write_image(path, image);
}

}  // namespace amgsolve
