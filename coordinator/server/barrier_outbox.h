#ifndef RINGLEADER_COORDINATOR_SERVER_BARRIER_OUTBOX_H_
#define RINGLEADER_COORDINATOR_SERVER_BARRIER_OUTBOX_H_

#include <cstddef>
#include <cstdint>
#include <deque>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/grpcpp.h"
#include "ringleader/v1/worker_service.pb.h"

namespace ringleader {

// The write side of one BarrierStream call: the releases of its arrivals,
// coalesced, and the call's end. Shared by the call's reactor and the
// coordinator's callbacks (which hold it by shared_ptr, so it outlives the
// reactor: once the call is done they find it closed and drop their outcome).
//
// Releases that are posted while a write is in flight leave together in the
// next BarrierReleases, up to the call's message size: a round whose ranks
// share the stream costs one or two writes, not one per rank.
//
// At most one thread drives the stream's writes and its Finish at a time:
// whoever takes the turn (under the lock) calls StartWrite or Finish after
// releasing it, and the write's completion passes the turn on. gRPC
// operations are thus never started under the lock (their reactions may run
// on any thread), never while a write is in flight, and never after Finish.
class BarrierOutbox {
 public:
  // What the outbox drives: the call's reactor (a fake in tests).
  class Stream {
   public:
    virtual ~Stream() = default;
    virtual void StartWrite(const grpc::ByteBuffer* bytes) = 0;
    virtual void Finish(grpc::Status status) = 0;
  };

  struct Limits {
    // The largest message the call may send (the server's send limit).
    size_t max_message_bytes = 4 << 20;
    // Arrivals of the stream waiting for their outcome at once; one more
    // ends the call with RESOURCE_EXHAUSTED (a client that keeps arriving at
    // new barriers and never reads would otherwise grow without bound).
    int64_t max_outstanding = 1 << 16;
  };

  BarrierOutbox(Stream* stream, Limits limits);

  // An arrival is about to go to the coordinator; its outcome will come
  // through Post. False when the call is ending (the arrival must not be
  // made), or when it would exceed max_outstanding (the call then ends).
  bool ArrivalStarted();

  // The outcome of one arrival (any thread, any time).
  void Post(v1::BarrierRelease release);

  // No more reads: the client half-closed, or went away, or sent a bad
  // message (`status` not OK: the call ends with it). The call ends OK once
  // every arrival was answered.
  void ReadsDone(grpc::Status status);

  // The stream's write completed (ok) or failed (the call ends).
  void WriteDone(bool ok);

  // The reactor is gone (OnDone): nothing more is written or finished.
  void Close();

 private:
  // What the turn's holder does once it has released the lock.
  struct Step {
    enum Kind { kNothing, kWrite, kFinish } kind = kNothing;
    v1::BarrierReleases batch;  // kWrite
    grpc::Status status;        // kFinish
  };

  void Fail(grpc::Status status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Takes the turn if nobody has it and there is something to do: write
  // what is queued, or finish the call.
  Step NextStepLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Does `step` off the lock (a batch that cannot be serialized fails the
  // call, which then finishes).
  void Perform(Step step) ABSL_LOCKS_EXCLUDED(mu_);

  Stream* const stream_;
  const Limits limits_;
  const size_t batch_bytes_;  // Below the message limit, with headroom.
  absl::Mutex mu_;
  std::deque<v1::BarrierRelease> queue_ ABSL_GUARDED_BY(mu_);
  grpc::ByteBuffer writing_;  // Only the turn's holder touches it.
  int64_t outstanding_ ABSL_GUARDED_BY(mu_) = 0;
  bool driving_ ABSL_GUARDED_BY(mu_) = false;
  bool reads_done_ ABSL_GUARDED_BY(mu_) = false;
  bool failed_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  grpc::Status end_status_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_SERVER_BARRIER_OUTBOX_H_
