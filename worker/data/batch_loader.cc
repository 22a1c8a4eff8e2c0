#include "worker/data/batch_loader.h"

#include <ATen/EmptyTensor.h>
#include <ATen/core/Tensor.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "worker/data/dataset.h"

namespace ringleader {

absl::StatusOr<std::unique_ptr<BatchLoader>> BatchLoader::Create(
    const Dataset& dataset, std::vector<int64_t> indices, int64_t batch_size,
    int prefetch, const Clock* clock, Augment augment, bool pin_memory) {
  if (batch_size < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch size must be >= 1, got ", batch_size));
  }
  if (prefetch < 1 || prefetch > 1024) {
    return absl::InvalidArgumentError(
        absl::StrCat("prefetch must be in [1, 1024], got ", prefetch));
  }
  if (absl::Status s =
          CheckIndices(indices.data(), indices.size(), dataset.size());
      !s.ok()) {
    return s;
  }
  return std::unique_ptr<BatchLoader>(
      new BatchLoader(dataset, std::move(indices), batch_size, prefetch, clock,
                      std::move(augment), pin_memory));
}

BatchLoader::BatchLoader(const Dataset& dataset, std::vector<int64_t> indices,
                         int64_t batch_size, int prefetch, const Clock* clock,
                         Augment augment, bool pin_memory)
    : dataset_(dataset),
      indices_(std::move(indices)),
      batch_size_(batch_size),
      num_batches_((static_cast<int64_t>(indices_.size()) + batch_size - 1) /
                   batch_size),
      prefetch_(prefetch),
      clock_(clock),
      augment_(std::move(augment)),
      pin_memory_(pin_memory),
      thread_([this] { Produce(); }) {}

BatchLoader::~BatchLoader() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  thread_.join();
}

namespace {

at::ScalarType TorchType(ElementType t) {
  return t == ElementType::kInt64 ? at::kLong : at::kFloat;
}

at::Tensor EmptyBatchTensor(int64_t n, const FieldShape& field, bool pinned) {
  std::vector<int64_t> sizes = {n};
  sizes.insert(sizes.end(), field.dims.begin(), field.dims.end());
  return at::Tensor(
      at::detail::empty_cpu(sizes, TorchType(field.type), pinned));
}

}  // namespace

absl::StatusOr<Batch> BatchLoader::MakeBatch(int64_t b) const {
  const int64_t begin = b * batch_size_;
  const int64_t n = std::min<int64_t>(
      batch_size_, indices_.size() - static_cast<size_t>(begin));
  Batch batch;
  batch.index = b;
  batch.sample_ids.assign(indices_.begin() + begin,
                          indices_.begin() + begin + n);
  std::vector<void*> input_buffers;
  try {
    for (const FieldShape& field : dataset_.input_fields()) {
      batch.inputs.push_back(EmptyBatchTensor(n, field, pin_memory_));
      input_buffers.push_back(batch.inputs.back().data_ptr());
    }
    batch.targets = EmptyBatchTensor(n, dataset_.target_field(), pin_memory_);
  } catch (const c10::Error& e) {
    // Allocation failure is the one way torch throws here.
    return absl::ResourceExhaustedError(absl::StrCat(
        "cannot allocate batch ", b, ": ", e.what_without_backtrace()));
  }
  if (absl::Status s =
          dataset_.GatherFields(indices_.data() + begin, static_cast<size_t>(n),
                                input_buffers, batch.targets.data_ptr());
      !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("batch ", b, ": ", s.message()));
  }
  if (augment_) augment_(batch);
  return batch;
}

void BatchLoader::Produce() {
  absl::Status status;
  for (int64_t b = 0; b < num_batches_; ++b) {
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(this, &BatchLoader::CanProduce));
      if (stop_) break;
    }
    // Gathering runs unlocked: the consumer keeps taking ready batches.
    absl::StatusOr<Batch> batch = MakeBatch(b);
    absl::MutexLock lock(&mu_);
    if (!batch.ok()) {
      status = batch.status();
      break;
    }
    queue_.push_back(*std::move(batch));
  }
  absl::MutexLock lock(&mu_);
  status_ = status;
  producer_done_ = true;
}

std::optional<Batch> BatchLoader::Next() {
  absl::MutexLock lock(&mu_);
  if (!CanConsume()) {
    const absl::Time start = clock_->Now();
    mu_.Await(absl::Condition(this, &BatchLoader::CanConsume));
    data_wait_ += clock_->Now() - start;
  }
  if (queue_.empty()) return std::nullopt;
  Batch batch = std::move(queue_.front());
  queue_.pop_front();
  return batch;
}

absl::Status BatchLoader::status() const {
  absl::MutexLock lock(&mu_);
  return status_;
}

absl::Duration BatchLoader::data_wait() const {
  absl::MutexLock lock(&mu_);
  return data_wait_;
}

}  // namespace ringleader
