#ifndef RINGLEADER_WORKER_DATA_NPY_CONVERT_H_
#define RINGLEADER_WORKER_DATA_NPY_CONVERT_H_

// Typed conversion loops from .npy elements to the two element types that
// samples hold (float32 values, int64 ids). Callers dispatch on the dtype
// once per row, never per element. Sources are little-endian and may sit at
// any alignment (a mapped file's rows need not be aligned for their type),
// so elements are loaded with memcpy, which compilers turn into plain loads.

#include <cstddef>
#include <cstdint>

#include "worker/data/npy_header.h"

namespace ringleader {

// n elements of `dtype` at `src` into `dst`: integers convert to the nearest
// float (exact up to 2^24), float16 exactly (HalfToFloat), float32 is
// copied, float64 rounds to nearest.
void ConvertToFloat32(NpyDtype dtype, const uint8_t* src, size_t n, float* dst);

// n elements of an integer `dtype` into `dst`, exactly. For a float dtype
// it writes nothing and returns false (ids are never rounded silently).
bool ConvertToInt64(NpyDtype dtype, const uint8_t* src, size_t n, int64_t* dst);

// The smallest and largest of n >= 1 elements of an integer `dtype`; for a
// float dtype, or n == 0, {0, 0}.
struct IntRange {
  int64_t min = 0;
  int64_t max = 0;
};
IntRange IntegerRange(NpyDtype dtype, const uint8_t* src, size_t n);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_DATA_NPY_CONVERT_H_
