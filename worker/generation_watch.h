#ifndef RINGLEADER_WORKER_GENERATION_WATCH_H_
#define RINGLEADER_WORKER_GENERATION_WATCH_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/worker_credential.h"
#include "grpcpp/grpcpp.h"
#include "ringleader/v1/worker_service.grpc.pb.h"

namespace ringleader {

// Holds a WorkerService.WatchGeneration stream open, on its own thread,
// while the worker is in a generation, and hands the coordinator's event
// (the generation ended) to `on_ended` the moment it comes: the same hook a
// heartbeat's GenerationAbort goes to, so the survivors of a failure abort
// their communicators without waiting for their next heartbeat.
//
// The heartbeat stays the authority; the stream only makes the notice
// early, and degrades to nothing: a coordinator that answers UNIMPLEMENTED
// (older, or --push_generation_end=false) is not asked again; other
// failures (unreachable, lease lost, not formed yet) are retried with
// backoff, at most kMaxTries in a row per generation, a stream that stayed
// open for kLongLived not counting. Set and Stop cancel an open stream.
// Thread-safe.
class GenerationWatch {
 public:
  struct Options {
    // The channel and credential of each new stream (both may change: the
    // client replaces a channel that failed, and registers again after a
    // lost lease).
    std::function<std::shared_ptr<grpc::Channel>()> channel;
    std::function<WorkerCredential()> credential;
    std::function<void(const v1::GenerationAbort&)> on_ended;
    absl::Duration first_backoff = absl::Milliseconds(100);
    absl::Duration max_backoff = absl::Seconds(5);
  };
  static constexpr int kMaxTries = 5;
  static constexpr absl::Duration kLongLived = absl::Seconds(10);

  explicit GenerationWatch(Options options);
  ~GenerationWatch();  // Stops.

  // The generation the worker is in (0: none); a stream for another one is
  // cancelled.
  void Set(const std::string& job_id, int64_t generation);
  void Stop();

  // Streams opened so far (for tests).
  int64_t opened() const;
  // Whether the coordinator said it does not serve the call.
  bool unsupported() const;
  // Waits until no stream is open or due (the generation's event came, its
  // tries ran out, the call is unsupported, or there is no generation);
  // false after `timeout`. For tests.
  bool AwaitIdle(absl::Duration timeout) const;

 private:
  struct Target {
    std::string job_id;
    int64_t generation = 0;
    bool operator==(const Target& o) const {
      return generation == o.generation && job_id == o.job_id;
    }
  };
  enum class Outcome { kEnded, kCancelled, kUnsupported, kFailed };

  void Loop();
  // One stream for `target`, until its event, its failure or a cancel.
  Outcome WatchOnce(const Target& target, absl::Duration* lasted);
  // Waits `wait` unless stopped or retargeted first; false then.
  bool Backoff(const Target& target, absl::Duration wait);
  bool DueLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  mutable absl::Mutex mu_;
  Target target_ ABSL_GUARDED_BY(mu_);
  // The generation that needs no more streams (its event came, or its
  // tries ran out).
  Target done_ ABSL_GUARDED_BY(mu_);
  grpc::ClientContext* open_ ABSL_GUARDED_BY(mu_) = nullptr;
  // Between a failed stream and the next try.
  bool backing_off_ ABSL_GUARDED_BY(mu_) = false;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  bool unsupported_ ABSL_GUARDED_BY(mu_) = false;
  int64_t opened_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread thread_;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_GENERATION_WATCH_H_
