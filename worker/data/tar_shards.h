#ifndef RINGLEADER_WORKER_DATA_TAR_SHARDS_H_
#define RINGLEADER_WORKER_DATA_TAR_SHARDS_H_

// WebDataset-style tar shards: each sample is the run of consecutive
// members sharing a key (a member's path up to the first dot of its last
// component: "n01/000123.jpg" and "n01/000123.cls" are sample
// "n01/000123"), holding one image ({key}.jpg, .jpeg or .png) and its class
// id ({key}.cls, ASCII decimal, as WebDataset's writers store ints); other
// members of a sample (.json, .txt) are ignored.
//
// The index of every sample (shard, offset and size of its image, label)
// is built once per job by reading each shard's headers in order, so each
// sample is a unit of the sampler exactly as a file of an ImageFolder is
// (docs/design-notes.md says why not whole shards per rank). The shards are
// memory-mapped: a read is a copy-free view, and the page cache keeps what
// was read.
//
// Checked while indexing, so a bad sample fails the job before it trains
// (or is left out, with skip_corrupt): a corrupt or truncated archive, a
// sample without its label or without an image, a label that is not a
// non-negative integer, and an image whose ends are not a whole JPEG or PNG
// (encoded_samples.h).

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "worker/data/encoded_samples.h"
#include "worker/data/mapped_file.h"

namespace ringleader {

class TarShardSamples : public EncodedSamples {
 public:
  // `shards`: paths or brace patterns (common/shard_pattern.h), expanded
  // in order. Errors name the shard (and the sample's key).
  static absl::StatusOr<std::unique_ptr<TarShardSamples>> Open(
      const std::vector<std::string>& shards, bool skip_corrupt);

  int64_t size() const override {
    return static_cast<int64_t>(samples_.size());
  }
  int64_t label(int64_t i) const override { return samples_[i].label; }
  absl::StatusOr<absl::string_view> Read(int64_t i,
                                         std::string& buffer) const override;
  std::string Name(int64_t i) const override;
  std::string Describe() const override;
  const std::vector<std::string>& class_names() const override {
    return no_names_;
  }
  int64_t num_classes() const override { return num_classes_; }
  const SkippedFiles& skipped() const override { return skipped_; }

  struct Sample {
    int32_t shard = 0;
    uint64_t offset = 0;
    uint64_t size = 0;
    int64_t label = 0;
    std::string key;
  };

 private:
  TarShardSamples() = default;
  absl::Status AddShard(MappedFile shard, bool skip_corrupt);

  std::vector<MappedFile> shards_;
  std::vector<Sample> samples_;
  int64_t num_classes_ = 0;
  SkippedFiles skipped_;
  std::vector<std::string> no_names_;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_DATA_TAR_SHARDS_H_
