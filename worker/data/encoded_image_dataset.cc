#include "worker/data/encoded_image_dataset.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"
#include "worker/data/sample_stream.h"

namespace ringleader {
namespace {

// Replacement tries for an undecodable sample before the gather fails.
constexpr int kReplaceTries = 16;

}  // namespace

absl::StatusOr<std::unique_ptr<EncodedImageDataset>>
EncodedImageDataset::Create(std::shared_ptr<const EncodedSamples> samples,
                            const Options& options) {
  absl::StatusOr<ImageTransform> t = ImageTransform::Create(options.transform);
  if (!t.ok()) return t.status();
  return std::unique_ptr<EncodedImageDataset>(
      new EncodedImageDataset(std::move(samples), options, *std::move(t)));
}

std::vector<FieldShape> EncodedImageDataset::input_fields() const {
  const int64_t s = transform_.size();
  return {FieldShape{ElementType::kFloat32, {3, s, s}}};
}

FieldShape EncodedImageDataset::target_field() const {
  return FieldShape{ElementType::kInt64, {}};
}

std::string EncodedImageDataset::Describe() const {
  return absl::StrCat(options_.split, " split of the ", samples_->Describe());
}

absl::Status EncodedImageDataset::GatherFields(
    const int64_t* indices, size_t n, const std::vector<void*>& inputs_out,
    void* targets_out) const {
  return GatherForEpoch(0, indices, n, inputs_out, targets_out);
}

absl::Status EncodedImageDataset::GatherForEpoch(
    int64_t epoch, const int64_t* indices, size_t n,
    const std::vector<void*>& inputs_out, void* targets_out) const {
  if (inputs_out.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        Describe(), " has one input per sample, not ", inputs_out.size()));
  }
  if (absl::Status s = CheckIndices(indices, n, size()); !s.ok()) return s;
  const size_t per =
      static_cast<size_t>(3) * transform_.size() * transform_.size();
  auto* images = static_cast<float*>(inputs_out[0]);
  auto* labels = static_cast<int64_t*>(targets_out);
  for (size_t k = 0; k < n; ++k) {
    if (absl::Status s = One(epoch, indices[k], images + k * per, labels + k);
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::Status EncodedImageDataset::Decode(int64_t index, uint64_t stream_seed,
                                         float* out) const {
  thread_local std::string buffer;
  absl::StatusOr<absl::string_view> bytes = samples_->Read(index, buffer);
  if (!bytes.ok()) return bytes.status();
  return transform_.Apply(reinterpret_cast<const uint8_t*>(bytes->data()),
                          bytes->size(), stream_seed, out);
}

absl::Status EncodedImageDataset::One(int64_t epoch, int64_t index, float* out,
                                      int64_t* label) const {
  const uint64_t stream = SampleStreamSeed(options_.seed, epoch, index);
  absl::Status s = Decode(index, stream, out);
  if (s.ok()) {
    *label = samples_->label(index);
    return s;
  }
  const std::string what =
      absl::StrCat(samples_->Name(index), ": ", s.message());
  if (!options_.skip_corrupt) return absl::DataLossError(what);
  {
    absl::MutexLock lock(&mu_);
    if (replaced_.insert(index).second) LOG(WARNING) << "skipping " << what;
  }
  for (int t = 1; t <= kReplaceTries; ++t) {
    const int64_t other = (index + t) % size();
    if (Decode(other, stream, out).ok()) {
      *label = samples_->label(other);
      return absl::OkStatus();
    }
  }
  return absl::DataLossError(
      absl::StrCat(what, "; and the ", kReplaceTries,
                   " samples after it fail to decode too"));
}

int64_t EncodedImageDataset::skipped_samples() const {
  absl::MutexLock lock(&mu_);
  return samples_->skipped().count + static_cast<int64_t>(replaced_.size());
}

}  // namespace ringleader
