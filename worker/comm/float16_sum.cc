#include "worker/comm/float16_sum.h"

#include <algorithm>

#include "worker/comm/float16.h"

namespace ringleader {
namespace {

struct Fp16 {
  static float Widen(uint16_t h) { return Fp16BitsToFloat(h); }
  static uint16_t Round(float f) { return FloatToFp16Bits(f); }
};
struct Bf16 {
  static float Widen(uint16_t h) { return Bf16BitsToFloat(h); }
  static uint16_t Round(float f) { return FloatToBf16Bits(f); }
};

template <typename F>
void Add(uint16_t* out, const uint16_t* a, const uint16_t* b, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    out[i] = F::Round(F::Widen(a[i]) + F::Widen(b[i]));
  }
}

// Blocks small enough for the float accumulator to stay in L1, large enough
// for the loops to vectorize; every input of a block is read before its
// output is written, so `out` may alias an input.
template <typename F>
void SumOnce(uint16_t* out, const uint16_t* const* in, int count, size_t n) {
  constexpr size_t kBlock = 512;
  float acc[kBlock];
  for (size_t lo = 0; lo < n; lo += kBlock) {
    const size_t m = std::min(kBlock, n - lo);
    const uint16_t* first = in[0] + lo;
    for (size_t i = 0; i < m; ++i) acc[i] = F::Widen(first[i]);
    for (int k = 1; k < count; ++k) {
      const uint16_t* src = in[k] + lo;
      for (size_t i = 0; i < m; ++i) acc[i] += F::Widen(src[i]);
    }
    for (size_t i = 0; i < m; ++i) out[lo + i] = F::Round(acc[i]);
  }
}

}  // namespace

void AddFloat16(Float16Format format, uint16_t* out, const uint16_t* a,
                const uint16_t* b, size_t n) {
  if (format == Float16Format::kFp16) {
    Add<Fp16>(out, a, b, n);
  } else {
    Add<Bf16>(out, a, b, n);
  }
}

void SumFloat16RoundOnce(Float16Format format, uint16_t* out,
                         const uint16_t* const* in, int count, size_t n) {
  if (count <= 0) return;
  if (format == Float16Format::kFp16) {
    SumOnce<Fp16>(out, in, count, n);
  } else {
    SumOnce<Bf16>(out, in, count, n);
  }
}

}  // namespace ringleader
