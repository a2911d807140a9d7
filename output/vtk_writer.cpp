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

}  // namespace

void write_vti(const std::string& path, const Grid& grid, const std::vector<ScalarField>& scalars,
               const std::vector<IntegerField>& integers) {
  vtkNew<vtkImageData> image;
  image->SetDimensions(grid.size[0], grid.size[1], grid.size[2]);
  image->SetOrigin(grid.origin[0], grid.origin[1], grid.origin[2]);
  image->SetSpacing(grid.spacing[0], grid.spacing[1], grid.spacing[2]);
  for (const ScalarField& f : scalars) {
    check_length(f.name, f.values.size(), grid);
    vtkNew<vtkDoubleArray> array;
    array->SetName(f.name.c_str());
    array->SetNumberOfTuples(static_cast<vtkIdType>(f.values.size()));
    std::copy(f.values.begin(), f.values.end(), array->GetPointer(0));
    image->GetPointData()->AddArray(array);
  }
  for (const IntegerField& f : integers) {
    check_length(f.name, f.values.size(), grid);
    vtkNew<vtkIntArray> array;
    array->SetName(f.name.c_str());
    array->SetNumberOfTuples(static_cast<vtkIdType>(f.values.size()));
    std::copy(f.values.begin(), f.values.end(), array->GetPointer(0));
    image->GetPointData()->AddArray(array);
  }
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
