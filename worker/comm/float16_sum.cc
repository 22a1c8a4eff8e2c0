#include "worker/comm/float16_sum.h"

#include <algorithm>
#include <atomic>

#include "worker/comm/float16.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

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

#if defined(__x86_64__)
// fp16 with the CPU's own conversions (F16C, 8 at a time), where it has
// them: gcc does not vectorize the branch-free fp16 rounding for baseline
// x86-64 (4.9 ns an element against 0.4 here), and a gradient bucket is
// rounded on every hop. The same results: F16C rounds to nearest even and
// widens exactly, and float32 adds are IEEE either way (NaN payloads may
// differ; NaN stays NaN).
std::atomic<bool> portable_for_testing{false};

// F16C from CPUID leaf 1 itself: clang's __builtin_cpu_supports does not
// know "f16c" (gcc's does). "avx" also checks that the OS saves the YMM
// registers.
bool CpuHasF16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
}

bool HaveF16c() {
  static const bool have = __builtin_cpu_supports("avx") && CpuHasF16c();
  return have && !portable_for_testing.load(std::memory_order_relaxed);
}

__attribute__((target("avx,f16c"))) __m256 Load8(const uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

__attribute__((target("avx,f16c"))) void Store8(uint16_t* p, __m256 v) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p),
                   _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
}

__attribute__((target("avx,f16c"))) void AddFp16F16c(uint16_t* out,
                                                     const uint16_t* a,
                                                     const uint16_t* b,
                                                     size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    Store8(out + i, _mm256_add_ps(Load8(a + i), Load8(b + i)));
  }
  Add<Fp16>(out + i, a + i, b + i, n - i);
}

__attribute__((target("avx,f16c"))) void SumOnceFp16F16c(
    uint16_t* out, const uint16_t* const* in, int count, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 acc = Load8(in[0] + i);
    for (int k = 1; k < count; ++k) acc = _mm256_add_ps(acc, Load8(in[k] + i));
    Store8(out + i, acc);
  }
  for (; i < n; ++i) {
    float acc = Fp16BitsToFloat(in[0][i]);
    for (int k = 1; k < count; ++k) acc += Fp16BitsToFloat(in[k][i]);
    out[i] = FloatToFp16Bits(acc);
  }
}
#endif

}  // namespace

void UsePortableFloat16LoopsForTesting(bool portable) {
#if defined(__x86_64__)
  portable_for_testing.store(portable);
#else
  (void)portable;
#endif
}

void AddFloat16(Float16Format format, uint16_t* out, const uint16_t* a,
                const uint16_t* b, size_t n) {
  if (format == Float16Format::kFp16) {
#if defined(__x86_64__)
    if (HaveF16c()) return AddFp16F16c(out, a, b, n);
#endif
    Add<Fp16>(out, a, b, n);
  } else {
    Add<Bf16>(out, a, b, n);
  }
}

void SumFloat16RoundOnce(Float16Format format, uint16_t* out,
                         const uint16_t* const* in, int count, size_t n) {
  if (count <= 0) return;
  if (format == Float16Format::kFp16) {
#if defined(__x86_64__)
    if (HaveF16c()) return SumOnceFp16F16c(out, in, count, n);
#endif
    SumOnce<Fp16>(out, in, count, n);
  } else {
    SumOnce<Bf16>(out, in, count, n);
  }
}

}  // namespace ringleader
