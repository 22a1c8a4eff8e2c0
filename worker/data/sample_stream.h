#ifndef RINGLEADER_WORKER_DATA_SAMPLE_STREAM_H_
#define RINGLEADER_WORKER_DATA_SAMPLE_STREAM_H_

// The seed of a random stream that belongs to one sample of one epoch
// (augmentation draws by dataset index, dropout by position in the epoch's
// permutation): a pure function of (job seed, epoch, index), so a resumed
// run draws what an uninterrupted one does without any generator state in
// the checkpoint.

#include <cstdint>

namespace ringleader {

// SplitMix64's finalizer: a well-mixed 64-bit function of its input, so
// nearby arguments give unrelated seeds.
inline uint64_t MixBits(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

inline uint64_t SampleStreamSeed(uint64_t seed, int64_t epoch, int64_t index) {
  return MixBits(MixBits(MixBits(seed) ^ static_cast<uint64_t>(epoch)) ^
                 static_cast<uint64_t>(index));
}

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_DATA_SAMPLE_STREAM_H_
