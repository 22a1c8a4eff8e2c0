#ifndef RINGLEADER_WORKER_DATA_ENCODED_SAMPLES_H_
#define RINGLEADER_WORKER_DATA_ENCODED_SAMPLES_H_

// Where an image dataset's encoded samples come from: a list fixed once per
// job (an ImageFolder's files in torchvision's order, or the samples of a
// set of tar shards in archive order), each with its class id. The index of
// a sample is its position in that list, the unit of the sampler, so
// DistributedSampler semantics, resume offsets and the exact-once check
// hold as for arrays.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ringleader {

// Files found unreadable while the list was built and left out of it
// (dataset.skip_corrupt), for the job's count and its log.
struct SkippedFiles {
  int64_t count = 0;
  std::vector<std::string> examples;  // The first few, "path: why".

  void Add(const std::string& what);
};

// Immutable after construction; Read is thread-safe.
class EncodedSamples {
 public:
  virtual ~EncodedSamples() = default;

  virtual int64_t size() const = 0;
  virtual int64_t label(int64_t i) const = 0;
  // The encoded bytes of sample i: a view of `buffer` (filled by the read)
  // or of a mapping that lives as long as this object. Errors name the
  // sample.
  virtual absl::StatusOr<absl::string_view> Read(int64_t i,
                                                 std::string& buffer) const = 0;
  // Sample i in messages: "/data/train/cat/1.jpg", or "key 000123 of shard
  // /data/train-000001.tar".
  virtual std::string Name(int64_t i) const = 0;
  // "the ImageFolder /data/train (1000 classes)".
  virtual std::string Describe() const = 0;
  // Class names by id (an ImageFolder's folders); empty when the data has
  // only ids (shards).
  virtual const std::vector<std::string>& class_names() const = 0;
  // Classes: the names' count, else the largest id + 1.
  virtual int64_t num_classes() const = 0;
  virtual const SkippedFiles& skipped() const = 0;
};

// What an encoded image's size, first and last bytes tell without decoding
// it: DataLoss "an empty file", "not a JPEG or PNG image (it starts with
// ...)", "a truncated JPEG (no end marker)" or "a truncated PNG (no IEND
// chunk)". `head` is at least the first 8 bytes (or all), `tail` the last
// up to 1024.
absl::Status CheckEncodedImageEnds(absl::string_view head,
                                   absl::string_view tail, uint64_t size);
inline constexpr size_t kImageTailBytes = 1024;

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_DATA_ENCODED_SAMPLES_H_
