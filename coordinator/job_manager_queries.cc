// JobManager (coordinator/job_manager.h): what it answers about its jobs.
// Read-only, under the lock, like every other call.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/job_over.h"
#include "common/quote_for_error.h"
#include "coordinator/job_manager.h"

namespace ringleader {

absl::StatusOr<v1::Job> JobManager::Get(const std::string& job_id) const {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) {
    return absl::NotFoundError(
        absl::StrCat("job ", QuoteForError(job_id), " does not exist"));
  }
  return it->second.job;
}

absl::StatusOr<JobManager::Outline> JobManager::OutlineOf(
    const std::string& job_id) const {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) {
    return absl::NotFoundError(
        absl::StrCat("job ", QuoteForError(job_id), " does not exist"));
  }
  return Outline{it->second.job.state(), it->second.job.spec().max_workers()};
}

bool JobManager::RanksName(const std::string& job_id,
                           const std::string& worker_id) const {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return false;
  for (const v1::RankProgress& r : it->second.job.progress().ranks()) {
    if (r.worker_id() == worker_id) return true;
  }
  return false;
}

std::vector<v1::Job> JobManager::List(
    const std::vector<v1::JobState>& states) const {
  absl::MutexLock lock(&mu_);
  std::vector<v1::Job> out;
  for (const JobKey& key : order_) {
    const v1::Job& job = jobs_.at(key.job_id).job;
    if (states.empty() ||
        std::find(states.begin(), states.end(), job.state()) != states.end()) {
      out.push_back(job);
    }
  }
  return out;
}

std::vector<v1::Job> JobManager::Active() const {
  absl::MutexLock lock(&mu_);
  std::vector<v1::Job> out;
  for (const JobKey& key : order_) {
    const v1::Job& job = jobs_.at(key.job_id).job;
    if (!IsJobOver(job.state())) out.push_back(job);
  }
  return out;
}

absl::StatusOr<JobPage> JobManager::ListPage(
    const std::vector<v1::JobState>& states, int32_t page_size,
    const std::string& page_token) const {
  absl::StatusOr<int32_t> size = EffectivePageSize(page_size);
  if (!size.ok()) return size.status();
  std::optional<JobKey> after;
  if (!page_token.empty()) {
    absl::StatusOr<JobKey> key = DecodePageToken(states, page_token);
    if (!key.ok()) return key.status();
    after = *std::move(key);
  }
  auto wanted = [&states](const v1::Job& job) {
    return states.empty() ||
           std::find(states.begin(), states.end(), job.state()) != states.end();
  };
  absl::MutexLock lock(&mu_);
  JobPage page;
  // Keyset paging: the token's job may have been deleted since, the jobs
  // after it are still the ones after its key.
  auto it = after.has_value() ? order_.upper_bound(*after) : order_.begin();
  for (; it != order_.end(); ++it) {
    const v1::Job& job = jobs_.at(it->job_id).job;
    if (!wanted(job)) continue;
    if (static_cast<int32_t>(page.jobs.size()) == *size) {
      // One more job matches: the page is not the last.
      page.next_page_token =
          EncodePageToken(states, JobKey::Of(page.jobs.back()));
      break;
    }
    page.jobs.push_back(JobSummary(job));
  }
  return page;
}

}  // namespace ringleader
