#ifndef RINGLEADER_WORKER_DATA_ENCODED_IMAGE_DATASET_H_
#define RINGLEADER_WORKER_DATA_ENCODED_IMAGE_DATASET_H_

// A Dataset over encoded images (an ImageFolder or tar shards,
// encoded_samples.h): each sample is decoded and transformed when it is
// gathered (image_transform.h), by whichever loader thread gathers it, into
// float32 [3, size, size] and its int64 class id.
//
// A file that fails to decode (corruption the listing's checks cannot see)
// fails the gather with DataLoss naming it; with skip_corrupt it is
// replaced by the next sample in index order that decodes (at most 16
// tries), transformed with the replaced sample's own random draws, so the
// batch keeps its size and every rank still sees its shard's indices; the
// distinct indices replaced are counted.

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "worker/data/dataset.h"
#include "worker/data/encoded_samples.h"
#include "worker/data/image_transform.h"

namespace ringleader {

// Thread-safe: Gather* may run on several loader threads at once.
class EncodedImageDataset : public Dataset {
 public:
  struct Options {
    ImageTransformSpec transform;
    uint64_t seed = 0;  // The job's: with epoch and index, every draw.
    bool skip_corrupt = false;
    std::string split = "train";  // For Describe(): "train split of ...".
  };

  static absl::StatusOr<std::unique_ptr<EncodedImageDataset>> Create(
      std::shared_ptr<const EncodedSamples> samples, const Options& options);

  int64_t size() const override { return samples_->size(); }
  std::vector<FieldShape> input_fields() const override;
  FieldShape target_field() const override;
  int64_t num_classes() const override { return samples_->num_classes(); }
  std::string Describe() const override;
  absl::Status GatherFields(const int64_t* indices, size_t n,
                            const std::vector<void*>& inputs_out,
                            void* targets_out) const override;
  absl::Status GatherForEpoch(int64_t epoch, const int64_t* indices, size_t n,
                              const std::vector<void*>& inputs_out,
                              void* targets_out) const override;
  // Left out while listing, plus the distinct indices replaced since.
  int64_t skipped_samples() const override;

  const EncodedSamples& samples() const { return *samples_; }

 private:
  EncodedImageDataset(std::shared_ptr<const EncodedSamples> samples,
                      const Options& options, ImageTransform transform)
      : samples_(std::move(samples)),
        options_(options),
        transform_(std::move(transform)) {}

  // Sample `index` into `out` (3 * size * size floats) and its label.
  absl::Status One(int64_t epoch, int64_t index, float* out,
                   int64_t* label) const;
  absl::Status Decode(int64_t index, uint64_t stream_seed, float* out) const;

  const std::shared_ptr<const EncodedSamples> samples_;
  const Options options_;
  const ImageTransform transform_;

  mutable absl::Mutex mu_;
  mutable std::set<int64_t> replaced_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_DATA_ENCODED_IMAGE_DATASET_H_
