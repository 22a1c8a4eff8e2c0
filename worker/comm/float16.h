#ifndef RINGLEADER_WORKER_COMM_FLOAT16_H_
#define RINGLEADER_WORKER_COMM_FLOAT16_H_

// The two 16-bit floats gradients are compressed to, as raw bits, converted
// to and from float32 the way LibTorch does on the CPU (c10::Half,
// c10::BFloat16) and CUDA does on the GPU (__float2half_rn,
// __float2bfloat16_rn): round to nearest, ties to even; overflow to
// infinity; NaN stays NaN (as the canonical quiet NaN: fp16 0x7e00, bf16
// 0x7fc0, with its sign for fp16). Widening is exact.
//
// fp16 (IEEE binary16): 11-bit significand, exponent 2^-14..2^15 (subnormals
// down to 2^-24), largest finite 65504. bf16: 8-bit significand, float32's
// exponent range.
//
// The fp16 conversions are branch-free (float arithmetic does the rounding
// and the subnormals), after Marat Dukhan's FP16 library, which c10::Half
// uses too, so the communicators' reduction loops vectorize. worker/data's
// HalfToFloat (the .npy reader's, which also keeps NaN payloads) is a
// different function for a different job.

#include <cstdint>
#include <cstring>

namespace ringleader {

namespace float16_internal {
inline uint32_t Bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof(b));
  return b;
}
inline float FromBits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof(f));
  return f;
}
}  // namespace float16_internal

inline float Fp16BitsToFloat(uint16_t h) {
  using float16_internal::Bits;
  using float16_internal::FromBits;
  const uint32_t w = static_cast<uint32_t>(h) << 16;
  const uint32_t sign = w & 0x80000000u;
  const uint32_t two_w = w + w;  // Exponent and mantissa, sign shifted out.
  // Normals (and inf/NaN): move exponent and mantissa into place, then
  // rebias by multiplying with 2^-112 (exact).
  const float normalized = FromBits((two_w >> 4) + (0xe0u << 23)) * 0x1.0p-112f;
  // Subnormals: the mantissa as the low bits of 0.5's significand, minus 0.5.
  const float denormalized = FromBits((two_w >> 17) | (126u << 23)) - 0.5f;
  const uint32_t magnitude =
      two_w < (1u << 27) ? Bits(denormalized) : Bits(normalized);
  return FromBits(sign | magnitude);
}

inline uint16_t FloatToFp16Bits(float f) {
  using float16_internal::Bits;
  using float16_internal::FromBits;
  // Scaling up then down rounds the value to fp16's precision in float
  // arithmetic (round to nearest even) and overflows what is too large.
  float base = (__builtin_fabsf(f) * 0x1.0p+112f) * 0x1.0p-110f;
  const uint32_t w = Bits(f);
  const uint32_t shl1_w = w + w;
  const uint32_t sign = w & 0x80000000u;
  uint32_t bias = shl1_w & 0xff000000u;
  if (bias < 0x71000000u) bias = 0x71000000u;  // Subnormal results.
  base = FromBits((bias >> 1) + 0x07800000u) + base;
  const uint32_t bits = Bits(base);
  const uint32_t exp_bits = (bits >> 13) & 0x00007c00u;
  const uint32_t mantissa_bits = bits & 0x00000fffu;
  const uint32_t nonsign = exp_bits + mantissa_bits;
  return static_cast<uint16_t>((sign >> 16) |
                               (shl1_w > 0xff000000u ? 0x7e00u : nonsign));
}

inline float Bf16BitsToFloat(uint16_t b) {
  return float16_internal::FromBits(static_cast<uint32_t>(b) << 16);
}

inline uint16_t FloatToBf16Bits(float f) {
  const uint32_t w = float16_internal::Bits(f);
  if ((w & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;  // NaN.
  // Ties to even: add just under half an ulp, plus the kept lowest bit.
  return static_cast<uint16_t>((w + 0x7fffu + ((w >> 16) & 1u)) >> 16);
}

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_COMM_FLOAT16_H_
