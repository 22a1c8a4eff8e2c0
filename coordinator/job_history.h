#ifndef RINGLEADER_COORDINATOR_JOB_HISTORY_H_
#define RINGLEADER_COORDINATOR_JOB_HISTORY_H_

// Each job's training curves over optimizer steps (history.proto's
// HistorySeries): one point per training report of rank 0, with the job's
// loss, learning rate, gradient norm, samples/s and each rank's step time
// and data-wait share then (ProgressAggregator::Point builds it where the
// reports are combined). What GetJobHistory, `ringctl get --history` and
// the dashboard read.
//
// Bounded: at most `max_points` per job. When a point would pass it, every
// other kept point goes and the stride (reports per kept point) doubles,
// so the series keeps the job's whole shape, evenly spaced, with its first
// point and always its latest. A point at a step the series already passed
// (the job went back to a checkpoint after a failure) replaces the points
// from that step on, as TensorBoard's purge of orphaned data does: the
// curve is the run that goes on.
//
// Durable without touching the report path: Record only appends in memory
// and marks the job; Flush writes the marked jobs' series to the
// StateStore (every kFlushInterval from the timer queue, at a job's end,
// and at Stop), so a coordinator killed -9 loses at most the last
// interval's points. Thread-safe; never calls another manager.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/timer_queue.h"
#include "coordinator/state_store.h"
#include "ringleader/v1/history.pb.h"

namespace ringleader {

// The most points per job unless --history_points says otherwise: a long
// job's curve at 1000 points is finer than a chart's width.
inline constexpr int64_t kDefaultHistoryPoints = 1000;
// The fewest --history_points accepts: thinning keeps every other point,
// so it needs a few.
inline constexpr int64_t kMinHistoryPoints = 4;

// Appends `point` to `series` under the rules above (exposed for tests).
void AddHistoryPoint(v1::HistorySeries& series, v1::HistoryPoint point,
                     int64_t max_points);

class JobHistory {
 public:
  static constexpr absl::Duration kFlushInterval = absl::Seconds(5);

  // `max_points` at least kMinHistoryPoints (smaller is raised to it).
  JobHistory(StateStore* store, const Clock* clock, TimerQueue* timers,
             int64_t max_points = kDefaultHistoryPoints);

  // Takes the stored series back (after a restart).
  absl::Status Load();
  // Flushes every kFlushInterval on the timer queue until Stop, which
  // flushes once more.
  void Start();
  void Stop();

  void Record(const std::string& job_id, v1::HistoryPoint point);
  // The job's series (empty, stride 1, when it has none).
  v1::HistorySeries Get(const std::string& job_id) const;
  // Forgets a deleted job (its stored row went with the job).
  void Forget(const std::string& job_id);
  // Writes the series changed since their last write (only `job_id`'s when
  // it is not empty); the first store error, the others still tried.
  absl::Status Flush(const std::string& job_id = "");

  int64_t max_points() const { return max_points_; }

 private:
  void ScheduleNext() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  StateStore* const store_;
  const Clock* const clock_;
  TimerQueue* const timers_;
  const int64_t max_points_;

  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, v1::HistorySeries> series_
      ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<std::string> dirty_ ABSL_GUARDED_BY(mu_);
  bool running_ ABSL_GUARDED_BY(mu_) = false;
  TimerQueue::TimerId timer_ ABSL_GUARDED_BY(mu_) = 0;
  // Serializes the writes: a slow Flush and a job's own cannot interleave
  // an older copy of a series after a newer one.
  absl::Mutex flush_mu_ ABSL_ACQUIRED_BEFORE(mu_);
};

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_JOB_HISTORY_H_
