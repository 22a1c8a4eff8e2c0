#include "worker/data/synthetic_dataset.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "worker/data/dataset.h"

namespace ringleader {
namespace {

// splitmix64's output function: a bijective 64-bit mixer, so distinct
// counters never collide, and a standard one, so the stream is reproducible
// from its description alone.
uint64_t Mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Keys of the independent streams, derived from the seed with fixed salts.
uint64_t StreamKey(uint64_t seed, uint64_t salt) { return Mix64(seed ^ salt); }

constexpr uint64_t kPrototypeSalt = 0x70726f746f747970ULL;  // "prototyp"
constexpr uint64_t kTrainSalt = 0x747261696e696e67ULL;      // "training"
constexpr uint64_t kTestSalt = 0x74657374696e6721ULL;       // "testing!"
constexpr uint64_t kLabelSalt = 0x6c6162656c6c6564ULL;      // "labelled"

// Fills `n` bytes from the counter-based stream (key, item): word j is
// Mix64(Mix64(key ^ item) + j), eight bytes each, little end first.
void FillBytes(uint64_t key, uint64_t item, uint8_t* out, int64_t n) {
  const uint64_t base = Mix64(key ^ Mix64(item));
  for (int64_t j = 0; j * 8 < n; ++j) {
    uint64_t word = Mix64(base + static_cast<uint64_t>(j));
    for (int64_t b = 0; b < 8 && j * 8 + b < n; ++b, word >>= 8) {
      out[j * 8 + b] = static_cast<uint8_t>(word);
    }
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<SyntheticDataset>> SyntheticDataset::Create(
    int64_t size, uint64_t seed, Split split, int64_t num_classes, int64_t rows,
    int64_t cols) {
  if (size < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("synthetic dataset size must be >= 0, got ", size));
  }
  if (num_classes < 1 || num_classes > 256) {
    return absl::InvalidArgumentError(absl::StrCat(
        "synthetic num_classes must be in [1, 256], got ", num_classes));
  }
  if (rows < 1 || rows > 4096 || cols < 1 || cols > 4096) {
    return absl::InvalidArgumentError(
        absl::StrCat("synthetic image size must be in [1, 4096] squared, got ",
                     rows, "x", cols));
  }
  return std::unique_ptr<SyntheticDataset>(
      new SyntheticDataset(size, seed, split, num_classes, rows, cols));
}

SyntheticDataset::SyntheticDataset(int64_t size, uint64_t seed, Split split,
                                   int64_t num_classes, int64_t rows,
                                   int64_t cols)
    : size_(size),
      split_(split),
      num_classes_(num_classes),
      rows_(rows),
      cols_(cols),
      label_key_(StreamKey(
          seed,
          kLabelSalt ^ (split == Split::kTrain ? kTrainSalt : kTestSalt))),
      noise_key_(
          StreamKey(seed, split == Split::kTrain ? kTrainSalt : kTestSalt)),
      prototypes_(static_cast<size_t>(num_classes * rows * cols)) {
  const uint64_t prototype_key = StreamKey(seed, kPrototypeSalt);
  const int64_t numel = rows * cols;
  for (int64_t c = 0; c < num_classes; ++c) {
    FillBytes(prototype_key, static_cast<uint64_t>(c),
              prototypes_.data() + c * numel, numel);
  }
  for (int x = 0; x < 256; ++x) {
    lut_[x] = (static_cast<float>(x) / 255.0f - kSyntheticNormalization.mean) /
              kSyntheticNormalization.stddev;
  }
}

std::string SyntheticDataset::Describe() const {
  return absl::StrCat(split_ == Split::kTrain ? "train" : "test",
                      " split of the synthetic dataset");
}

int64_t SyntheticDataset::Label(int64_t index) const {
  // The modulo bias is below 2^-56 for at most 256 classes.
  return static_cast<int64_t>(
      Mix64(label_key_ ^ Mix64(static_cast<uint64_t>(index))) %
      static_cast<uint64_t>(num_classes_));
}

void SyntheticDataset::RawImage(int64_t index, uint8_t* pixels_out) const {
  const int64_t numel = image_numel();
  FillBytes(noise_key_, static_cast<uint64_t>(index), pixels_out, numel);
  const uint8_t* prototype = prototypes_.data() + Label(index) * numel;
  for (int64_t p = 0; p < numel; ++p) {
    pixels_out[p] = static_cast<uint8_t>((prototype[p] + pixels_out[p]) >> 1);
  }
}

absl::Status SyntheticDataset::Gather(const int64_t* indices, size_t n,
                                      float* images_out,
                                      int64_t* labels_out) const {
  if (absl::Status s = CheckIndices(indices, n, size_); !s.ok()) return s;
  const int64_t numel = image_numel();
  std::vector<uint8_t> pixels(static_cast<size_t>(numel));
  for (size_t i = 0; i < n; ++i) {
    RawImage(indices[i], pixels.data());
    float* dst = images_out + static_cast<int64_t>(i) * numel;
    for (int64_t p = 0; p < numel; ++p) dst[p] = lut_[pixels[p]];
    labels_out[i] = Label(indices[i]);
  }
  return absl::OkStatus();
}

}  // namespace ringleader
