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

// Chunks per thread and batch: enough that a thread that drew slow samples
// (large images) does not hold the batch up while the others idle.
constexpr int64_t kChunksPerThread = 4;

}  // namespace

absl::StatusOr<std::unique_ptr<BatchLoader>> BatchLoader::Create(
    const Dataset& dataset, std::vector<int64_t> indices, int64_t batch_size,
    int prefetch, const Clock* clock, Augment augment, bool pin_memory) {
  BatchLoaderOptions o;
  o.prefetch = prefetch;
  o.clock = clock;
  o.augment = std::move(augment);
  o.pin_memory = pin_memory;
  return Create(dataset, std::move(indices), batch_size, std::move(o));
}

absl::StatusOr<std::unique_ptr<BatchLoader>> BatchLoader::Create(
    const Dataset& dataset, std::vector<int64_t> indices, int64_t batch_size,
    BatchLoaderOptions options) {
  if (batch_size < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch size must be >= 1, got ", batch_size));
  }
  if (options.prefetch < 1 || options.prefetch > 1024) {
    return absl::InvalidArgumentError(
        absl::StrCat("prefetch must be in [1, 1024], got ", options.prefetch));
  }
  if (options.threads < 1 || options.threads > 256) {
    return absl::InvalidArgumentError(absl::StrCat(
        "loader threads must be in [1, 256], got ", options.threads));
  }
  if (absl::Status s =
          CheckIndices(indices.data(), indices.size(), dataset.size());
      !s.ok()) {
    return s;
  }
  return std::unique_ptr<BatchLoader>(new BatchLoader(
      dataset, std::move(indices), batch_size, std::move(options)));
}

BatchLoader::BatchLoader(const Dataset& dataset, std::vector<int64_t> indices,
                         int64_t batch_size, BatchLoaderOptions options)
    : dataset_(dataset),
      indices_(std::move(indices)),
      batch_size_(batch_size),
      num_batches_((static_cast<int64_t>(indices_.size()) + batch_size - 1) /
                   batch_size),
      prefetch_(options.prefetch),
      num_threads_(options.threads),
      // One thread gathers a batch whole, as before; several share it.
      chunk_size_(options.threads == 1
                      ? batch_size
                      : std::max<int64_t>(1, batch_size / (options.threads *
                                                           kChunksPerThread))),
      options_(std::move(options)) {
  for (int t = 0; t < num_threads_; ++t) {
    threads_.emplace_back([this] { Work(); });
  }
}

BatchLoader::~BatchLoader() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  for (std::thread& t : threads_) t.join();
}

std::vector<int64_t> BatchLoader::BatchIds(int64_t b) const {
  if (options_.batch_ids) return options_.batch_ids(b);
  const int64_t n = std::min<int64_t>(
      batch_size_, static_cast<int64_t>(indices_.size()) - b * batch_size_);
  return std::vector<int64_t>(indices_.begin() + b * batch_size_,
                              indices_.begin() + b * batch_size_ + n);
}

absl::StatusOr<BatchLoader::Pending> BatchLoader::Allocate(int64_t b) const {
  Pending p;
  p.batch.index = b;
  p.batch.sample_ids = BatchIds(b);
  const int64_t n = static_cast<int64_t>(p.batch.sample_ids.size());
  if (n < 1) {
    return absl::InternalError(absl::StrCat("batch ", b, " has no samples"));
  }
  if (absl::Status s = CheckIndices(p.batch.sample_ids.data(),
                                    p.batch.sample_ids.size(), dataset_.size());
      !s.ok()) {
    return s;
  }
  p.chunks = (n + chunk_size_ - 1) / chunk_size_;
  try {
    for (const FieldShape& field : dataset_.input_fields()) {
      p.batch.inputs.push_back(EmptyBatchTensor(n, field, options_.pin_memory));
      p.buffers.push_back(p.batch.inputs.back().data_ptr());
    }
    p.batch.targets =
        EmptyBatchTensor(n, dataset_.target_field(), options_.pin_memory);
  } catch (const c10::Error& e) {
    // Allocation failure is the one way torch throws here.
    return absl::ResourceExhaustedError(absl::StrCat(
        "cannot allocate batch ", b, ": ", e.what_without_backtrace()));
  }
  return p;
}

std::optional<BatchLoader::Chunk> BatchLoader::Claim() {
  mu_.Await(absl::Condition(this, &BatchLoader::CanClaim));
  if (stop_ || failed_batch_ >= 0 || next_batch_ >= num_batches_) {
    return std::nullopt;
  }
  const int64_t b = next_batch_;
  if (next_begin_ == 0) {
    // Allocation under the lock: a malloc, short beside a gather.
    absl::StatusOr<Pending> p = Allocate(b);
    if (!p.ok()) {
      failed_batch_ = b;
      status_ = p.status();
      return std::nullopt;
    }
    pending_.emplace(b, *std::move(p));
  }
  const int64_t size =
      static_cast<int64_t>(pending_.at(b).batch.sample_ids.size());
  Chunk c{b, next_begin_, std::min(next_begin_ + chunk_size_, size)};
  next_begin_ = c.end;
  if (next_begin_ == size) {
    ++next_batch_;
    next_begin_ = 0;
  }
  return c;
}

absl::Status BatchLoader::Gather(const Chunk& c, Pending& p) const {
  std::vector<void*> inputs;
  const std::vector<FieldShape> fields = dataset_.input_fields();
  for (size_t k = 0; k < fields.size(); ++k) {
    inputs.push_back(static_cast<char*>(p.buffers[k]) +
                     c.begin * fields[k].bytes());
  }
  void* targets = static_cast<char*>(p.batch.targets.data_ptr()) +
                  c.begin * dataset_.target_field().bytes();
  const int64_t* ids = p.batch.sample_ids.data() + c.begin;
  const size_t n = static_cast<size_t>(c.end - c.begin);
  absl::Status s =
      options_.epoch.has_value()
          ? dataset_.GatherForEpoch(*options_.epoch, ids, n, inputs, targets)
          : dataset_.GatherFields(ids, n, inputs, targets);
  if (!s.ok()) {
    return absl::Status(s.code(),
                        absl::StrCat("batch ", c.batch, ": ", s.message()));
  }
  return s;
}

void BatchLoader::Work() {
  mu_.Lock();
  while (std::optional<Chunk> c = Claim()) {
    // The batch's node is stable (std::map) and only this thread touches
    // this chunk's rows, so the gather runs unlocked.
    Pending& p = pending_.at(c->batch);
    mu_.Unlock();
    absl::Status s = Gather(*c, p);
    mu_.Lock();
    if (!s.ok()) {
      if (failed_batch_ < 0 || c->batch < failed_batch_) {
        failed_batch_ = c->batch;
        status_ = s;
      }
      break;
    }
    if (++p.chunks_done < p.chunks) continue;
    // The last chunk: the batch is whole; augment it unlocked.
    Batch batch = std::move(p.batch);
    pending_.erase(c->batch);
    if (options_.augment) {
      mu_.Unlock();
      options_.augment(batch);
      mu_.Lock();
    }
    ready_.emplace(c->batch, std::move(batch));
  }
  ++workers_done_;
  mu_.Unlock();
}

std::optional<Batch> BatchLoader::Next() {
  absl::MutexLock lock(&mu_);
  if (!CanConsume()) {
    const absl::Time start = options_.clock->Now();
    mu_.Await(absl::Condition(this, &BatchLoader::CanConsume));
    data_wait_ += options_.clock->Now() - start;
  }
  auto it = ready_.find(consumed_);
  if (it == ready_.end()) return std::nullopt;
  Batch batch = std::move(it->second);
  ready_.erase(it);
  ++consumed_;
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
