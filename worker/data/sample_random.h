#ifndef RINGLEADER_WORKER_DATA_SAMPLE_RANDOM_H_
#define RINGLEADER_WORKER_DATA_SAMPLE_RANDOM_H_

// The random numbers of one sample's stream (sample_stream.h's seed of
// (job seed, epoch, index)): SplitMix64's sequence from that seed, so a
// transform that needs several draws (RandomResizedCrop tries up to ten
// boxes) takes them in order, and the same sample of the same epoch draws
// the same numbers on any rank, at any world size, after any resume.

#include <cstdint>

#include "worker/data/sample_stream.h"

namespace ringleader {

// Not thread-safe; one per sample, on the stack.
class SampleRandom {
 public:
  explicit SampleRandom(uint64_t stream_seed) : state_(stream_seed) {}

  uint64_t Next() {
    state_ += 0x9e3779b97f4a7c15ULL;
    uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // In [0, 1), 53 random bits.
  double Uniform() {
    return static_cast<double>(Next() >> 11) * (1.0 / 9007199254740992.0);
  }

 private:
  uint64_t state_;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_DATA_SAMPLE_RANDOM_H_
