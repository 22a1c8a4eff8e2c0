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

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "common/sender_loop.h"

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
  // One at a time, to the end, stopping at the first failure.
  static SenderLoop<Job>::Rules OneAtATime();

  SenderLoop<Job> loop_;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_TRAIN_CHECKPOINT_CHECKPOINT_WRITER_H_
