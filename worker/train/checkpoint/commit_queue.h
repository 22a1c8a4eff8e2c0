#ifndef RINGLEADER_WORKER_TRAIN_CHECKPOINT_COMMIT_QUEUE_H_
#define RINGLEADER_WORKER_TRAIN_CHECKPOINT_COMMIT_QUEUE_H_

// Rank 0's checkpoint commits, delivered to the coordinator in order from a
// thread of their own, so that training does not stop while the coordinator
// is unreachable: the send (CoordinatorClient::CommitCheckpoint) retries
// through an outage, and the coordinator answers a commit sent again after
// its answer was lost as it answered the first. An answer that ends
// training - a refusal after the retries (the generation ended, the job is
// over, the coordinator stayed away past the client's unreachable_timeout)
// or a commit at which the coordinator ended the generation for a scale-up -
// is the queue's verdict: the trainer reads it at its next step boundary,
// and the commits queued after it are not sent.

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/sender_loop.h"
#include "ringleader/v1/worker_service.pb.h"

namespace ringleader {

// Thread-safe.
class CommitQueue {
 public:
  using Answer = absl::StatusOr<v1::CommitCheckpointResponse>;
  // Sends one commit, retrying as long as it is worth it; `cancel` is set
  // when the queue goes away (the send should give up after its try).
  using Send = std::function<Answer(const v1::CommitCheckpointRequest&,
                                    const std::atomic<bool>* cancel)>;
  // Runs on the queue's thread after each commit the coordinator accepted,
  // in order (rank 0 prunes older checkpoint files there).
  using Committed = std::function<void(const v1::CommitCheckpointRequest&,
                                       const v1::CommitCheckpointResponse&)>;

  CommitQueue(Send send, Committed on_committed);
  // Gives up the commits not delivered yet (this rank's generation is over)
  // and waits for the send in flight to return.
  ~CommitQueue();

  // Queues `commit`. When nothing is queued ahead of it, waits up to `wait`
  // for its answer and returns it if it came (a commit queued behind others
  // cannot be answered before them: the first commit of an outage waits,
  // the later ones do not). nullopt when it was not answered in time.
  std::optional<Answer> Push(v1::CommitCheckpointRequest commit,
                             absl::Duration wait);
  // OK while every answer let training go on; else the first that did not:
  // a refusal as the send returned it, or ABORTED for a commit at which the
  // coordinator ended the generation.
  absl::Status Verdict() const;
  // Waits up to `timeout` until every queued commit was answered, then
  // returns Verdict(); DEADLINE_EXCEEDED naming what is left otherwise.
  absl::Status Drain(absl::Duration timeout);
  // Commits queued and not answered yet.
  int64_t pending() const;

 private:
  using Loop = SenderLoop<v1::CommitCheckpointRequest, Answer>;
  // In order; the first answer that ends training stops the queue.
  static Loop::Rules UntilTheVerdict();

  Loop loop_;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_TRAIN_CHECKPOINT_COMMIT_QUEUE_H_
