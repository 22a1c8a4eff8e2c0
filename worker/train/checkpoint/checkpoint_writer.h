#ifndef RINGLEADER_WORKER_TRAIN_CHECKPOINT_CHECKPOINT_WRITER_H_
#define RINGLEADER_WORKER_TRAIN_CHECKPOINT_CHECKPOINT_WRITER_H_

// Rank 0's checkpoint writes, on a thread of their own (CheckFreq's split):
// the training thread hands over a snapshot of the state and trains on
// while the file is serialized, written, fsync'ed and renamed. One write at
// a time, in the order submitted; what follows a write (queueing its commit)
// runs on the writer's thread only once the write succeeded, so a commit
// never names a file that is not wholly on disk. The first failed write is
// the writer's error: nothing is written after it.

#include <functional>
#include <optional>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace ringleader {

// Thread-safe.
class CheckpointWriter {
 public:
  using Write = std::function<absl::Status()>;
  using Then = std::function<void()>;

  CheckpointWriter();
  // Waits for the write in flight to end (and what follows it).
  ~CheckpointWriter();

  // Waits until no write is in flight, then hands `write` to the thread and
  // returns; `then` runs there after `write` succeeded. Returns the
  // writer's error instead when an earlier write failed (`write` is not
  // run).
  absl::Status Submit(Write write, Then then);
  // Waits up to `timeout` until no write is in flight; the writer's error,
  // or DEADLINE_EXCEEDED.
  absl::Status WaitIdle(absl::Duration timeout);
  // The first failed write's error; OK while every write succeeded.
  absl::Status status() const;

 private:
  struct Job {
    Write write;
    Then then;
  };
  void Loop();

  mutable absl::Mutex mu_;
  // The write handed over and not finished (at most one).
  std::optional<Job> job_ ABSL_GUARDED_BY(mu_);
  absl::Status error_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_TRAIN_CHECKPOINT_CHECKPOINT_WRITER_H_
