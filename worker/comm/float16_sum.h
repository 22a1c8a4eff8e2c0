#ifndef RINGLEADER_WORKER_COMM_FLOAT16_SUM_H_
#define RINGLEADER_WORKER_COMM_FLOAT16_SUM_H_

// Sums of 16-bit floats (worker/comm/float16.h) for the CPU communicators,
// which have no 16-bit arithmetic of their own: each element is widened to
// float32, added there, and rounded back (to nearest, ties to even).

#include <cstddef>
#include <cstdint>

namespace ringleader {

enum class Float16Format { kFp16, kBf16 };

// out[i] = round(a[i] + b[i]): one addition, correctly rounded. float32
// holds the sum with at least 2p + 2 bits of significand for both formats
// (24 >= 2 x 11 + 2 for fp16, 24 >= 2 x 8 + 2 for bf16), so rounding the
// float32 sum again gives the same value as rounding the exact sum once
// (Figueroa, "When is double rounding innocuous?", 1995): this is what a
// GPU's native 16-bit add gives, and what each hop of NCCL's ring does.
// `out` may be `a` or `b` (Gloo reduces in place).
void AddFloat16(Float16Format format, uint16_t* out, const uint16_t* a,
                const uint16_t* b, size_t n);

// out[i] = round(in[0][i] + in[1][i] + ... + in[count - 1][i]), the sum
// accumulated in float32 in index order and rounded to 16 bits once at the
// end. `out` may be one of the inputs.
void SumFloat16RoundOnce(Float16Format format, uint16_t* out,
                         const uint16_t* const* in, int count, size_t n);

// Tests: true makes both functions use their portable loops even on a CPU
// with F16C (the fp16 fast path), so each path can be checked on one host.
void UsePortableFloat16LoopsForTesting(bool portable);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_COMM_FLOAT16_SUM_H_
