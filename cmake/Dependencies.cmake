# Third-party libraries, all from Debian packages (scripts/bootstrap installs them).
find_package(OpenMP REQUIRED COMPONENTS CXX)
find_package(Eigen3 3.4 REQUIRED NO_MODULE)
find_package(yaml-cpp REQUIRED)
find_package(CLI11 REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(VTK 9 REQUIRED COMPONENTS CommonCore CommonDataModel IOXML)

if(AMGSOLVE_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(AMGSOLVE_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()

# Debian's yaml-cpp 0.7 exports the target "yaml-cpp" without a namespace.
if(TARGET yaml-cpp AND NOT TARGET yaml-cpp::yaml-cpp)
  add_library(yaml-cpp::yaml-cpp ALIAS yaml-cpp)
endif()
