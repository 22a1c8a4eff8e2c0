#include "coordinator/job_manager.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/job_over.h"
#include "common/job_spec_validator.h"
#include "common/quote_for_error.h"

namespace ringleader {
namespace {

bool Allowed(v1::JobState from, v1::JobState to) {
  using S = v1::JobState;
  if (IsJobOver(from)) return false;
  switch (to) {
    case S::JOB_STATE_RENDEZVOUS:
      return from == S::JOB_STATE_PENDING || from == S::JOB_STATE_RESTARTING ||
             from == S::JOB_STATE_PREEMPTED;
    case S::JOB_STATE_RUNNING:
      return from == S::JOB_STATE_RENDEZVOUS ||
             from == S::JOB_STATE_RESTARTING || from == S::JOB_STATE_PENDING ||
             from == S::JOB_STATE_PREEMPTED;
    case S::JOB_STATE_RESTARTING:
      return from == S::JOB_STATE_RUNNING || from == S::JOB_STATE_RENDEZVOUS;
    case S::JOB_STATE_PREEMPTED:
      return from == S::JOB_STATE_RUNNING || from == S::JOB_STATE_RENDEZVOUS ||
             from == S::JOB_STATE_RESTARTING;
    case S::JOB_STATE_SUCCEEDED:
      return from == S::JOB_STATE_RUNNING;
    case S::JOB_STATE_FAILED:
    case S::JOB_STATE_CANCELLED:
      return true;
    default:
      return false;
  }
}

}  // namespace

JobManager::JobManager(StateStore* store, Clock* clock, JobRetention retention)
    : store_(store), clock_(clock), retention_(retention) {}

absl::StatusOr<std::vector<v1::Job>> JobManager::Recover(
    const absl::flat_hash_map<std::string, int64_t>& adoptable) {
  absl::StatusOr<std::vector<v1::Job>> jobs = store_->LoadJobs();
  if (!jobs.ok()) return jobs.status();
  absl::MutexLock lock(&mu_);
  std::vector<v1::Job> live;
  for (v1::Job& job : *jobs) {
    Entry& e = jobs_[job.job_id()];
    e.job = std::move(job);
    order_.insert(JobKey::Of(e.job));
    if (IsJobOver(e.job.state())) continue;
    auto adopt = adoptable.find(e.job.job_id());
    if (e.job.state() == v1::JOB_STATE_RUNNING && adopt != adoptable.end() &&
        adopt->second == e.job.generation()) {
      // Its generation goes on: ranks' final reports sent before the restart
      // still count.
      e.progress.Restore(e.job.progress());
      e.job.set_message(absl::StrCat("coordinator restarted; generation ",
                                     e.job.generation(), " adopted"));
      if (absl::Status s = PersistLocked(e); !s.ok()) return s;
    } else if (e.job.state() == v1::JOB_STATE_RUNNING ||
               e.job.state() == v1::JOB_STATE_RENDEZVOUS) {
      // Its generation's communicators are unknown to this process: the
      // workers rejoin and resume from the last committed checkpoint.
      e.job.set_state(v1::JOB_STATE_RESTARTING);
      e.job.set_message("coordinator restarted; workers rejoin");
      if (absl::Status s = PersistLocked(e); !s.ok()) return s;
    }
    live.push_back(e.job);
  }
  // A coordinator down while jobs aged, or restarted with a smaller limit.
  if (absl::StatusOr<int> pruned = PruneLocked(); !pruned.ok()) {
    return pruned.status();
  }
  return live;
}

absl::StatusOr<v1::Job> JobManager::Submit(v1::JobSpec spec) {
  spec = WithDefaults(std::move(spec));
  if (absl::Status s = ValidateJobSpec(spec); !s.ok()) return s;
  std::optional<v1::CheckpointRecord> resume;
  if (spec.resume()) {
    absl::StatusOr<std::optional<v1::CheckpointRecord>> latest =
        store_->LatestCheckpoint(spec.name());
    if (!latest.ok()) return latest.status();
    if (!latest->has_value()) {
      return absl::FailedPreconditionError(
          absl::StrCat("resume: no committed checkpoint for a job named ",
                       QuoteForError(spec.name())));
    }
    resume = *latest;
  }
  Notice notice;
  {
    absl::MutexLock lock(&mu_);
    absl::StatusOr<int64_t> seq = store_->NextJobSequence();
    if (!seq.ok()) return seq.status();
    const int64_t now = absl::ToUnixMillis(clock_->Now());
    v1::Job job;
    job.set_job_id(absl::StrCat(spec.name(), "-", *seq));
    *job.mutable_spec() = std::move(spec);
    job.set_state(v1::JOB_STATE_PENDING);
    job.set_create_time_ms(now);
    job.set_update_time_ms(now);
    if (resume.has_value()) *job.mutable_last_checkpoint() = *resume;
    if (jobs_.contains(job.job_id())) {
      return absl::InternalError(
          absl::StrCat("job id ", job.job_id(), " already exists"));
    }
    Entry& e = jobs_[job.job_id()];
    e.job = std::move(job);
    if (absl::Status s = PersistLocked(e); !s.ok()) {
      jobs_.erase(e.job.job_id());
      return s;
    }
    order_.insert(JobKey::Of(e.job));
    notice = NoticeLocked(e);
  }
  Deliver(notice);
  return notice.snapshot;
}

absl::StatusOr<JobManager::Entry*> JobManager::FindLocked(
    const std::string& job_id) {
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) {
    return absl::NotFoundError(
        absl::StrCat("job ", QuoteForError(job_id), " does not exist"));
  }
  return &it->second;
}

absl::Status JobManager::Delete(const std::string& job_id) {
  absl::Status s;
  {
    absl::MutexLock lock(&mu_);
    absl::StatusOr<Entry*> e = FindLocked(job_id);
    if (!e.ok()) return e.status();
    const v1::JobState state = (*e)->job.state();
    if (!IsJobOver(state)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "job ", job_id, " is ", v1::JobState_Name(state),
          "; only a finished job can be deleted (cancel it first)"));
    }
    s = DeleteLocked(job_id);
  }
  TellDeleted();
  return s;
}

void JobManager::TellDeleted() {
  std::vector<std::string> deleted;
  {
    absl::MutexLock lock(&mu_);
    deleted.swap(deleted_);
  }
  if (!on_deleted_) return;
  for (const std::string& id : deleted) on_deleted_(id);
}

absl::Status JobManager::DeleteLocked(const std::string& job_id) {
  // Store first: a job that is gone here must be gone after a restart too.
  if (absl::Status s = store_->DeleteJob(job_id); !s.ok()) return s;
  auto it = jobs_.find(job_id);
  deleted_restarts_ += it->second.job.restarts();
  order_.erase(JobKey::Of(it->second.job));
  jobs_.erase(it);
  deleted_.push_back(job_id);
  return absl::OkStatus();
}

int64_t JobManager::DeletedJobRestarts() const {
  absl::MutexLock lock(&mu_);
  return deleted_restarts_;
}

absl::StatusOr<int> JobManager::Prune() {
  absl::StatusOr<int> pruned;
  {
    absl::MutexLock lock(&mu_);
    pruned = PruneLocked();
  }
  TellDeleted();
  return pruned;
}

absl::StatusOr<int> JobManager::PruneLocked() {
  // Finished jobs, oldest finish first: a job never changes once finished,
  // so its update time is when it finished.
  std::vector<std::pair<int64_t, JobKey>> finished;
  for (const JobKey& key : order_) {
    const v1::Job& job = jobs_.at(key.job_id).job;
    if (IsJobOver(job.state()))
      finished.emplace_back(job.update_time_ms(), key);
  }
  std::sort(finished.begin(), finished.end());
  size_t drop = 0;
  if (retention_.max_finished > 0 &&
      finished.size() > static_cast<size_t>(retention_.max_finished)) {
    drop = finished.size() - retention_.max_finished;
  }
  if (retention_.max_age != absl::InfiniteDuration()) {
    const int64_t cutoff =
        absl::ToUnixMillis(clock_->Now() - retention_.max_age);
    while (drop < finished.size() && finished[drop].first < cutoff) ++drop;
  }
  for (size_t i = 0; i < drop; ++i) {
    if (absl::Status s = DeleteLocked(finished[i].second.job_id); !s.ok()) {
      return s;
    }
  }
  return static_cast<int>(drop);
}

absl::Status JobManager::PersistLocked(Entry& e) {
  e.job.set_update_time_ms(absl::ToUnixMillis(clock_->Now()));
  if (!e.job.has_waiting_for()) return store_->SaveJob(e.job);
  // A wait is news of the moment, not state to recover.
  v1::Job stored = e.job;
  stored.clear_waiting_for();
  return store_->SaveJob(stored);
}

absl::Status JobManager::SetWaitingFor(const std::string& job_id,
                                       const v1::WaitingFor* waiting_for) {
  return Update(job_id,
                [&](Entry& e)
                    ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) -> absl::StatusOr<bool> {
                      // A finished job has none (NoticeLocked), and its
                      // watchers must not see it finish twice.
                      if (IsJobOver(e.job.state())) return false;
                      if (waiting_for == nullptr) {
                        if (!e.job.has_waiting_for()) return false;
                        e.job.clear_waiting_for();
                        return true;
                      }
                      *e.job.mutable_waiting_for() = *waiting_for;
                      return true;
                    });
}

absl::Status JobManager::TransitionLocked(Entry& e, v1::JobState to,
                                          const std::string& message) {
  const v1::JobState from = e.job.state();
  if (from == to) return absl::OkStatus();
  if (!Allowed(from, to)) {
    return absl::FailedPreconditionError(
        absl::StrCat("job ", QuoteForError(e.job.job_id()), " cannot go from ",
                     v1::JobState_Name(from), " to ", v1::JobState_Name(to)));
  }
  e.job.set_state(to);
  e.job.set_message(message);
  absl::Status s = PersistLocked(e);
  if (!s.ok()) {
    e.job.set_state(from);  // Not durable, so not visible either.
  }
  return s;
}

JobManager::Notice JobManager::NoticeLocked(Entry& e) {
  // Nothing waits in a finished job.
  if (IsJobOver(e.job.state())) e.job.clear_waiting_for();
  Notice n;
  n.snapshot = e.job;
  n.version = ++e.version;
  for (const auto& [token, w] : e.watchers) n.watchers.push_back(w);
  n.finished = IsJobOver(e.job.state());
  return n;
}

void JobManager::Deliver(const Notice& notice) {
  for (const Watcher& w : notice.watchers) w(notice.snapshot, notice.version);
  if (!notice.finished) return;
  if (on_finished_) on_finished_(notice.snapshot);
  // The job that just finished is (about) the newest finished one, so older
  // ones go before it. A store error leaves the jobs listed; the next finish
  // or restart tries again.
  Prune().IgnoreError();
}

absl::Status JobManager::Update(
    const std::string& job_id,
    absl::FunctionRef<absl::StatusOr<bool>(Entry&)> change, v1::Job* after) {
  Notice notice;
  {
    absl::MutexLock lock(&mu_);
    absl::StatusOr<Entry*> e = FindLocked(job_id);
    if (!e.ok()) return e.status();
    absl::StatusOr<bool> changed = change(**e);
    if (!changed.ok()) return changed.status();
    if (!*changed) {
      if (after != nullptr) *after = (*e)->job;
      return absl::OkStatus();
    }
    notice = NoticeLocked(**e);
  }
  Deliver(notice);
  if (after != nullptr) *after = std::move(notice.snapshot);
  return absl::OkStatus();
}

absl::StatusOr<v1::Job> JobManager::Cancel(const std::string& job_id) {
  v1::Job after;
  if (absl::Status s = Update(
          job_id,
          [&](Entry& e)
              ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) -> absl::StatusOr<bool> {
                if (IsJobOver(e.job.state())) {
                  return absl::FailedPreconditionError(absl::StrCat(
                      "job ", QuoteForError(job_id), " is already ",
                      v1::JobState_Name(e.job.state())));
                }
                return Changed(TransitionLocked(e, v1::JOB_STATE_CANCELLED,
                                                "cancelled by user"));
              },
          &after);
      !s.ok()) {
    return s;
  }
  return after;
}

absl::Status JobManager::Fail(const std::string& job_id,
                              const std::string& message) {
  return Update(
      job_id,
      [&](Entry& e) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) -> absl::StatusOr<bool> {
        if (IsJobOver(e.job.state())) return false;
        return Changed(TransitionLocked(e, v1::JOB_STATE_FAILED, message));
      });
}

absl::Status JobManager::OnJoin(const std::string& job_id) {
  return Update(
      job_id,
      [&](Entry& e) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) -> absl::StatusOr<bool> {
        const v1::JobState state = e.job.state();
        if (IsJobOver(state)) {
          return absl::FailedPreconditionError(absl::StrCat(
              "job ", QuoteForError(job_id), " is ", v1::JobState_Name(state)));
        }
        if (state != v1::JOB_STATE_PENDING &&
            state != v1::JOB_STATE_PREEMPTED) {
          return false;
        }
        return Changed(TransitionLocked(
            e, v1::JOB_STATE_RENDEZVOUS,
            state == v1::JOB_STATE_PREEMPTED
                ? "workers joining to resume after the preemption"
                : "workers joining"));
      });
}

absl::Status JobManager::OnGenerationFormed(const std::string& job_id,
                                            int64_t generation,
                                            int32_t world_size) {
  return Update(
      job_id,
      [&](Entry& e) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) -> absl::StatusOr<bool> {
        // Late news: a newer generation formed, or this one already ended
        // (its end overtook its formation). Applying it would make the job
        // RUNNING a generation that is not live, and every report of the
        // live one would be refused.
        if (generation <= std::max(e.job.generation(), e.ended_through)) {
          return false;
        }
        e.job.set_generation(generation);
        e.job.set_world_size(world_size);
        e.progress.Reset();
        e.job.mutable_progress()->clear_ranks();
        return Changed(
            TransitionLocked(e, v1::JOB_STATE_RUNNING,
                             absl::StrCat("generation ", generation, " with ",
                                          world_size, " workers")));
      });
}

absl::Status JobManager::OnGenerationEnded(const std::string& job_id,
                                           int64_t generation,
                                           const std::string& reason) {
  return Update(
      job_id,
      [&](Entry& e) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) -> absl::StatusOr<bool> {
        if (IsJobOver(e.job.state())) return false;
        // The failure happened whatever the order the hooks ran in: it
        // counts against the budget even when it arrives late.
        e.job.set_restarts(e.job.restarts() + 1);
        if (e.job.restarts() > e.job.spec().max_restarts()) {
          return Changed(TransitionLocked(
              e, v1::JOB_STATE_FAILED,
              absl::StrCat("restart budget of ", e.job.spec().max_restarts(),
                           " spent; last failure: ", reason)));
        }
        if (generation < e.job.generation()) {
          // Its survivors already formed a newer generation (whose formed
          // hook overtook this one): the job runs that one.
          return Changed(PersistLocked(e));
        }
        e.ended_through = std::max(e.ended_through, generation);
        return Changed(TransitionLocked(
            e, v1::JOB_STATE_RESTARTING,
            absl::StrCat("generation ", generation, " ended: ", reason)));
      });
}

absl::Status JobManager::OnGenerationResized(const std::string& job_id,
                                             int64_t generation,
                                             const std::string& reason) {
  return Update(
      job_id,
      [&](Entry& e) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) -> absl::StatusOr<bool> {
        // As for an end: a newer generation already runs.
        if (IsJobOver(e.job.state()) || generation < e.job.generation()) {
          return false;
        }
        e.ended_through = std::max(e.ended_through, generation);
        return Changed(TransitionLocked(
            e, v1::JOB_STATE_RESTARTING,
            absl::StrCat("generation ", generation, " resized: ", reason)));
      });
}

absl::Status JobManager::OnGenerationPreempted(const std::string& job_id,
                                               int64_t generation,
                                               const std::string& reason,
                                               bool whole) {
  return Update(
      job_id,
      [&](Entry& e) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) -> absl::StatusOr<bool> {
        // No restart is counted either way: the scheduler took the
        // workers, the job did not fail. A newer generation already runs:
        // nothing to change.
        if (IsJobOver(e.job.state()) || generation < e.job.generation()) {
          return false;
        }
        e.ended_through = std::max(e.ended_through, generation);
        return Changed(TransitionLocked(
            e, whole ? v1::JOB_STATE_PREEMPTED : v1::JOB_STATE_RESTARTING,
            absl::StrCat("generation ", generation, " preempted: ", reason)));
      });
}

absl::StatusOr<uint64_t> JobManager::Watch(const std::string& job_id,
                                           Watcher watcher) {
  v1::Job snapshot;
  uint64_t token, version;
  {
    absl::MutexLock lock(&mu_);
    absl::StatusOr<Entry*> e = FindLocked(job_id);
    if (!e.ok()) return e.status();
    token = next_token_++;
    (*e)->watchers[token] = watcher;
    snapshot = (*e)->job;
    version = (*e)->version;
  }
  watcher(snapshot, version);
  return token;
}

void JobManager::Unwatch(const std::string& job_id, uint64_t token) {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(job_id);
  if (it != jobs_.end()) it->second.watchers.erase(token);
}

}  // namespace ringleader
