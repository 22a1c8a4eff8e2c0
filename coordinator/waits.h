#ifndef RINGLEADER_COORDINATOR_WAITS_H_
#define RINGLEADER_COORDINATOR_WAITS_H_

// What a call that waits (a join, a KV wait, an NCCL id, a barrier) is given
// and gives back. Such a call holds no thread: it takes a callback, which
// answers it once, and returns what withdraws it.

#include <algorithm>
#include <cstdint>
#include <functional>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace ringleader {

template <typename T>
using Reply = std::function<void(absl::StatusOr<T>)>;

// Withdraws a pending wait whose caller went away (its call was cancelled or
// passed its deadline): the wait is answered CANCELLED and its state freed,
// so the rank may arrive again. Null when nothing waits.
using Canceller = std::function<void()>;

// Answers a wait that never started: nothing to cancel.
template <typename Done>
Canceller Refuse(Done& done, absl::Status status) {
  done(std::move(status));
  return nullptr;
}

// How long waits last: one without a timeout gets `default_wait`, and none
// waits longer than `max_wait`.
struct WaitLimits {
  absl::Duration default_wait = absl::Minutes(5);
  absl::Duration max_wait = absl::Hours(1);

  // When a wait that asks for `timeout_ms` (0 or less: none) and starts at
  // `now` ends.
  absl::Time Deadline(absl::Time now, int64_t timeout_ms) const {
    const absl::Duration wait =
        timeout_ms > 0 ? absl::Milliseconds(timeout_ms) : default_wait;
    return now + std::min(wait, max_wait);
  }
};

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_WAITS_H_
