# `cmake --install` puts the library (amgsolve::amgsolve, see amgsolve/solver.hpp), its headers and a CMake
# package into the prefix, so that another project can
#   find_package(amgsolve REQUIRED)
#   target_link_libraries(app PRIVATE amgsolve::amgsolve)
# (examples/library/ is such a project). Headers keep the source tree's layout under include/amgsolve/, so
# the API header is <amgsolve/solver.hpp> and what it includes resolves as it does in the source tree.
include(CMakePackageConfigHelpers)

set(AMGSOLVE_LIBRARY_TARGETS amgsolve_common amgsolve_sparse amgsolve_spgemm amgsolve_backend amgsolve_amg
    amgsolve_solver amgsolve_library)
set(AMGSOLVE_HEADER_FOLDERS common sparse spgemm backend amg solver amgsolve)
if(AMGSOLVE_WITH_MPI)
  list(APPEND AMGSOLVE_LIBRARY_TARGETS amgsolve_distributed)
  list(APPEND AMGSOLVE_HEADER_FOLDERS distributed)
endif()
install(TARGETS ${AMGSOLVE_LIBRARY_TARGETS} EXPORT amgsolveTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
foreach(folder ${AMGSOLVE_HEADER_FOLDERS})
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${folder} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/amgsolve
          FILES_MATCHING PATTERN "*.hpp")
endforeach()

set(package_dir ${CMAKE_INSTALL_LIBDIR}/cmake/amgsolve)
install(EXPORT amgsolveTargets NAMESPACE amgsolve:: DESTINATION ${package_dir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/amgsolveConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/amgsolveConfig.cmake INSTALL_DESTINATION ${package_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/amgsolveConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/amgsolveConfig.cmake ${PROJECT_BINARY_DIR}/amgsolveConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/GraphBLAS.cmake
        DESTINATION ${package_dir})
