#include "coordinator/generation_events.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace ringleader {

const char* GenerationEventKindName(GenerationEvent::Kind kind) {
  switch (kind) {
    case GenerationEvent::Kind::kFormed:
      return "formed";
    case GenerationEvent::Kind::kAdopted:
      return "adopted after a coordinator restart";
    case GenerationEvent::Kind::kEnded:
      return "ended";
    case GenerationEvent::Kind::kResized:
      return "resized";
    case GenerationEvent::Kind::kPreempted:
      return "preempted";
  }
  return "unknown";
}

void GenerationEvents::Push(JobEvents& job, GenerationEvent event) {
  job.events.push_back(std::move(event));
  while (job.events.size() > kMaxGenerationEvents) {
    job.events.pop_front();
    ++job.dropped;
  }
}

void GenerationEvents::Formed(const std::string& job_id, int64_t generation,
                              const std::vector<Member>& members,
                              absl::Time now, bool adopted) {
  absl::MutexLock lock(&mu_);
  JobEvents& job = jobs_[job_id];
  // The rendezvous runs its formed hook outside its lock: a newer
  // generation's may have come first.
  if (generation <= job.generation) return;
  GenerationEvent e;
  e.kind = adopted ? GenerationEvent::Kind::kAdopted
                   : GenerationEvent::Kind::kFormed;
  e.time = now;
  e.generation = generation;
  std::vector<std::string> ids;
  for (const Member& m : members) {
    e.members.push_back(absl::StrCat(m.hostname, " (", m.worker_id, ")"));
    ids.push_back(m.worker_id);
    if (job.generation > 0 &&
        std::find(job.worker_ids.begin(), job.worker_ids.end(), m.worker_id) ==
            job.worker_ids.end()) {
      e.joined.push_back(m.worker_id);
    }
  }
  for (const std::string& id : job.worker_ids) {
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) {
      e.left.push_back(id);
    }
  }
  // A generation after a failure or a preemption recovers the job: its
  // steps lost are known when one of its ranks names a step.
  const bool after_loss =
      !job.events.empty() &&
      (job.events.back().kind == GenerationEvent::Kind::kEnded ||
       job.events.back().kind == GenerationEvent::Kind::kPreempted);
  e.recovery = after_loss && !adopted;
  job.recovery_generation = e.recovery ? generation : -1;
  job.reached_before = e.recovery ? job.events.back().reached_step : -1;
  job.generation = generation;
  job.max_step = -1;
  job.worker_ids = std::move(ids);
  Push(job, std::move(e));
}

void GenerationEvents::Ended(const std::string& job_id, int64_t generation,
                             GenerationEvent::Kind kind,
                             const std::string& reason, absl::Time now) {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(job_id);
  if (it == jobs_.end() || it->second.generation != generation) return;
  JobEvents& job = it->second;
  GenerationEvent e;
  e.kind = kind;
  e.time = now;
  e.generation = generation;
  e.reason = reason;
  e.reached_step = job.max_step;
  Push(job, std::move(e));
}

void GenerationEvents::StepHeard(const std::string& job_id, int64_t generation,
                                 int64_t step) {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(job_id);
  if (it == jobs_.end() || it->second.generation != generation) return;
  JobEvents& job = it->second;
  if (step <= 0) return;  // No step completed yet.
  job.max_step = std::max(job.max_step, step);
  if (job.recovery_generation != generation) return;
  job.recovery_generation = -1;
  for (auto e = job.events.rbegin(); e != job.events.rend(); ++e) {
    if (e->generation == generation && e->recovery) {
      // `step` is the first the generation completed that we heard of: it
      // resumed at most one before it.
      e->steps_lost = std::max<int64_t>(0, job.reached_before - (step - 1));
      break;
    }
  }
}

void GenerationEvents::Forget(const std::string& job_id) {
  absl::MutexLock lock(&mu_);
  jobs_.erase(job_id);
}

GenerationEvents::Snapshot GenerationEvents::Get(
    const std::string& job_id) const {
  absl::MutexLock lock(&mu_);
  Snapshot out;
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return out;
  out.events.assign(it->second.events.begin(), it->second.events.end());
  out.dropped = it->second.dropped;
  return out;
}

}  // namespace ringleader
