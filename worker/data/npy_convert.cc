#include "worker/data/npy_convert.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "worker/data/half.h"
#include "worker/data/npy_header.h"

namespace ringleader {
namespace {

template <typename T>
T Load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <typename T, typename D>
void Widen(const uint8_t* src, size_t n, D* dst) {
  for (size_t i = 0; i < n; ++i) {
    dst[i] = static_cast<D>(Load<T>(src + i * sizeof(T)));
  }
}

template <typename T>
IntRange RangeOf(const uint8_t* src, size_t n) {
  if (n == 0) return {};
  T lo = Load<T>(src);
  T hi = lo;
  for (size_t i = 1; i < n; ++i) {
    const T v = Load<T>(src + i * sizeof(T));
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  return {static_cast<int64_t>(lo), static_cast<int64_t>(hi)};
}

}  // namespace

void ConvertToFloat32(NpyDtype dtype, const uint8_t* src, size_t n,
                      float* dst) {
  switch (dtype) {
    case NpyDtype::kUint8:
      return Widen<uint8_t>(src, n, dst);
    case NpyDtype::kInt8:
      return Widen<int8_t>(src, n, dst);
    case NpyDtype::kUint16:
      return Widen<uint16_t>(src, n, dst);
    case NpyDtype::kInt16:
      return Widen<int16_t>(src, n, dst);
    case NpyDtype::kUint32:
      return Widen<uint32_t>(src, n, dst);
    case NpyDtype::kInt32:
      return Widen<int32_t>(src, n, dst);
    case NpyDtype::kInt64:
      return Widen<int64_t>(src, n, dst);
    case NpyDtype::kFloat16:
      for (size_t i = 0; i < n; ++i) {
        dst[i] = HalfToFloat(Load<uint16_t>(src + 2 * i));
      }
      return;
    case NpyDtype::kFloat32:
      if (n > 0) std::memcpy(dst, src, n * sizeof(float));
      return;
    case NpyDtype::kFloat64:
      return Widen<double>(src, n, dst);
  }
}

bool ConvertToInt64(NpyDtype dtype, const uint8_t* src, size_t n,
                    int64_t* dst) {
  switch (dtype) {
    case NpyDtype::kUint8:
      Widen<uint8_t>(src, n, dst);
      return true;
    case NpyDtype::kInt8:
      Widen<int8_t>(src, n, dst);
      return true;
    case NpyDtype::kUint16:
      Widen<uint16_t>(src, n, dst);
      return true;
    case NpyDtype::kInt16:
      Widen<int16_t>(src, n, dst);
      return true;
    case NpyDtype::kUint32:
      Widen<uint32_t>(src, n, dst);
      return true;
    case NpyDtype::kInt32:
      Widen<int32_t>(src, n, dst);
      return true;
    case NpyDtype::kInt64:
      if (n > 0) std::memcpy(dst, src, n * sizeof(int64_t));
      return true;
    case NpyDtype::kFloat16:
    case NpyDtype::kFloat32:
    case NpyDtype::kFloat64:
      return false;
  }
  return false;
}

IntRange IntegerRange(NpyDtype dtype, const uint8_t* src, size_t n) {
  switch (dtype) {
    case NpyDtype::kUint8:
      return RangeOf<uint8_t>(src, n);
    case NpyDtype::kInt8:
      return RangeOf<int8_t>(src, n);
    case NpyDtype::kUint16:
      return RangeOf<uint16_t>(src, n);
    case NpyDtype::kInt16:
      return RangeOf<int16_t>(src, n);
    case NpyDtype::kUint32:
      return RangeOf<uint32_t>(src, n);
    case NpyDtype::kInt32:
      return RangeOf<int32_t>(src, n);
    case NpyDtype::kInt64:
      return RangeOf<int64_t>(src, n);
    case NpyDtype::kFloat16:
    case NpyDtype::kFloat32:
    case NpyDtype::kFloat64:
      return {};
  }
  return {};
}

}  // namespace ringleader
