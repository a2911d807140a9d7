# CUDA is optional. AMGSOLVE_CUDA=AUTO enables it when nvcc is found and this machine has an NVIDIA GPU (the
# first build of a newcomer without one then skips the CUDA files: scripts/amgsolve); ON requires nvcc and
# builds the CUDA parts with or without a GPU (scripts/test, CI); OFF skips them.
# Kernels are built for Hopper (sm_90 machine code) plus compute_90 PTX for newer GPUs.
set(AMGSOLVE_WITH_CUDA OFF)
set(amgsolve_gpu_here OFF)
if(EXISTS /dev/nvidiactl OR EXISTS /dev/nvidia0)
  set(amgsolve_gpu_here ON)
endif()
if(AMGSOLVE_CUDA STREQUAL "AUTO" AND NOT amgsolve_gpu_here)
  message(STATUS "amgsolve: no NVIDIA GPU on this machine, building without CUDA (-DAMGSOLVE_CUDA=ON builds it)")
elseif(NOT AMGSOLVE_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 90)  # "90" = sm_90 SASS + compute_90 PTX
    endif()
    enable_language(CUDA)
    set(CMAKE_CUDA_STANDARD 17)  # CMake 3.25 has no C++20 dialect flag for nvcc
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    find_package(CUDAToolkit REQUIRED)
    set(AMGSOLVE_WITH_CUDA ON)
  elseif(AMGSOLVE_CUDA STREQUAL "ON")
    message(FATAL_ERROR "AMGSOLVE_CUDA=ON but no CUDA compiler (nvcc) was found")
  else()
    message(STATUS "amgsolve: nvcc not found, building without CUDA")
  endif()
endif()
