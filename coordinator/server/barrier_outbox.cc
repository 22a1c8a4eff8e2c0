#include "coordinator/server/barrier_outbox.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "grpcpp/impl/codegen/proto_utils.h"

namespace ringleader {
namespace {

// Per release in a batch: its field tag and length prefix (at most 1 + 3
// bytes below 2 MiB), rounded up.
constexpr size_t kFramingBytes = 8;

}  // namespace

BarrierOutbox::BarrierOutbox(Stream* stream, Limits limits)
    : stream_(stream),
      limits_(limits),
      batch_bytes_(std::min<size_t>(size_t{1} << 20,
                                    limits.max_message_bytes * 3 / 4)) {}

bool BarrierOutbox::ArrivalStarted() {
  Step step;
  {
    absl::MutexLock lock(&mu_);
    if (failed_ || finished_ || closed_) return false;
    if (outstanding_ < limits_.max_outstanding) {
      ++outstanding_;
      return true;
    }
    Fail(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                      absl::StrCat("a BarrierStream may have at most ",
                                   limits_.max_outstanding,
                                   " arrivals waiting for their release")));
    step = NextStepLocked();
  }
  Perform(std::move(step));
  return false;
}

void BarrierOutbox::Post(v1::BarrierRelease release) {
  Step step;
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return;
    --outstanding_;
    if (failed_) return;  // The call ends without it.
    queue_.push_back(std::move(release));
    step = NextStepLocked();
  }
  Perform(std::move(step));
}

void BarrierOutbox::ReadsDone(grpc::Status status) {
  Step step;
  {
    absl::MutexLock lock(&mu_);
    reads_done_ = true;
    if (!status.ok()) Fail(std::move(status));
    step = NextStepLocked();
  }
  Perform(std::move(step));
}

void BarrierOutbox::WriteDone(bool ok) {
  Step step;
  {
    absl::MutexLock lock(&mu_);
    driving_ = false;
    if (!ok) {
      Fail(grpc::Status(grpc::StatusCode::CANCELLED,
                        "the barrier stream broke"));
    }
    step = NextStepLocked();
  }
  Perform(std::move(step));
}

void BarrierOutbox::Close() {
  absl::MutexLock lock(&mu_);
  closed_ = true;
  queue_.clear();
}

void BarrierOutbox::Fail(grpc::Status status) {
  if (failed_) return;
  failed_ = true;
  end_status_ = std::move(status);
  queue_.clear();  // Nobody is left to read them.
}

BarrierOutbox::Step BarrierOutbox::NextStepLocked() {
  Step step;
  if (driving_ || finished_ || closed_) return step;
  if (!failed_ && !queue_.empty()) {
    driving_ = true;
    // What is queued, up to the batch size (at least one release: one
    // fits, since a release's strings are bounded by the reactor).
    step.kind = Step::kWrite;
    size_t bytes = 0;
    while (!queue_.empty()) {
      const size_t next = queue_.front().ByteSizeLong() + kFramingBytes;
      if (step.batch.releases_size() > 0 && bytes + next > batch_bytes_) break;
      bytes += next;
      *step.batch.add_releases() = std::move(queue_.front());
      queue_.pop_front();
    }
    return step;
  }
  const bool drained = queue_.empty() && outstanding_ == 0;
  if (failed_ || (reads_done_ && drained)) {
    finished_ = true;
    driving_ = true;  // For good: nothing is started after Finish.
    step.kind = Step::kFinish;
    step.status = end_status_;
  }
  return step;
}

void BarrierOutbox::Perform(Step step) {
  if (step.kind == Step::kWrite) {
    // Serialized off the lock. Only the turn's holder touches writing_.
    bool own_buffer = false;
    writing_.Clear();  // The previous write's bytes are done with.
    if (grpc::SerializationTraits<v1::BarrierReleases>::Serialize(
            step.batch, &writing_, &own_buffer)
            .ok()) {
      stream_->StartWrite(&writing_);
      return;
    }
    {
      absl::MutexLock lock(&mu_);
      driving_ = false;
      Fail(grpc::Status(grpc::StatusCode::INTERNAL,
                        "cannot serialize barrier releases"));
      step = NextStepLocked();
    }
    // Failed, so the next step is to finish (or nothing, if closed).
  }
  if (step.kind == Step::kFinish) stream_->Finish(std::move(step.status));
}

}  // namespace ringleader
