#ifndef RINGLEADER_COMMON_SENDER_LOOP_H_
#define RINGLEADER_COMMON_SENDER_LOOP_H_

// A background sender: an ordered queue drained by one thread of its own, so
// that whoever submits (the training thread) never waits on the network or
// the disk. Each item is handed to `send`, one at a time in submission order.
// The user's rules say which items a newer one may replace while they wait
// (latest wins), whether the first failure stops the queue, and how many
// items may be outstanding. Callers wait with a timeout for one item's
// outcome (SubmitAndWait) or for everything submitted (Flush). Destroying
// the loop cancels: the send in flight is told to give up (the `cancel`
// flag) and what is still queued is dropped, unless the rules ask for it to
// be sent first.
//
// Users: the progress reporter (latest wins, evaluations kept), rank 0's
// commit queue (in order, stops at the first refusal) and the checkpoint
// writer (one write at a time, stops at the first failure, finishes the
// write handed over).
//
// Thread-safe. `send` and `error_of` run on the loop's thread, `replaces`
// on the submitter's under the loop's lock: neither may call the loop.

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace ringleader {

template <typename Item, typename Outcome = absl::Status>
class SenderLoop {
 public:
  // Sends one item; `cancel` is set when the loop goes away (a send that
  // retries gives up after its current try).
  using Send =
      std::function<Outcome(const Item& item, const std::atomic<bool>* cancel)>;

  struct Rules {
    // Whether `incoming` takes the place of `queued`, the newest item still
    // waiting (never the one being sent); the replaced item counts as done
    // and who waits for it gets the outcome of the one that replaced it.
    // Null: nothing is replaced.
    std::function<bool(const Item& queued, const Item& incoming)> replaces;
    // The error an outcome stands for (OK: a success). Null: the outcome's
    // own status (an absl::Status, or an absl::StatusOr's).
    std::function<absl::Status(const Item& item, const Outcome& outcome)>
        error_of;
    // After the first error nothing more is sent: the items queued behind
    // it are answered with it, unsent, and submitting refuses with it.
    bool stop_at_error = false;
    // > 0: submitting waits while this many items are queued or in flight.
    int64_t max_outstanding = 0;
    // At destruction, send what is queued first instead of dropping it
    // (the send in flight then is not cancelled).
    bool send_queued_at_exit = false;
  };

  // Whom SubmitAndWait waits for.
  enum class WaitIf {
    kAlways,
    // Only when nothing is queued or in flight ahead of the item: an item
    // behind others cannot be answered before them.
    kFirstInLine,
  };

  explicit SenderLoop(Send send, Rules rules = Rules())
      : send_(std::move(send)),
        rules_(std::move(rules)),
        thread_([this] { Loop(); }) {}

  ~SenderLoop() {
    if (!rules_.send_queued_at_exit) cancel_ = true;
    {
      absl::MutexLock lock(&mu_);
      stop_ = true;
    }
    thread_.join();
  }

  SenderLoop(const SenderLoop&) = delete;
  SenderLoop& operator=(const SenderLoop&) = delete;

  // Queues `item` and returns (after waiting for room, with
  // max_outstanding). Refused with the first error under stop_at_error.
  absl::Status Submit(Item item) {
    absl::MutexLock lock(&mu_);
    WaitForRoom();
    if (Refusing()) return first_error_;
    Enqueue(std::move(item));
    return absl::OkStatus();
  }

  // Queues `item` and waits up to `timeout` for its outcome: nullopt when
  // it was not sent in time (it stays queued), when `when` says not to wait,
  // or when the loop is going away. Under stop_at_error, after the first
  // error, the item is not queued and the outcome (if waited for) is it.
  std::optional<Outcome> SubmitAndWait(Item item, absl::Duration timeout,
                                       WaitIf when = WaitIf::kAlways) {
    absl::MutexLock lock(&mu_);
    WaitForRoom();
    const bool waits = timeout > absl::ZeroDuration() &&
                       (when == WaitIf::kAlways || outstanding_ == 0);
    if (Refusing()) {
      return waits ? std::optional<Outcome>(Outcome(first_error_))
                   : std::nullopt;
    }
    const int64_t ticket = Enqueue(std::move(item));
    if (!waits) return std::nullopt;
    Waiter waiter{ticket, std::nullopt};
    waiters_.push_back(&waiter);
    auto answered = [this, &waiter]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return waiter.outcome.has_value() || stop_;
    };
    mu_.AwaitWithTimeout(absl::Condition(&answered), timeout);
    waiters_.erase(std::find(waiters_.begin(), waiters_.end(), &waiter));
    return std::move(waiter.outcome);
  }

  // Waits up to `timeout` until every item submitted before the call is
  // done (sent, replaced, or answered with the first error): false if not.
  // When done and `recent_error` is set, it receives the first error since
  // the last Flush that asked for it, which is then forgotten.
  bool Flush(absl::Duration timeout, absl::Status* recent_error = nullptr) {
    absl::MutexLock lock(&mu_);
    const int64_t through = submitted_;
    auto done = [this, through]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return done_through_ >= through || stop_;
    };
    mu_.AwaitWithTimeout(absl::Condition(&done), timeout);
    if (done_through_ < through) return false;
    if (recent_error != nullptr)
      *recent_error = std::exchange(recent_error_, {});
    return true;
  }

  // The first error of all; OK while every outcome was a success.
  absl::Status first_error() const {
    absl::MutexLock lock(&mu_);
    return first_error_;
  }
  // Items queued or in flight.
  int64_t outstanding() const {
    absl::MutexLock lock(&mu_);
    return outstanding_;
  }
  // Items handed to `send` (whatever the outcome).
  int64_t sent() const {
    absl::MutexLock lock(&mu_);
    return sent_;
  }

 private:
  struct Queued {
    Item item;
    int64_t ticket = 0;
  };
  struct Waiter {
    int64_t ticket = 0;
    std::optional<Outcome> outcome;
  };

  static absl::Status StatusOf(const absl::Status& s) { return s; }
  template <typename T>
  static absl::Status StatusOf(const absl::StatusOr<T>& s) {
    return s.status();
  }

  bool Refusing() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return rules_.stop_at_error && !first_error_.ok();
  }

  void WaitForRoom() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (rules_.max_outstanding <= 0) return;
    auto room = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return outstanding_ < rules_.max_outstanding;
    };
    mu_.Await(absl::Condition(&room));
  }

  // Queues `item` (or lets it replace the newest waiting one); its ticket.
  int64_t Enqueue(Item item) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const int64_t ticket = ++submitted_;
    if (rules_.replaces && !queue_.empty() &&
        rules_.replaces(queue_.back().item, item)) {
      for (Waiter* w : waiters_) {
        if (w->ticket == queue_.back().ticket) w->ticket = ticket;
      }
      queue_.back() = Queued{std::move(item), ticket};
      return ticket;
    }
    queue_.push_back(Queued{std::move(item), ticket});
    ++outstanding_;
    return ticket;
  }

  void Loop() {
    absl::MutexLock lock(&mu_);
    while (true) {
      auto work = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return !queue_.empty() || stop_;
      };
      mu_.Await(absl::Condition(&work));
      if (queue_.empty() || (stop_ && !rules_.send_queued_at_exit)) return;
      Queued next = std::move(queue_.front());
      queue_.pop_front();
      if (Refusing()) {
        Done(next.ticket, Outcome(first_error_));
        continue;
      }
      mu_.Unlock();
      Outcome outcome = send_(next.item, &cancel_);
      absl::Status error = rules_.error_of ? rules_.error_of(next.item, outcome)
                                           : StatusOf(outcome);
      mu_.Lock();
      ++sent_;
      if (!error.ok() && first_error_.ok()) first_error_ = error;
      if (!error.ok() && recent_error_.ok()) recent_error_ = std::move(error);
      Done(next.ticket, std::move(outcome));
    }
  }

  // Item `ticket` is done with `outcome`: every earlier one is too.
  void Done(int64_t ticket, Outcome outcome)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    done_through_ = ticket;
    --outstanding_;
    for (Waiter* w : waiters_) {
      if (w->ticket == ticket) w->outcome = outcome;
    }
  }

  const Send send_;
  const Rules rules_;
  std::atomic<bool> cancel_{false};
  mutable absl::Mutex mu_;
  std::deque<Queued> queue_ ABSL_GUARDED_BY(mu_);
  // Tickets 1..submitted_ were given out; 1..done_through_ are done.
  int64_t submitted_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t done_through_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t outstanding_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t sent_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Status first_error_ ABSL_GUARDED_BY(mu_);
  absl::Status recent_error_ ABSL_GUARDED_BY(mu_);
  // SubmitAndWait's callers, each waiting for one ticket's outcome.
  std::vector<Waiter*> waiters_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace ringleader

#endif  // RINGLEADER_COMMON_SENDER_LOOP_H_
