#ifndef RINGLEADER_WORKER_COMM_OP_QUEUE_H_
#define RINGLEADER_WORKER_COMM_OP_QUEUE_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "worker/comm/communicator.h"

namespace ringleader {

// The execution model the CPU communicators share: collectives run on one
// background thread, from a FIFO queue, so they execute in issue order (the
// order every rank must use) while the issuing thread goes on. That is what
// lets the DDP Reducer overlap gradient all-reduce with backward.
//
// After Abort() queued and later operations fail with ABORTED; the one
// running is the backend's to stop (its Abort() wakes it). After the first
// failed operation the peers' state is unknown, so later ones fail fast with
// that first error, and `on_first_failure` runs once (on the queue's thread)
// so the backend can tell its peers at once rather than at their timeout.
//
// Thread-safe. The destructor aborts and joins the thread; Work handles may
// outlive the queue.
class OpQueue {
 public:
  // Runs on the queue's thread with the operation's sequence number (0, 1,
  // ...: equal on every rank, since every rank issues the same operations).
  using Body = std::function<absl::Status(uint32_t seq)>;

  explicit OpQueue(std::function<void()> on_first_failure = nullptr);
  ~OpQueue();
  OpQueue(const OpQueue&) = delete;
  OpQueue& operator=(const OpQueue&) = delete;

  // `on_done` (optional) runs once the operation finished, whatever its
  // outcome, before its Wait() returns: on the queue's thread, or on the
  // caller's or Abort()'s thread for an operation that never ran.
  std::unique_ptr<Work> Enqueue(Body body, std::function<void()> on_done);
  // True the first time: the caller then stops the running operation.
  bool Abort();
  bool aborted() const;

 private:
  struct Op;
  class OpWork;
  void Loop();

  const std::function<void()> on_first_failure_;
  mutable absl::Mutex mu_;
  std::deque<std::shared_ptr<Op>> queue_ ABSL_GUARDED_BY(mu_);
  bool aborted_ ABSL_GUARDED_BY(mu_) = false;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status broken_ ABSL_GUARDED_BY(mu_);
  // Last member: starts once everything above is initialized.
  std::thread thread_;
};

// An operation decided without communicating (invalid, empty, aborted);
// `on_done` (optional) runs first, as for a queued one.
std::unique_ptr<Work> ReadyWork(absl::Status s,
                                std::function<void()> on_done = nullptr);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_COMM_OP_QUEUE_H_
