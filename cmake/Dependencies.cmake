# Third-party libraries, all from Debian packages (scripts/bootstrap installs them).
# Required: OpenMP, Eigen, yaml-cpp, CLI11, nlohmann-json, zlib (and GoogleTest for the tests): the small header and
# library packages that scripts/device-deps also fetches for the GPU machine. Optional, found quietly, the
# parts that need them left out with a message: VTK (the .vti output), Google Benchmark (bench_kernels),
# GraphBLAS (the graphblas baseline, spgemm/CMakeLists.txt).
find_package(OpenMP REQUIRED COMPONENTS CXX)
find_package(Eigen3 3.4 REQUIRED NO_MODULE)
find_package(yaml-cpp REQUIRED)
find_package(CLI11 REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(ZLIB REQUIRED)

find_package(VTK 9 QUIET COMPONENTS CommonCore CommonDataModel CommonMisc IOXML)
set(AMGSOLVE_WITH_VTK ${VTK_FOUND})
if(NOT AMGSOLVE_WITH_VTK)
  message(STATUS "amgsolve: VTK 9 not found (libvtk9-dev), building without VTK output: output.vtk and --vtk "
                 "answer \"built without VTK\"")
endif()

# MPI (OpenMPI from Debian: openmpi-bin, libopenmpi-dev): the distributed solve (distributed/,
# backend/mpi/). AUTO builds it when MPI is found; a build without it runs on one process.
set(AMGSOLVE_MPI AUTO CACHE STRING "Build the MPI layer: AUTO (when MPI is found), ON, OFF")
set_property(CACHE AMGSOLVE_MPI PROPERTY STRINGS AUTO ON OFF)
set(AMGSOLVE_WITH_MPI OFF)
if(NOT AMGSOLVE_MPI STREQUAL "OFF")
  if(AMGSOLVE_MPI STREQUAL "ON")
    find_package(MPI REQUIRED COMPONENTS CXX)
  else()
    find_package(MPI QUIET COMPONENTS CXX)
  endif()
  set(AMGSOLVE_WITH_MPI ${MPI_CXX_FOUND})
  if(NOT MPI_CXX_FOUND)
    message(STATUS "amgsolve: MPI not found (libopenmpi-dev), building for one process")
  endif()
endif()

if(AMGSOLVE_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
set(AMGSOLVE_WITH_GOOGLE_BENCHMARK OFF)
if(AMGSOLVE_BUILD_BENCH)
  find_package(benchmark QUIET)
  set(AMGSOLVE_WITH_GOOGLE_BENCHMARK ${benchmark_FOUND})
  if(NOT benchmark_FOUND)
    message(STATUS "amgsolve: Google Benchmark not found (libbenchmark-dev), bench_kernels is left out "
                   "(spgemm-bench is still built)")
  endif()
endif()

# GraphBLAS, its library as GraphBLAS::GraphBLAS and its header's folder, both needed for the baseline.
include(${CMAKE_CURRENT_LIST_DIR}/GraphBLAS.cmake)
find_path(GRAPHBLAS_INCLUDE_DIR GraphBLAS.h PATH_SUFFIXES suitesparse)
if(TARGET GraphBLAS::GraphBLAS AND GRAPHBLAS_INCLUDE_DIR)
  set(AMGSOLVE_WITH_GRAPHBLAS ON)
else()
  set(AMGSOLVE_WITH_GRAPHBLAS OFF)
endif()

# Debian's yaml-cpp 0.7 exports the target "yaml-cpp" without a namespace.
if(TARGET yaml-cpp AND NOT TARGET yaml-cpp::yaml-cpp)
  add_library(yaml-cpp::yaml-cpp ALIAS yaml-cpp)
endif()
