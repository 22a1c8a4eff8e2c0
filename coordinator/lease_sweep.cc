#include "coordinator/lease_sweep.h"

#include <vector>

#include "absl/strings/str_cat.h"

namespace ringleader {

void LeaseSweep::Start() {
  {
    absl::MutexLock lock(&mu_);
    running_ = true;
  }
  ScheduleNext();
}

void LeaseSweep::Stop() {
  absl::MutexLock lock(&mu_);
  running_ = false;
  timers_->Cancel(timer_);
}

void LeaseSweep::ScheduleNext() {
  absl::MutexLock lock(&mu_);
  if (!running_) return;
  timer_ = timers_->Schedule(clock_->Now() + interval_, [this] {
    Sweep();
    ScheduleNext();
  });
}

void LeaseSweep::Sweep() {
  const absl::Time now = clock_->Now();
  std::vector<v1::WorkerInfo> gone =
      workers_.ExpireLeases([&](const v1::WorkerInfo& w, bool replaced) {
        return liveness_.Judge(w.worker_id(), now, replaced) ==
               MemberLiveness::Verdict::kKeep;
      });
  for (const v1::WorkerInfo& dead : gone) {
    gone_(dead, absl::StrCat("worker ", dead.worker_id(), " on ",
                             dead.hostname(), " missed its lease"));
  }
}

}  // namespace ringleader
