# ctest's Library test (cmake -P): install this build into a fresh prefix, then configure, build and run
# examples/library, an outside project that finds the package with find_package(amgsolve), and build a
# shared library that links it (a plugin or language binding: the static libraries must be position
# independent), neither setting a C++ standard of its own (the package asks for C++20). Variables:
# BUILD_DIR, SOURCE_DIR, WORK_DIR, CXX, GENERATOR, MAKE_PROGRAM, PREFIX_PATH ('|'-separated, where the
# dependencies are), CUDA_ROOT (empty without CUDA).
function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${what} failed (${status}):\n${out}\n${err}")
  endif()
  set(output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
run("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix)
if(NOT EXISTS ${WORK_DIR}/prefix/include/amgsolve/amgsolve/solver.hpp)
  message(FATAL_ERROR "the API header was not installed")
endif()

# The package names the libraries it links by their targets (found again by its config file on the
# consumer's machine), never by a path of the machine it was built on (the graphblas baseline's
# /usr/lib/.../libgraphblas.so was written in, and a consumer without it failed to link).
file(GLOB exported ${WORK_DIR}/prefix/lib*/cmake/amgsolve/amgsolveTargets.cmake)
if(NOT exported)
  message(FATAL_ERROR "no amgsolveTargets.cmake was installed under ${WORK_DIR}/prefix")
endif()
file(STRINGS ${exported} link_interfaces REGEX "INTERFACE_LINK_LIBRARIES")
foreach(line IN LISTS link_interfaces)
  if(line MATCHES "\"/|;/|<LINK_ONLY:/")
    message(FATAL_ERROR "the installed package links a library by its path on this machine:\n${line}")
  endif()
endforeach()

string(REPLACE "|" ";" dependencies "${PREFIX_PATH}")
set(configure ${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/library -B ${WORK_DIR}/build -G ${GENERATOR}
    -DCMAKE_CXX_COMPILER=${CXX} "-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix\;${PREFIX_PATH}")
if(MAKE_PROGRAM)
  list(APPEND configure -DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM})
endif()
if(CUDA_ROOT)
  list(APPEND configure -DCUDAToolkit_ROOT=${CUDA_ROOT})
endif()
run("configuring examples/library" ${configure})
run("building examples/library" ${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run("running the example" ${WORK_DIR}/build/poisson2d 60)
if(NOT output MATCHES "converged after [0-9]+ iterations")
  message(FATAL_ERROR "the example did not converge:\n${output}")
endif()
message(STATUS "${output}")

set(plugin ${WORK_DIR}/plugin)
file(WRITE ${plugin}/CMakeLists.txt "cmake_minimum_required(VERSION 3.25)
project(amgsolve_plugin LANGUAGES CXX)
find_package(amgsolve REQUIRED)
add_library(plugin SHARED plugin.cpp)
target_link_libraries(plugin PRIVATE amgsolve::amgsolve)
")
file(WRITE ${plugin}/plugin.cpp "#include <amgsolve/solver.hpp>
int iterations_of(std::shared_ptr<const amgsolve::CsrMatrix<double>> A, const amgsolve::Vector<double>& b) {
  const amgsolve::Solver solver(std::move(A), amgsolve::Parameters{});
  amgsolve::Vector<double> x;
  return solver.solve(b, x).iterations;
}
")
list(TRANSFORM configure REPLACE "^${SOURCE_DIR}/examples/library$" "${plugin}")
list(TRANSFORM configure REPLACE "^${WORK_DIR}/build$" "${WORK_DIR}/plugin-build")
run("configuring a shared library that links amgsolve" ${configure})
run("building a shared library that links amgsolve" ${CMAKE_COMMAND} --build ${WORK_DIR}/plugin-build)
