#include "coordinator/finish_line.h"

#include <algorithm>

namespace ringleader {

void FinishLine::StartGeneration(const std::string& job_id, int64_t number,
                                 const std::vector<std::string>& members) {
  absl::MutexLock lock(&mu_);
  Generation& g = jobs_[job_id];
  if (g.number > number) return;  // A newer one formed first.
  // Not even the plan's length carries over: it depends on the world size.
  g = Generation();
  g.number = number;
  for (const std::string& m : members) g.steps[m] = 0;
}

void FinishLine::EndJob(const std::string& job_id) {
  absl::MutexLock lock(&mu_);
  jobs_.erase(job_id);
}

bool FinishLine::AllAtTheEnd(const Generation& g) {
  if (g.total_steps <= 0 || g.steps.empty()) return false;
  for (const auto& [member, step] : g.steps) {
    if (step < g.total_steps) return false;
  }
  return true;
}

bool FinishLine::Reached(const std::string& job_id, int64_t generation,
                         const std::string& worker_id, int64_t step,
                         int64_t total_steps) {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(job_id);
  if (it == jobs_.end() || it->second.number != generation) return false;
  Generation& g = it->second;
  auto member = g.steps.find(worker_id);
  if (member == g.steps.end()) return false;
  member->second = std::max(member->second, step);
  if (total_steps > 0) g.total_steps = total_steps;
  if (g.crossed || !AllAtTheEnd(g)) return false;
  g.crossed = true;
  return true;
}

}  // namespace ringleader
