#include "output/vtk_writer.hpp"

#include <vtkDoubleArray.h>
#include <vtkImageData.h>
#include <vtkIntArray.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkXMLImageDataWriter.h>

#include "common/atomic_file.hpp"
#include "common/error.hpp"

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

}  // namespace

void write_vti(const std::string& path, const Grid& grid, const std::vector<ScalarField>& scalars,
               const std::vector<IntegerField>& integers) {
  vtkNew<vtkImageData> image;
  image->SetDimensions(grid.size[0], grid.size[1], grid.size[2]);
  image->SetOrigin(grid.origin[0], grid.origin[1], grid.origin[2]);
  image->SetSpacing(grid.spacing[0], grid.spacing[1], grid.spacing[2]);
  for (const ScalarField& f : scalars) add_point_array<vtkDoubleArray>(image, grid, f.name, f.values);
  for (const IntegerField& f : integers) add_point_array<vtkIntArray>(image, grid, f.name, f.values);
  if (!scalars.empty()) image->GetPointData()->SetActiveScalars(scalars.front().name.c_str());

  AtomicFile target(path);
  vtkNew<vtkXMLImageDataWriter> writer;
  writer->SetFileName(target.temp_path().c_str());
  writer->SetInputData(image);
  writer->SetDataModeToAppended();
  writer->EncodeAppendedDataOff();
  writer->SetCompressorTypeToZLib();
  if (writer->Write() != 1) throw Error("cannot write VTK file " + path);
  target.commit();
}

}  // namespace amgsolve
