// VTK output: what is written reads back equal through VTK's own reader; a bad field writes nothing.
// Built only when VTK is found (tests/CMakeLists.txt).
#include <vtkCellData.h>
#include <vtkDataArray.h>
#include <vtkDataSetAttributes.h>
#include <vtkImageData.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkFieldData.h>
#include <vtkPolyData.h>
#include <vtkStringArray.h>
#include <vtkXMLImageDataReader.h>
#include <vtkXMLPolyDataReader.h>

#include <sys/resource.h>

#include <csignal>
#include <iterator>

#include "common/error.hpp"
#include "common/hash.hpp"
#include "output/vtk_writer.hpp"
#include "test_support.hpp"

namespace amgsolve {
namespace {

TEST(Vtk, ImageDataReadsBackEqual) {
  test::ScratchDir dir;
  Grid g;
  g.dims = 3;
  g.size = {5, 4, 3};
  g.origin = {0.1, 0.2, 0.25};
  g.spacing = {0.1, 0.2, 0.25};
  Vector<double> u(60), b(60);
  Array<Index> agg(60);
  for (int i = 0; i < 60; ++i) {
    u[i] = std::sin(i) * 1e-7;
    b[i] = i;
    agg[i] = i / 7;
  }
  const std::string path = dir.file("field.vti");
  write_vti(path, g, {{"solution", u}, {"rhs", b}}, {{"aggregate", agg}});

  vtkNew<vtkXMLImageDataReader> reader;
  reader->SetFileName(path.c_str());
  reader->Update();
  vtkImageData* image = reader->GetOutput();
  int dims[3];
  image->GetDimensions(dims);
  EXPECT_EQ(dims[0], 5);
  EXPECT_EQ(dims[1], 4);
  EXPECT_EQ(dims[2], 3);
  double spacing[3], origin[3];
  image->GetSpacing(spacing);
  image->GetOrigin(origin);
  for (int d = 0; d < 3; ++d) {
    EXPECT_DOUBLE_EQ(spacing[d], g.spacing[d]);
    EXPECT_DOUBLE_EQ(origin[d], g.origin[d]);
  }
  vtkDataArray* solution = image->GetPointData()->GetArray("solution");
  vtkDataArray* aggregate = image->GetPointData()->GetArray("aggregate");
  ASSERT_NE(solution, nullptr);
  ASSERT_NE(aggregate, nullptr);
  ASSERT_NE(image->GetPointData()->GetArray("rhs"), nullptr);
  for (int i = 0; i < 60; ++i) {
    EXPECT_EQ(solution->GetTuple1(i), u[i]);  // binary, bit-exact
    EXPECT_EQ(aggregate->GetTuple1(i), agg[i]);
  }
  // Point (i, j, k) sits at origin + spacing * (i, j, k): x fastest, as the solver numbers unknowns.
  double p[3];
  image->GetPoint(1 + 5 * (2 + 4 * 1), p);
  EXPECT_DOUBLE_EQ(p[0], 0.1 + 0.1 * 1);
  EXPECT_DOUBLE_EQ(p[1], 0.2 + 0.2 * 2);
  EXPECT_DOUBLE_EQ(p[2], 0.25 + 0.25 * 1);
}

TEST(Vtk, VoxelDataIsScatteredToTheDomainAndBlankedOutside) {
  test::ScratchDir dir;
  // A 4 x 3 x 2 box of 0.5 mm voxels with every third voxel outside the domain.
  const VoxelDomain d = make_voxel_domain({4, 3, 2}, {-1.0, 0.0, 2.0}, 0.5, [](std::int64_t v) { return v % 3 != 0; });
  Vector<double> phi(static_cast<std::size_t>(d.unknowns()));
  Array<Index> label(phi.size());
  for (std::size_t u = 0; u < phi.size(); ++u) {
    phi[u] = std::exp(-static_cast<double>(u));
    label[u] = static_cast<Index>(u % 4 + 1);
  }
  const std::string path = dir.file("voxels.vti");
  write_voxel_vti(path, d, {{"fluence", phi}}, {{"tissue", label}});

  vtkNew<vtkXMLImageDataReader> reader;
  reader->SetFileName(path.c_str());
  reader->Update();
  vtkImageData* image = reader->GetOutput();
  ASSERT_EQ(image->GetNumberOfCells(), 24);  // one cell per voxel: points are the voxel corners
  double origin[3];
  image->GetOrigin(origin);
  EXPECT_DOUBLE_EQ(origin[0], -1.0);
  EXPECT_DOUBLE_EQ(origin[2], 2.0);
  vtkDataArray* fluence = image->GetCellData()->GetArray("fluence");
  vtkDataArray* tissue = image->GetCellData()->GetArray("tissue");
  vtkDataArray* ghost = image->GetCellData()->GetArray(vtkDataSetAttributes::GhostArrayName());
  ASSERT_NE(fluence, nullptr);
  ASSERT_NE(tissue, nullptr);
  ASSERT_NE(ghost, nullptr);
  for (std::int64_t v = 0; v < d.voxels(); ++v) {
    const Index u = d.unknown_of_voxel[v];
    if (u < 0) {
      EXPECT_TRUE(std::isnan(fluence->GetTuple1(v)));
      EXPECT_EQ(tissue->GetTuple1(v), 0);
      EXPECT_EQ(ghost->GetTuple1(v), vtkDataSetAttributes::HIDDENCELL);
    } else {
      EXPECT_EQ(fluence->GetTuple1(v), static_cast<float>(phi[u]));  // stored as float
      EXPECT_EQ(tissue->GetTuple1(v), label[u]);
      EXPECT_EQ(ghost->GetTuple1(v), 0);
    }
  }
}

TEST(Vtk, SkinSurfaceHasOneQuadPerBoundaryFaceAndSharedCorners) {
  test::ScratchDir dir;
  // Two voxels side by side along x: 10 boundary faces, 12 distinct corners.
  const VoxelDomain d = make_voxel_domain({2, 1, 1}, {0.0, 0.0, 0.0}, 0.5, [](std::int64_t) { return true; });
  const DiffusionOperator op = diffusion_operator(d, Vector<double>(2, 0.1), Vector<double>(2, 1.0), 1.0);
  ASSERT_EQ(op.skin.size(), 10u);
  Vector<double> per_face(op.skin.size());
  for (std::size_t f = 0; f < per_face.size(); ++f) per_face[f] = 0.5 + static_cast<double>(f);
  const std::string path = dir.file("skin.vtp");
  write_skin_vtp(path, d, op.skin, {{"exitance", per_face}}, "test frame");

  vtkNew<vtkXMLPolyDataReader> reader;
  reader->SetFileName(path.c_str());
  reader->Update();
  vtkPolyData* surface = reader->GetOutput();
  ASSERT_EQ(surface->GetNumberOfCells(), 10);
  EXPECT_EQ(surface->GetNumberOfPoints(), 12);
  vtkDataArray* exitance = surface->GetCellData()->GetArray("exitance");
  ASSERT_NE(exitance, nullptr);
  for (vtkIdType f = 0; f < 10; ++f) {
    EXPECT_EQ(exitance->GetTuple1(f), per_face[f]);
    // Each quad lies in the plane of its face: the coordinate along the face's axis is the same at its four
    // corners, and equals that of the face centre.
    const auto [axis, step] = kFaceDirections[op.skin[f].direction];
    const std::array<double, 3> centre = face_centre(d, op.skin[f].unknown, op.skin[f].direction);
    vtkIdType count = 0;
    const vtkIdType* ids = nullptr;
    surface->GetCellPoints(f, count, ids);
    ASSERT_EQ(count, 4);
    for (int k = 0; k < 4; ++k) EXPECT_DOUBLE_EQ(surface->GetPoint(ids[k])[axis], centre[axis]);
    // Wound counter-clockwise seen from outside: (p1 - p0) x (p2 - p1) points out of the voxel.
    double p0[3], p1[3], p2[3];
    surface->GetPoint(ids[0], p0);
    surface->GetPoint(ids[1], p1);
    surface->GetPoint(ids[2], p2);
    const double e1[3] = {p1[0] - p0[0], p1[1] - p0[1], p1[2] - p0[2]};
    const double e2[3] = {p2[0] - p1[0], p2[1] - p1[1], p2[2] - p1[2]};
    const double normal[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
                              e1[0] * e2[1] - e1[1] * e2[0]};
    EXPECT_GT(normal[axis] * step, 0.0) << "face " << f;
  }
  auto* frame = vtkStringArray::SafeDownCast(surface->GetFieldData()->GetAbstractArray("coordinate_frame"));
  ASSERT_NE(frame, nullptr);
  EXPECT_EQ(frame->GetValue(0), "test frame");
}

TEST(Vtk, PictureHasOneCellPerPixel) {
  test::ScratchDir dir;
  PixelGrid grid;
  grid.size = {3, 2};
  grid.origin = {-1.0, 2.0, 5.0};
  grid.pixel = 0.25;
  Vector<double> radiance = {1, 2, 3, 4, 5, std::nan("")};
  const std::string path = dir.file("camera.vti");
  write_picture_vti(path, grid, {{"radiance", radiance}}, "frame");
  vtkNew<vtkXMLImageDataReader> reader;
  reader->SetFileName(path.c_str());
  reader->Update();
  vtkImageData* image = reader->GetOutput();
  ASSERT_EQ(image->GetNumberOfCells(), 6);
  vtkDataArray* values = image->GetCellData()->GetArray("radiance");
  ASSERT_NE(values, nullptr);
  for (vtkIdType c = 0; c < 5; ++c) EXPECT_EQ(values->GetTuple1(c), radiance[c]);
  EXPECT_TRUE(std::isnan(values->GetTuple1(5)));
  EXPECT_THROW(write_picture_vti(dir.file("bad.vti"), grid, {{"radiance", Vector<double>(5)}}, ""), Error);
  EXPECT_FALSE(std::filesystem::exists(dir.file("bad.vti")));
}

// Fields beyond float's range (a source power of 1e50, or 1e-50) are written in double, to their digits (in
// float they read inf and 0); those within it stay float, half the file.
TEST(Vtk, FieldsBeyondFloatsRangeAreWrittenInDouble) {
  test::ScratchDir dir;
  const VoxelDomain d = make_voxel_domain({3, 2, 2}, {0.0, 0.0, 0.0}, 1.0, [](std::int64_t) { return true; });
  PixelGrid grid;
  grid.size = {3, 4};
  grid.pixel = 1.0;
  for (const double scale : {1e50, 1e-50, 1.0}) {
    Vector<double> phi(static_cast<std::size_t>(d.unknowns()));
    for (std::size_t u = 0; u < phi.size(); ++u) phi[u] = scale * (1.0 + 0.1 * static_cast<double>(u));
    write_voxel_vti(dir.file("voxels.vti"), d, {{"fluence", phi}}, {});
    write_picture_vti(dir.file("camera.vti"), grid, {{"radiance", phi}}, "");
    for (const char* file : {"voxels.vti", "camera.vti"}) {
      vtkNew<vtkXMLImageDataReader> reader;
      reader->SetFileName(dir.file(file).c_str());
      reader->Update();
      vtkDataArray* values = reader->GetOutput()->GetCellData()->GetArray(0);
      ASSERT_NE(values, nullptr) << file;
      EXPECT_EQ(values->GetDataType(), scale == 1.0 ? VTK_FLOAT : VTK_DOUBLE) << file << " at " << scale;
      for (vtkIdType c = 0; c < values->GetNumberOfTuples(); ++c)
        EXPECT_NEAR(values->GetTuple1(c), phi[static_cast<std::size_t>(c)], 1e-7 * std::abs(phi[static_cast<std::size_t>(c)]))
            << file << " at " << scale;
    }
  }
}

// Each writer names the field, its length and what it should have had a value for.
TEST(Vtk, WrongFieldLengthIsAnErrorAndWritesNothing) {
  test::ScratchDir dir;
  Grid g;
  g.size = {2, 2, 1};
  EXPECT_EQ(test::error_of<Error>([&] { write_vti(dir.file("x.vti"), g, {{"solution", Vector<double>(3)}}); }),
            "VTK field 'solution' has 3 values for 4 grid points");
  const VoxelDomain d = make_voxel_domain({3, 2, 2}, {0.0, 0.0, 0.0}, 1.0, [](std::int64_t v) { return v != 0; });
  EXPECT_EQ(test::error_of<Error>([&] { write_voxel_vti(dir.file("v.vti"), d, {{"fluence", Vector<double>(12)}}, {}); }),
            "VTK field 'fluence' has 12 values for 11 unknowns");
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

// A VTK file the file-size limit cuts short (as a full disk would) is an error, and the file it was to
// replace stays as it was: VTK's Write() says 1 regardless, its error code does not.
TEST(Vtk, AFileCutShortIsAnErrorAndReplacesNothing) {
  test::ScratchDir dir;
  const std::string path = dir.file("field.vti");
  Grid small;
  small.size = {2, 2, 1};
  write_vti(path, small, {{"solution", Vector<double>(4, 1.0)}});
  const std::uintmax_t before = std::filesystem::file_size(path);
  Grid large;
  large.dims = 3;
  large.size = {64, 64, 64};
  Vector<double> noise(64 * 64 * 64);  // incompressible, so that zlib cannot bring it under the limit
  for (std::size_t i = 0; i < noise.size(); ++i) noise[i] = seeded_uniform(7, i);
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  rlimit limited = saved;
  limited.rlim_cur = 64 * 1024;
  if (saved.rlim_max != RLIM_INFINITY && saved.rlim_max < limited.rlim_cur) GTEST_SKIP() << "a lower hard limit";
  const auto action = std::signal(SIGXFSZ, SIG_IGN);  // as the program does: the write fails with EFBIG
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limited), 0);
  std::string message;
  try {
    write_vti(path, large, {{"solution", noise}});
  } catch (const Error& e) {
    message = e.what();
  }
  setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, action);
  EXPECT_NE(message.find("cannot write VTK file " + path), std::string::npos) << message;
  EXPECT_EQ(std::filesystem::file_size(path), before);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1) << "no temporary file left";
}

}  // namespace
}  // namespace amgsolve
