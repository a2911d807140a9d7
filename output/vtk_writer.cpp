#include "output/vtk_writer.hpp"

#include <vtkCellData.h>
#include <vtkDataSetAttributes.h>
#include <vtkDoubleArray.h>
#include <vtkErrorCode.h>
#include <vtkFloatArray.h>
#include <vtkUnsignedCharArray.h>
#include <vtkImageData.h>
#include <vtkIntArray.h>
#include <vtkLogger.h>
#include <vtkNew.h>
#include <vtkObject.h>
#include <vtkPointData.h>
#include <vtkCellArray.h>
#include <vtkFieldData.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkSmartPointer.h>
#include <vtkStringArray.h>
#include <vtkXMLImageDataWriter.h>
#include <vtkXMLPolyDataWriter.h>

#include "common/atomic_file.hpp"
#include "common/error.hpp"

#include <algorithm>
#include <cmath>
#include <cerrno>
#include <cstring>
#include <limits>

namespace amgsolve {
namespace {

// A field must have a value for each of the `count` places it describes ("grid points", "skin faces").
void require_field_length(const std::string& name, std::size_t values, std::int64_t count, const char* places) {
  if (static_cast<std::int64_t>(values) != count)
    throw Error("VTK field '" + name + "' has " + std::to_string(values) + " values for " + std::to_string(count) + " " +
                places);
}

// Copies one field into a new VTK point-data array of type VtkArray.
template <class VtkArray, class Values>
void add_point_array(vtkImageData* image, const Grid& grid, const std::string& name, const Values& values) {
  require_field_length(name, values.size(), grid.points(), "grid points");
  vtkNew<VtkArray> array;
  array->SetName(name.c_str());
  array->SetNumberOfTuples(static_cast<vtkIdType>(values.size()));
  std::copy(values.begin(), values.end(), array->GetPointer(0));
  image->GetPointData()->AddArray(array);
}

// Writes `data` with an XML writer to `path` through a temporary file. VTK's own error output (many
// coloured lines per failure) is silenced: a failure is reported once, as amgsolve's one-line error.
template <class Writer>
void write_xml(const std::string& path, vtkDataObject* data) {
  vtkObject::GlobalWarningDisplayOff();
  vtkLogger::SetStderrVerbosity(vtkLogger::VERBOSITY_OFF);
  AtomicFile target(path, "VTK file", kVtkMark);
  vtkNew<vtkStringArray> mark;  // kVtkMark
  mark->SetName("amgsolve");
  mark->InsertNextValue("written by amgsolve");
  data->GetFieldData()->AddArray(mark);
  vtkNew<Writer> writer;
  writer->SetFileName(target.temp_path().c_str());
  writer->SetInputData(data);
  writer->SetDataModeToAppended();
  writer->EncodeAppendedDataOff();
  writer->SetCompressorTypeToZLib();
  errno = 0;
  // Write() returns 1 even where the stream failed (a full disk, ulimit -f): its error code says so.
  if (writer->Write() != 1 || writer->GetErrorCode() != vtkErrorCode::NoError)
    throw Error("cannot write VTK file " + target.described() + ": " +
                (errno != 0 ? std::strerror(errno) : vtkErrorCode::GetStringFromErrorCode(writer->GetErrorCode())));
  target.commit();
}

void write_image(const std::string& path, vtkImageData* image) { write_xml<vtkXMLImageDataWriter>(path, image); }

void add_frame(vtkDataObject* data, const std::string& frame) {
  if (frame.empty()) return;
  vtkNew<vtkStringArray> text;
  text->SetName("coordinate_frame");
  text->InsertNextValue(frame);
  data->GetFieldData()->AddArray(text);
}

// Whether float holds every value to its digits: the fields are written in float (half the file) where it
// does, in double where it does not (a source power of 1e50 wrote inf, one of 1e-50 zeros).
template <class Values>
bool float_holds(const Values& values) {
  return std::all_of(values.begin(), values.end(), [](double v) {
    const double magnitude = std::abs(v);
    return !std::isfinite(v) || magnitude == 0 ||
           (magnitude >= std::numeric_limits<float>::min() && magnitude <= std::numeric_limits<float>::max());
  });
}

template <class VtkArray, class Values>
vtkSmartPointer<vtkDataArray> real_array_of(const std::string& name, const Values& values) {
  auto array = vtkSmartPointer<VtkArray>::New();
  array->SetName(name.c_str());
  array->SetNumberOfTuples(static_cast<vtkIdType>(values.size()));
  std::transform(values.begin(), values.end(), array->GetPointer(0),
                 [](double v) { return static_cast<typename VtkArray::ValueType>(v); });
  return array;
}

template <class Values>
vtkSmartPointer<vtkDataArray> real_array(const std::string& name, const Values& values) {
  return float_holds(values) ? real_array_of<vtkFloatArray>(name, values) : real_array_of<vtkDoubleArray>(name, values);
}

// One per-unknown field scattered to the voxels of the domain's box.
template <class VtkArray, class Values>
void add_voxel_array(vtkImageData* image, const VoxelDomain& domain, const std::string& name, const Values& values,
                     typename VtkArray::ValueType outside) {
  require_field_length(name, values.size(), domain.unknowns(), "unknowns");
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
                     const std::vector<IntegerField>& integers, const std::string& frame) {
  vtkNew<vtkImageData> image;
  image->SetDimensions(domain.size[0] + 1, domain.size[1] + 1, domain.size[2] + 1);  // points = voxel corners
  image->SetOrigin(domain.origin[0], domain.origin[1], domain.origin[2]);
  image->SetSpacing(domain.voxel_size, domain.voxel_size, domain.voxel_size);
  for (const ScalarField& f : scalars) {
    if (float_holds(f.values))
      add_voxel_array<vtkFloatArray>(image, domain, f.name, f.values, std::numeric_limits<float>::quiet_NaN());
    else
      add_voxel_array<vtkDoubleArray>(image, domain, f.name, f.values, std::numeric_limits<double>::quiet_NaN());
  }
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
  add_frame(image, frame);
  write_image(path, image);
}

namespace {

// The four corners of a voxel face as indices into the box's lattice of voxel corners.
std::array<std::int64_t, 4> face_corners(const VoxelDomain& domain, const SkinFace& face) {
  const std::int64_t v = domain.voxel_of_unknown[face.unknown];
  std::array<std::int64_t, 3> at = {v % domain.size[0], (v / domain.size[0]) % domain.size[1],
                                    v / (std::int64_t{domain.size[0]} * domain.size[1])};
  const auto [axis, step] = kFaceDirections[face.direction];
  if (step > 0) ++at[axis];
  const int b = (axis + 1) % 3, c = (axis + 2) % 3;
  const std::int64_t nx = domain.size[0] + 1, nxy = nx * (domain.size[1] + 1);
  auto corner = [&](int db, int dc) {
    std::array<std::int64_t, 3> p = at;
    p[b] += db;
    p[c] += dc;
    return p[0] + nx * p[1] + nxy * p[2];
  };
  // Counter-clockwise seen from outside (axis+1, axis+2, axis is right-handed): VTK's normals point out.
  if (step > 0) return {corner(0, 0), corner(1, 0), corner(1, 1), corner(0, 1)};
  return {corner(0, 0), corner(0, 1), corner(1, 1), corner(1, 0)};
}

}  // namespace

void write_skin_vtp(const std::string& path, const VoxelDomain& domain, const std::vector<SkinFace>& skin,
                    const std::vector<ScalarField>& per_face, const std::string& frame) {
  // Corners shared by neighbouring faces become one point.
  std::vector<std::int64_t> corners;
  corners.reserve(4 * skin.size());
  for (const SkinFace& f : skin)
    for (std::int64_t c : face_corners(domain, f)) corners.push_back(c);
  std::vector<std::int64_t> unique = corners;
  std::sort(unique.begin(), unique.end());
  unique.erase(std::unique(unique.begin(), unique.end()), unique.end());

  vtkNew<vtkPoints> points;
  points->SetDataTypeToDouble();
  points->SetNumberOfPoints(static_cast<vtkIdType>(unique.size()));
  const std::int64_t nx = domain.size[0] + 1, nxy = nx * (domain.size[1] + 1);
  for (std::size_t p = 0; p < unique.size(); ++p) {
    const std::int64_t c = unique[p];
    points->SetPoint(static_cast<vtkIdType>(p), domain.origin[0] + (c % nx) * domain.voxel_size,
                     domain.origin[1] + ((c / nx) % (domain.size[1] + 1)) * domain.voxel_size,
                     domain.origin[2] + (c / nxy) * domain.voxel_size);
  }
  vtkNew<vtkCellArray> quads;
  for (std::size_t f = 0; f < skin.size(); ++f) {
    vtkIdType ids[4];
    for (int k = 0; k < 4; ++k)
      ids[k] = std::lower_bound(unique.begin(), unique.end(), corners[4 * f + k]) - unique.begin();
    quads->InsertNextCell(4, ids);
  }
  vtkNew<vtkPolyData> surface;
  surface->SetPoints(points);
  surface->SetPolys(quads);
  for (const ScalarField& field : per_face) {
    require_field_length(field.name, field.values.size(), static_cast<std::int64_t>(skin.size()), "skin faces");
    surface->GetCellData()->AddArray(real_array(field.name, field.values));
  }
  std::vector<double> area(skin.size()), direction(skin.size());
  for (std::size_t f = 0; f < skin.size(); ++f) {
    area[f] = skin[f].area;
    direction[f] = skin[f].direction;
  }
  surface->GetCellData()->AddArray(real_array("area", area));
  surface->GetCellData()->AddArray(real_array("direction", direction));
  if (!per_face.empty()) surface->GetCellData()->SetActiveScalars(per_face.front().name.c_str());
  add_frame(surface, frame);
  write_xml<vtkXMLPolyDataWriter>(path, surface);
}

void write_picture_vti(const std::string& path, const PixelGrid& grid, const std::vector<ScalarField>& pixels,
                       const std::string& frame) {
  vtkNew<vtkImageData> image;
  image->SetDimensions(grid.size[0] + 1, grid.size[1] + 1, 1);  // points = pixel corners, cells = pixels
  image->SetOrigin(grid.origin[0], grid.origin[1], grid.origin[2]);
  image->SetSpacing(grid.pixel, grid.pixel, grid.pixel);
  const std::int64_t count = std::int64_t{grid.size[0]} * grid.size[1];
  for (const ScalarField& field : pixels) {
    require_field_length(field.name, field.values.size(), count, "pixels");
    image->GetCellData()->AddArray(real_array(field.name, field.values));
  }
  if (!pixels.empty()) image->GetCellData()->SetActiveScalars(pixels.front().name.c_str());
  add_frame(image, frame);
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
