// Rendezvous (coordinator/rendezvous.h): holding a generation while it is
// preempted, and ending it as its preemption decides.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "coordinator/rendezvous.h"

namespace ringleader {

bool Rendezvous::Hold(const std::string& job_id, int64_t generation) {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return false;
  JobState& job = it->second;
  // A generation that trained to its last step only evaluates and reports:
  // its members finish rather than stop.
  if (!job.live_valid || job.live.number != generation ||
      job.stage != Stage::kTraining) {
    return false;
  }
  job.held = true;
  return true;
}

bool Rendezvous::IsHeld(const std::string& job_id) const {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(job_id);
  return it != jobs_.end() && it->second.live_valid && it->second.held;
}

bool Rendezvous::EndHeld(const std::string& job_id, int64_t generation,
                         const std::string& reason, bool whole,
                         const std::vector<std::string>& leaving) {
  std::vector<Completion> out;
  {
    absl::MutexLock lock(&mu_);
    auto it = jobs_.find(job_id);
    if (it == jobs_.end()) return false;
    JobState& job = it->second;
    if (!job.live_valid || !job.held || job.live.number != generation) {
      return false;
    }
    // Members judged gone while it was held are not coming back either.
    const absl::flat_hash_set<std::string> gone = job.gone;
    EndLiveLocked(job_id, job, reason, out,
                  whole ? EndKind::kPreemptedWhole : EndKind::kPreempted);
    for (const std::string& id : leaving) job.rejoining.erase(id);
    for (const std::string& id : gone) job.rejoining.erase(id);
    // The members that stay are mostly waiting already.
    MaybeFormLocked(job_id, job, out);
  }
  for (auto& fn : out) fn();
  return true;
}

void Rendezvous::HeldGoneLocked(const std::string& job_id, JobState& job,
                                const std::string& worker_id,
                                const std::string& reason,
                                std::vector<Completion>& out) {
  // A member leaving while its generation is preempted is what preemption
  // is: not a failure. Once every member is gone nothing is left to decide.
  if (!job.gone.insert(worker_id).second) return;
  if (job.gone.size() < job.live.members.size()) return;
  EndLiveLocked(job_id, job,
                absl::StrCat("every member left; the last: ", reason), out,
                EndKind::kPreemptedWhole);
}

}  // namespace ringleader
