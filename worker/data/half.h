#ifndef RINGLEADER_WORKER_DATA_HALF_H_
#define RINGLEADER_WORKER_DATA_HALF_H_

// IEEE 754 binary16 (numpy's float16) to float32. Every half value is
// exactly a float, so the conversion is exact: normals rebias the exponent,
// subnormals (magnitudes under 2^-14) become normal floats, infinities stay
// infinite, and NaNs keep their sign and payload (the payload shifted into
// the float's mantissa, quiet bit untouched), bit for bit what numpy's
// astype(np.float32) gives. Inline so conversion loops stay tight.

#include <cstdint>
#include <cstring>

namespace ringleader {

inline float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);  // Inf or NaN.
  } else if (exponent != 0) {
    // Rebias: half's bias is 15, float's 127.
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;  // +-0.
  } else {
    // Subnormal: mantissa x 2^-24. Shift its leading 1 up to the implicit
    // bit (bit 10); each shift halves the exponent, from 2^-14 (biased 113).
    uint32_t biased = 113;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      --biased;
    }
    bits = sign | (biased << 23) | ((mantissa & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_DATA_HALF_H_
