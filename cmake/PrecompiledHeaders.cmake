# Precompiled headers (GCC). A translation unit here spends up to 1.5 s parsing the standard library before
# its own code (a test 2-3 s, with GoogleTest and Eigen); a precompiled header, parsed once, loads in 0.2 s
# (docs/BENCHMARKS.md has the build times). One header for the libraries and programs (the standard
# library) and one for the tests (with GoogleTest and Eigen), each built once and reused by every target
# (REUSE_FROM). GCC takes a precompiled header only where -fopenmp, -march and the sanitizers are those it
# was built with, which holds for every target of a build: all link OpenMP through amgsolve_common, and
# amgsolve_target_defaults and the sanitizers apply to all (the one program without OpenMP, bench/'s
# hypre-poisson, does without). CMake gives CUDA sources none. Other compilers build without (clang, for the
# fuzz targets: CI's fuzz build so compiles the libraries without them). AMGSOLVE_PRECOMPILED_HEADERS=OFF
# checks that every file includes what it uses.
option(AMGSOLVE_PRECOMPILED_HEADERS "Precompile the standard library headers (GCC)" ON)
set(AMGSOLVE_PCH_TARGET "")
if(AMGSOLVE_PRECOMPILED_HEADERS AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  set(AMGSOLVE_PCH_TARGET amgsolve_pch)
  add_library(amgsolve_pch OBJECT ${CMAKE_CURRENT_LIST_DIR}/precompiled.cpp)
  target_link_libraries(amgsolve_pch PRIVATE OpenMP::OpenMP_CXX)
  target_precompile_headers(amgsolve_pch PRIVATE
    <algorithm> <array> <atomic> <bit> <charconv> <chrono> <cmath> <cstddef> <cstdint> <cstdio> <cstdlib>
    <cstring> <filesystem> <fstream> <functional> <limits> <map> <memory> <numbers> <numeric> <optional>
    <set> <sstream> <stdexcept> <string> <string_view> <type_traits> <utility> <vector> <omp.h>)
  amgsolve_target_defaults(amgsolve_pch)
endif()

# The test programs' header: the libraries' and GoogleTest's and Eigen's (call after find_package(GTest)).
function(amgsolve_test_precompiled_headers)
  if(NOT AMGSOLVE_PCH_TARGET)
    return()
  endif()
  add_library(amgsolve_test_pch OBJECT ${PROJECT_SOURCE_DIR}/cmake/precompiled.cpp)
  target_link_libraries(amgsolve_test_pch PRIVATE OpenMP::OpenMP_CXX GTest::gtest Eigen3::Eigen)
  target_precompile_headers(amgsolve_test_pch PRIVATE $<TARGET_PROPERTY:amgsolve_pch,PRECOMPILE_HEADERS>
                            <gtest/gtest.h> <Eigen/Dense> <Eigen/Sparse>)
  amgsolve_target_defaults(amgsolve_test_pch)
endfunction()
