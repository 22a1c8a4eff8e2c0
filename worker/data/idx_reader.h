#ifndef RINGLEADER_WORKER_DATA_IDX_READER_H_
#define RINGLEADER_WORKER_DATA_IDX_READER_H_

// Reading IDX files, the format of MNIST and Fashion-MNIST
// (http://yann.lecun.com/exdb/mnist/): a big-endian header, magic
// 0x00 0x00 <type> <ndims>, then ndims uint32 sizes, then the payload.
// Only unsigned bytes (type 0x08) are supported, which is what both datasets
// use: images 0x00000803 [N, rows, cols], labels 0x00000801 [N].
// Files may be gzip-compressed (detected from their first bytes).
//
// Files come from users, so nothing here trusts them: every malformed input
// is an error that names the file (wrong magic, zero or overflowing sizes, a
// payload over 2 GiB, truncation, trailing bytes, corrupt gzip), never a
// crash, and memory grows only with the bytes actually present.
//
// All functions are thread-safe (they share nothing).

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "worker/data/dataset.h"

namespace ringleader {

inline constexpr uint32_t kIdxImagesMagic = 0x00000803;
inline constexpr uint32_t kIdxLabelsMagic = 0x00000801;
// The largest payload accepted, in bytes (and elements: they are bytes).
inline constexpr uint64_t kMaxIdxPayloadBytes = uint64_t{1} << 31;

// Images as stored: count * rows * cols bytes, row-major.
struct IdxImages {
  int64_t count = 0;
  int64_t rows = 0;
  int64_t cols = 0;
  std::vector<uint8_t> pixels;
};

// One split of a dataset: images and their labels, of equal count.
struct IdxDataset {
  IdxImages images;
  std::vector<uint8_t> labels;
  int64_t size() const { return images.count; }
};

// An image file (magic 0x00000803, rows and cols >= 1, count >= 0).
absl::StatusOr<IdxImages> ReadIdxImages(const std::string& path);

// A label file (magic 0x00000801); one byte per sample.
absl::StatusOr<std::vector<uint8_t>> ReadIdxLabels(const std::string& path);

// The file names looked for, in order of preference, for one split's images
// or labels: the canonical names unpacked and gzipped, then the
// "train-images.idx3-ubyte" spelling some mirrors use. For kTrain the prefix
// is "train", for kTest "t10k".
std::vector<std::string> IdxFileNames(Split split, bool images);

// Reads the split's images and labels from `dir` (the first of
// IdxFileNames that exists, for each). NotFound lists the names tried;
// InvalidArgument when the counts differ or there are no samples. Labels are
// not range-checked here (that depends on the class count; see
// InMemoryImageDataset).
absl::StatusOr<IdxDataset> LoadIdxSplit(const std::string& dir, Split split);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_DATA_IDX_READER_H_
