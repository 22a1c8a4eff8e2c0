// Rendezvous (coordinator/rendezvous.h): its timers, the round's timeout
// and the last call, and what each does when it fires.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "coordinator/rendezvous.h"

namespace ringleader {

void Rendezvous::ArmRoundLocked(const std::string& job_id, JobState& job) {
  if (job.round_armed || job.live_valid ||
      job.config.timeout <= absl::ZeroDuration()) {
    return;
  }
  job.round_armed = true;
  job.round_timer =
      timers_->Schedule(clock_->Now() + job.config.timeout,
                        [this, job_id] { OnRoundTimeout(job_id); });
}

void Rendezvous::OnRoundTimeout(const std::string& job_id) {
  std::vector<Completion> out;
  {
    absl::MutexLock lock(&mu_);
    auto it = jobs_.find(job_id);
    if (it == jobs_.end() || !it->second.round_armed) return;
    JobState& job = it->second;
    job.round_armed = false;
    if (job.live_valid) return;
    const int32_t waiting = static_cast<int32_t>(job.waiters.size());
    if (waiting >= job.config.min_workers) {
      // Enough are here; whoever has not come back by now is not coming.
      FormLocked(job_id, job, out);
    } else {
      job.timed_out =
          absl::StrCat("rendezvous timed out after ",
                       absl::FormatDuration(job.config.timeout), ": ", waiting,
                       " of min ", job.config.min_workers, " workers joined");
      if (job.last_call_armed) {
        timers_->Cancel(job.last_call_timer);
        job.last_call_armed = false;
      }
      job.rejoining.clear();
      job.resized = false;
      job.reforming = false;
      std::vector<JoinCallback> failed;
      for (auto& [id, w] : job.waiters) {
        timers_->Cancel(w.timer);
        failed.push_back(std::move(w.done));
      }
      job.waiters.clear();
      // The hook first, so the job has failed before a waiter hears of it.
      out.push_back(
          [this, job_id, why = job.timed_out, failed = std::move(failed)] {
            if (on_timed_out_) on_timed_out_(job_id, why);
            for (const JoinCallback& cb : failed) {
              cb(absl::DeadlineExceededError(why));
            }
          });
    }
  }
  for (auto& fn : out) fn();
}

void Rendezvous::OnLastCall(const std::string& job_id) {
  std::vector<Completion> out;
  {
    absl::MutexLock lock(&mu_);
    auto it = jobs_.find(job_id);
    if (it == jobs_.end() || !it->second.last_call_armed) return;
    JobState& job = it->second;
    job.last_call_armed = false;
    if (!job.live_valid &&
        static_cast<int32_t>(job.waiters.size()) >= job.config.min_workers) {
      FormLocked(job_id, job, out);
    }
  }
  for (auto& fn : out) fn();
}

}  // namespace ringleader
