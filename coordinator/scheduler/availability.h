#ifndef RINGLEADER_COORDINATOR_SCHEDULER_AVAILABILITY_H_
#define RINGLEADER_COORDINATOR_SCHEDULER_AVAILABILITY_H_

#include <cstdint>
#include <map>

#include "absl/time/time.h"

namespace ringleader::scheduler {

// Free workers over time as a plan is made: those free now, those running
// jobs release at their expected ends, less those taken (held with no
// known end) and those reserved for waiting jobs from the time they fit.
// A job that starts ahead of a waiting one (backfill) may take only what
// leaves every reservation whole at every time: Headroom().
class Availability {
 public:
  explicit Availability(int32_t free_now, absl::Time now);

  // `workers` come free at `end` (negative: fewer than planned); an
  // infinite end is never counted, an end already past counts as just
  // after now (the job runs late: not free now, but soon).
  void Release(int32_t workers, absl::Time end);
  // `workers` come free now (a shrink or preemption in this plan).
  void FreeNow(int32_t workers);
  // Taken now and held with no known end.
  void Take(int32_t workers);
  // Held from `from` on by a waiting job: its reservation.
  void Reserve(int32_t workers, absl::Time from);

  int32_t Now() const;
  // The least free at any time from now on: what can be taken now and
  // held without breaking a reservation.
  int32_t Headroom() const;
  // The first time from which `workers` stay free, InfiniteFuture if none
  // (the known ends never free that many).
  absl::Time EarliestFit(int32_t workers) const;

 private:
  absl::Time now_;
  std::map<absl::Time, int64_t> deltas_;  // The change in free workers.
};

}  // namespace ringleader::scheduler

#endif  // RINGLEADER_COORDINATOR_SCHEDULER_AVAILABILITY_H_
