// What a CUDA build of LibTorch generates here (c10/cuda/impl/
// cuda_cmake_macros.h.in); Debian's CPU LibTorch ships c10/cuda's headers
// without it. Only the compile check below uses this file.
#pragma once
#define C10_CUDA_BUILD_SHARED_LIBS
