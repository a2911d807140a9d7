# SuiteSparse:GraphBLAS (Debian libgraphblas-dev) as the imported target GraphBLAS::GraphBLAS, where found:
# the SpGEMM baseline `graphblas` links it. The installed amgsolve package includes this file again to find
# the library on the consumer's machine, where a path written into the package at build time may not hold.
# GLOBAL: a project that adds this tree as a subdirectory (python/CMakeLists.txt) links it from its own folder.
if(NOT TARGET GraphBLAS::GraphBLAS)
  find_library(GRAPHBLAS_LIBRARY graphblas)
  if(GRAPHBLAS_LIBRARY)
    add_library(GraphBLAS::GraphBLAS UNKNOWN IMPORTED GLOBAL)
    set_target_properties(GraphBLAS::GraphBLAS PROPERTIES IMPORTED_LOCATION "${GRAPHBLAS_LIBRARY}")
  endif()
endif()
