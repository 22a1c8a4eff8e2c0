#include "coordinator/generation_watchers.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace ringleader {

uint64_t GenerationWatchers::Watch(const std::string& worker_id,
                                   const std::string& job_id,
                                   int64_t generation, Answer answer) {
  std::optional<Entry> replaced;
  uint64_t id;
  {
    absl::MutexLock lock(&mu_);
    replaced = TakeWorkerLocked(worker_id, 0);
    id = next_id_++;
    by_job_[job_id][worker_id] =
        Entry{id, job_id, generation, std::move(answer)};
    job_of_[worker_id] = job_id;
    ++size_;
  }
  if (replaced.has_value()) {
    replaced->answer(absl::AlreadyExistsError(
        absl::StrCat("a newer WatchGeneration of worker ", worker_id,
                     " replaced this one")));
  }
  return id;
}

void GenerationWatchers::Unwatch(const std::string& worker_id, uint64_t id) {
  std::optional<Entry> gone;
  {
    absl::MutexLock lock(&mu_);
    gone = TakeWorkerLocked(worker_id, id);
  }
  // Destroyed off the lock: the answer may own what its call holds.
}

void GenerationWatchers::Ended(const std::string& job_id, int64_t generation,
                               const std::string& reason, bool rejoin,
                               int64_t preempt_window_ms) {
  std::vector<Entry> taken;
  {
    absl::MutexLock lock(&mu_);
    taken = TakeLocked(job_id, generation);
  }
  AnswerAll(std::move(taken), reason, rejoin, preempt_window_ms);
}

void GenerationWatchers::JobFinished(const std::string& job_id,
                                     const std::string& reason) {
  std::vector<Entry> taken;
  {
    absl::MutexLock lock(&mu_);
    taken = TakeLocked(job_id, INT64_MAX);
  }
  AnswerAll(std::move(taken), reason, /*rejoin=*/false);
}

void GenerationWatchers::CloseAll(const absl::Status& status) {
  std::vector<Entry> taken;
  {
    absl::MutexLock lock(&mu_);
    for (auto& [job_id, watches] : by_job_) {
      for (auto& [worker_id, entry] : watches) {
        taken.push_back(std::move(entry));
      }
    }
    by_job_.clear();
    job_of_.clear();
    size_ = 0;
  }
  for (Entry& e : taken) e.answer(status);
}

int64_t GenerationWatchers::Size() const {
  absl::MutexLock lock(&mu_);
  return size_;
}

bool GenerationWatchers::AwaitWatching(const std::string& worker_id,
                                       absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto watching = [this, &worker_id]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return job_of_.contains(worker_id);
  };
  return mu_.AwaitWithTimeout(absl::Condition(&watching), timeout);
}

bool GenerationWatchers::AwaitSizeAtMost(int64_t n, absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto small = [this, n]()
                   ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return size_ <= n; };
  return mu_.AwaitWithTimeout(absl::Condition(&small), timeout);
}

std::vector<GenerationWatchers::Entry> GenerationWatchers::TakeLocked(
    const std::string& job_id, int64_t generation) {
  std::vector<Entry> taken;
  auto job = by_job_.find(job_id);
  if (job == by_job_.end()) return taken;
  JobWatches& watches = job->second;
  for (auto it = watches.begin(); it != watches.end();) {
    if (it->second.generation > generation) {
      ++it;
      continue;
    }
    job_of_.erase(it->first);
    taken.push_back(std::move(it->second));
    watches.erase(it++);
  }
  if (watches.empty()) by_job_.erase(job);
  size_ -= static_cast<int64_t>(taken.size());
  return taken;
}

std::optional<GenerationWatchers::Entry> GenerationWatchers::TakeWorkerLocked(
    const std::string& worker_id, uint64_t id) {
  auto where = job_of_.find(worker_id);
  if (where == job_of_.end()) return std::nullopt;
  auto job = by_job_.find(where->second);
  if (job == by_job_.end()) return std::nullopt;  // Not reached: kept in step.
  auto it = job->second.find(worker_id);
  if (it == job->second.end() || (id != 0 && it->second.id != id)) {
    return std::nullopt;
  }
  Entry entry = std::move(it->second);
  job->second.erase(it);
  if (job->second.empty()) by_job_.erase(job);
  job_of_.erase(where);
  --size_;
  return entry;
}

void GenerationWatchers::AnswerAll(std::vector<Entry> entries,
                                   const std::string& reason, bool rejoin,
                                   int64_t preempt_window_ms) {
  for (Entry& e : entries) {
    v1::GenerationEvent event;
    v1::GenerationAbort* ended = event.mutable_ended();
    ended->set_job_id(e.job_id);
    ended->set_generation(e.generation);
    ended->set_reason(reason);
    ended->set_rejoin(rejoin);
    ended->set_preempt_window_ms(preempt_window_ms);
    e.answer(std::move(event));
  }
}

}  // namespace ringleader
