#ifndef RINGLEADER_WORKER_COMM_OP_QUEUE_H_
#define RINGLEADER_WORKER_COMM_OP_QUEUE_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "worker/comm/communicator.h"

namespace ringleader {

// The execution model the CPU communicators share: collectives run on
// background threads, from FIFO queues, while the issuing thread goes on.
// That is what lets the DDP Reducer overlap gradient all-reduce with
// backward.
//
// Lanes: with `lanes` = 1 (shared memory, and Gloo's default before
// DdpSpec.buckets_in_flight) every operation runs in issue order on one
// thread. With K lanes each lane has its own FIFO and thread (Gloo gives each
// its own connections), and operation number `seq` (0, 1, ... in issue
// order) runs on lane seq % K. Every rank issues the same operations in the
// same order, so every rank puts operation `seq` on the same lane, at the
// same position in that lane's FIFO: matching collectives meet on one lane
// and the lanes never wait for each other, so up to K operations are in flight
// at once. Operations on different lanes may complete out of issue order.
//
// After Abort() queued and later operations fail with ABORTED; the ones
// running are the backend's to stop (its Abort() wakes them). After the first
// failed operation (on any lane) the peers' state is unknown, so later ones
// fail fast with that first error, ones still running on other lanes that
// fail report it too, and `on_first_failure` runs once (on the failing lane's
// thread) so the backend can tell its peers at once rather than at their
// timeout, on every lane.
//
// Thread-safe. The destructor aborts and joins every lane; Work handles may
// outlive the queue.
class OpQueue {
 public:
  // Runs on lane `lane`'s thread with the operation's sequence number `seq`
  // (equal on every rank, and unique: a tag for the backend).
  using Body = std::function<absl::Status(int lane, uint32_t seq)>;

  // `lanes` below 1 means 1.
  explicit OpQueue(std::function<void()> on_first_failure = nullptr,
                   int lanes = 1);
  ~OpQueue();
  OpQueue(const OpQueue&) = delete;
  OpQueue& operator=(const OpQueue&) = delete;

  // The lane operation `seq` runs on.
  static int LaneOf(uint32_t seq, int lanes) {
    return static_cast<int>(seq % static_cast<uint32_t>(lanes));
  }

  int lanes() const { return lanes_; }
  // `on_done` (optional) runs once the operation finished, whatever its
  // outcome, before its Wait() returns: on its lane's thread, or on the
  // caller's or Abort()'s thread for an operation that never ran.
  std::unique_ptr<Work> Enqueue(Body body, std::function<void()> on_done);
  // True the first time: the caller then stops the running operations.
  bool Abort();
  bool aborted() const;

 private:
  struct Op;
  class OpWork;
  void Loop(int lane);
  // Why the next operation must not run (ABORTED, or the first failure), or
  // OK.
  absl::Status RefusalLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // `s` (failed) as the operation reports it; sets `first` when it is the
  // communicator's first failure.
  absl::Status RecordFailure(absl::Status s, bool* first);

  const std::function<void()> on_first_failure_;
  const int lanes_;
  mutable absl::Mutex mu_;
  // One FIFO per lane.
  std::vector<std::deque<std::shared_ptr<Op>>> queues_ ABSL_GUARDED_BY(mu_);
  uint32_t next_seq_ ABSL_GUARDED_BY(mu_) = 0;
  bool aborted_ ABSL_GUARDED_BY(mu_) = false;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status broken_ ABSL_GUARDED_BY(mu_);
  // One per lane; started once everything above is initialized.
  std::vector<std::thread> threads_;
};

// An operation decided without communicating (invalid, empty, aborted);
// `on_done` (optional) runs first, as for a queued one.
std::unique_ptr<Work> ReadyWork(absl::Status s,
                                std::function<void()> on_done = nullptr);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_COMM_OP_QUEUE_H_
