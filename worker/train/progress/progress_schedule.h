#ifndef RINGLEADER_WORKER_TRAIN_PROGRESS_PROGRESS_SCHEDULE_H_
#define RINGLEADER_WORKER_TRAIN_PROGRESS_PROGRESS_SCHEDULE_H_

#include <algorithm>
#include <cstdint>

#include "absl/time/time.h"

namespace ringleader {

// When a rank sends a progress report: at every `every_steps`-th optimizer
// step, but not sooner than `min_interval` after the previous report (or the
// start). A report costs about 100 us of CPU (a protobuf and a unary call on
// the reporter's thread): by steps alone that is over 1% of a sub-millisecond
// step; with the interval it is at most cost / min_interval of a core
// whatever the step time. Not thread-safe.
class ProgressSchedule {
 public:
  ProgressSchedule(int every_steps, absl::Duration min_interval,
                   absl::Time start)
      : every_(std::max(1, every_steps)),
        min_interval_(min_interval),
        last_(start) {}

  // Whether to report after optimizer step `step` at `now`; when it says
  // yes, the report counts as sent at `now`.
  bool Due(int64_t step, absl::Time now) {
    if (step % every_ != 0 || now - last_ < min_interval_) return false;
    last_ = now;
    return true;
  }

 private:
  const int every_;
  const absl::Duration min_interval_;
  absl::Time last_;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_TRAIN_PROGRESS_PROGRESS_SCHEDULE_H_
