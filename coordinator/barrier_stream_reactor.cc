#include "coordinator/barrier_stream_reactor.h"

#include <deque>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/support/proto_buffer_reader.h"
#include "grpcpp/support/proto_buffer_writer.h"

namespace ringleader {
namespace {

using Reactor = grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>;

// What the reactor and the coordinator's callbacks share. The callbacks hold
// it by shared_ptr, so it outlives the reactor; once the call is done they
// find it closed and drop their outcome.
//
// At most one thread drives the stream's writes and its Finish at a time:
// whoever sets `driving` (under the lock) calls StartWrite or Finish after
// releasing it, and the write's completion passes the turn on. gRPC
// operations are thus never started under our lock (their reactions may run
// on any thread), and never after Finish.
class Outbox {
 public:
  explicit Outbox(Reactor* reactor) : reactor_(reactor) {}

  // An arrival went to the coordinator; its outcome will come through Post.
  void ArrivalStarted() {
    absl::MutexLock lock(&mu_);
    ++outstanding_;
  }

  // The outcome of one arrival (any thread, any time). Outcomes that queue
  // while a write is in flight leave together in the next message.
  void Post(v1::BarrierRelease release) {
    absl::ReleasableMutexLock lock(&mu_);
    if (closed_) return;
    --outstanding_;
    if (failed_) return;  // The call ends without it.
    queue_.push_back(std::move(release));
    Drive(lock);
  }

  // No more reads: the client half-closed, or went away, or sent bytes that
  // are no BarrierRequest (`status` not OK: the call ends with it).
  void ReadsDone(grpc::Status status) {
    absl::ReleasableMutexLock lock(&mu_);
    reads_done_ = true;
    if (!status.ok()) Fail(std::move(status));
    Drive(lock);
  }

  void WriteDone(bool ok) {
    absl::ReleasableMutexLock lock(&mu_);
    driving_ = false;
    if (!ok)
      Fail(grpc::Status(grpc::StatusCode::CANCELLED,
                        "the barrier stream broke"));
    Drive(lock);
  }

  // OnDone: the reactor is gone.
  void Close() {
    absl::MutexLock lock(&mu_);
    closed_ = true;
    queue_.clear();
  }

 private:
  void Fail(grpc::Status status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (failed_) return;
    failed_ = true;
    end_status_ = std::move(status);
    queue_.clear();  // Nobody is left to read them.
  }

  // Takes the turn if nobody has it and there is something to do: write the
  // next release, or finish the call. Releases `lock` either way.
  void Drive(absl::ReleasableMutexLock& lock)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (driving_ || finished_ || closed_) return lock.Release();
    if (!failed_ && !queue_.empty()) {
      driving_ = true;
      // Everything queued goes in one message, up to a size that any client
      // accepts (gRPC's default limit is 4 MiB).
      v1::BarrierReleases batch;
      size_t bytes = 0;
      while (!queue_.empty() && bytes < kMaxBatchBytes) {
        bytes += queue_.front().ByteSizeLong() + 8;
        *batch.add_releases() = std::move(queue_.front());
        queue_.pop_front();
      }
      lock.Release();
      // Serialized off the lock; only the driver touches writing_.
      bool own_buffer = false;
      writing_.Clear();  // The previous write's bytes are done with.
      if (!grpc::SerializationTraits<v1::BarrierReleases>::Serialize(
               batch, &writing_, &own_buffer)
               .ok()) {
        absl::ReleasableMutexLock relock(&mu_);
        driving_ = false;
        Fail(grpc::Status(grpc::StatusCode::INTERNAL,
                          "cannot serialize barrier releases"));
        Drive(relock);
        return;
      }
      reactor_->StartWrite(&writing_);
      return;
    }
    const bool drained = queue_.empty() && outstanding_ == 0;
    if (failed_ || (reads_done_ && drained)) {
      finished_ = true;
      driving_ = true;  // For good: nothing is started after Finish.
      grpc::Status status = end_status_;
      lock.Release();
      reactor_->Finish(status);
      return;
    }
    lock.Release();
  }

  static constexpr size_t kMaxBatchBytes = 1 << 20;

  Reactor* const reactor_;
  absl::Mutex mu_;
  std::deque<v1::BarrierRelease> queue_ ABSL_GUARDED_BY(mu_);
  grpc::ByteBuffer writing_;
  int64_t outstanding_ ABSL_GUARDED_BY(mu_) = 0;
  bool driving_ ABSL_GUARDED_BY(mu_) = false;
  bool reads_done_ ABSL_GUARDED_BY(mu_) = false;
  bool failed_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  grpc::Status end_status_ ABSL_GUARDED_BY(mu_);
};

class BarrierStreamReactor final : public Reactor {
 public:
  BarrierStreamReactor(grpc::CallbackServerContext* ctx,
                       Coordinator* coordinator)
      : ctx_(ctx),
        coordinator_(coordinator),
        outbox_(std::make_shared<Outbox>(this)) {
    StartRead(&bytes_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {
      outbox_->ReadsDone(ctx_->IsCancelled() ? grpc::Status::CANCELLED
                                             : grpc::Status::OK);
      return;
    }
    v1::BarrierArrivals arrivals;
    if (!grpc::SerializationTraits<v1::BarrierArrivals>::Deserialize(&bytes_,
                                                                     &arrivals)
             .ok()) {
      // Nothing more is read from a stream that went wrong; what its good
      // arrivals are owed is dropped with it.
      outbox_->ReadsDone(grpc::Status(
          grpc::StatusCode::INVALID_ARGUMENT,
          "/ringleader.v1.WorkerService/BarrierStream: a message does not "
          "parse as BarrierArrivals (corrupt bytes, or a string field that "
          "is not UTF-8)"));
      return;
    }
    for (const v1::BarrierRequest& request : arrivals.arrivals()) {
      outbox_->ArrivalStarted();
      // The callback may run inline (a bad arrival, or the arrival that
      // completes a round) or on the thread of another stream's arrival that
      // completes the round, or a timer's.
      coordinator_->Barrier(
          request, [outbox = outbox_, job_id = request.job_id(),
                    generation = request.generation(), rank = request.rank(),
                    name = request.name()](absl::Status s) {
            v1::BarrierRelease release;
            release.set_job_id(job_id);
            release.set_generation(generation);
            release.set_rank(rank);
            release.set_name(name);
            release.set_code(static_cast<int32_t>(s.code()));
            release.set_message(std::string(s.message()));
            outbox->Post(std::move(release));
          });
    }
    StartRead(&bytes_);
  }

  void OnWriteDone(bool ok) override { outbox_->WriteDone(ok); }

  void OnDone() override {
    outbox_->Close();
    delete this;
  }

 private:
  grpc::CallbackServerContext* const ctx_;
  Coordinator* const coordinator_;
  const std::shared_ptr<Outbox> outbox_;
  grpc::ByteBuffer bytes_;  // The message being read.
};

}  // namespace

Reactor* NewBarrierStreamReactor(grpc::CallbackServerContext* ctx,
                                 Coordinator* coordinator) {
  return new BarrierStreamReactor(ctx, coordinator);
}

}  // namespace ringleader
