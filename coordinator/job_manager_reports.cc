// JobManager (coordinator/job_manager.h): what the ranks report and commit.
// Progress reports, final reports and ranks gone after training to the end
// settle the job; committed checkpoints are its history, and the one a
// generation resumed from moves it back.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/eval_metrics.h"
#include "common/job_over.h"
#include "common/quote_for_error.h"
#include "coordinator/job_manager.h"

namespace ringleader {

namespace {

// A rank's test and evaluation counts: each correct count in [0, samples],
// each samples count at most kMaxReportedCount, so that the pooled sums
// over ranks stay exact and cannot pass INT64_MAX.
absl::Status CheckReportedCounts(const v1::ReportProgressRequest& r) {
  for (const auto& [name, correct, samples] :
       {std::make_tuple("test", r.test_correct(), r.test_samples()),
        std::make_tuple("eval", r.eval_correct(), r.eval_samples())}) {
    if (samples < 0 || samples > kMaxReportedCount) {
      return absl::InvalidArgumentError(
          absl::StrCat("progress report: ", name, "_samples must be in [0, ",
                       kMaxReportedCount, "] (got ", samples, ")"));
    }
    if (correct < 0 || correct > samples) {
      return absl::InvalidArgumentError(
          absl::StrCat("progress report: ", name, "_correct must be in [0, ",
                       name, "_samples] (got ", correct, " of ", samples, ")"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status JobManager::ReportProgress(const v1::ReportProgressRequest& r,
                                        const std::string& worker_id) {
  if (!std::isfinite(r.loss()) || !std::isfinite(r.samples_per_sec()) ||
      r.samples_per_sec() < 0 || r.step() < 0 || r.epoch() < 0 ||
      r.eval_epoch() < 0 || !std::isfinite(r.learning_rate()) ||
      r.learning_rate() < 0 || !(r.data_wait_share() >= 0) ||
      r.data_wait_share() > 1) {
    return absl::InvalidArgumentError(
        "progress report has a negative, non-finite or inconsistent value");
  }
  if (absl::Status s = CheckReportedCounts(r); !s.ok()) return s;
  if (absl::Status s = CheckMetricSums("test_metrics", r.test_metrics());
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckMetricSums("eval_metrics", r.eval_metrics());
      !s.ok()) {
    return s;
  }
  std::optional<v1::HistoryPoint> point;
  absl::Status s = Update(
      r.job_id(),
      [&](Entry& e) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) -> absl::StatusOr<bool> {
        if (e.job.state() != v1::JOB_STATE_RUNNING ||
            e.job.generation() != r.generation()) {
          return absl::AbortedError(
              absl::StrCat("job ", QuoteForError(r.job_id()),
                           " is not running generation ", r.generation()));
        }
        const int64_t now_ms = absl::ToUnixMillis(clock_->Now());
        // A stale report is answered as received: its sender moved on.
        if (!e.progress.Add(r, worker_id, now_ms)) return false;
        const bool evaluated = e.progress.Combine(
            e.job.world_size(), e.job.spec().task(), e.job.mutable_progress());
        point = e.progress.Point(r, e.job.progress(), r.generation(), now_ms);
        // A rank's final report must outlive a coordinator restart: the rank
        // has gone idle and will not send it again. So must an epoch's
        // evaluation: the ranks have moved on.
        return SettleLocked(e, r.finished() || evaluated);
      });
  // Outside the lock, as every hook; rank 0 sends its reports one at a
  // time, so its points arrive in order.
  if (s.ok() && point.has_value() && on_history_point_) {
    on_history_point_(r.job_id(), *std::move(point));
  }
  return s;
}

absl::Status JobManager::RankGone(const std::string& job_id, int64_t generation,
                                  int32_t rank, const std::string& worker_id,
                                  const std::string& reason) {
  return Update(
      job_id,
      [&](Entry& e) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) -> absl::StatusOr<bool> {
        if (e.job.state() != v1::JOB_STATE_RUNNING ||
            e.job.generation() != generation || rank < 0 ||
            rank >= e.job.world_size()) {
          return false;
        }
        e.progress.MarkGone(rank, worker_id, reason);
        e.progress.Combine(e.job.world_size(), e.job.spec().task(),
                           e.job.mutable_progress());
        return SettleLocked(e, /*persist=*/true);
      });
}

absl::Status JobManager::RankBack(const std::string& job_id, int64_t generation,
                                  int32_t rank) {
  return Update(
      job_id,
      [&](Entry& e) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) -> absl::StatusOr<bool> {
        if (e.job.state() != v1::JOB_STATE_RUNNING ||
            e.job.generation() != generation || !e.progress.Back(rank)) {
          return false;
        }
        e.progress.Combine(e.job.world_size(), e.job.spec().task(),
                           e.job.mutable_progress());
        return Changed(PersistLocked(e));
      });
}

absl::StatusOr<bool> JobManager::SettleLocked(Entry& e, bool persist) {
  const int32_t world = e.job.world_size();
  if (!e.progress.AllFinished(world)) {
    if (!persist) return true;
    return Changed(PersistLocked(e));
  }
  const std::vector<const v1::RankProgress*> gone = e.progress.Gone(world);
  if (gone.empty()) {
    return Changed(
        TransitionLocked(e, v1::JOB_STATE_SUCCEEDED, "all ranks finished"));
  }
  std::string message = absl::StrCat(world - gone.size(), " of ", world,
                                     " ranks finished; the final metrics "
                                     "leave out the test shard of");
  for (const v1::RankProgress* r : gone) {
    absl::StrAppend(&message, " rank ", r->rank(), " (", r->gone(), ")");
    if (r->rank() == 0) {
      absl::StrAppend(&message,
                      "; rank 0 writes the export before its final report, "
                      "so the export may be missing");
    }
  }
  return Changed(TransitionLocked(e, v1::JOB_STATE_SUCCEEDED, message));
}

bool JobManager::WorkerFinished(const std::string& job_id,
                                const std::string& worker_id) const {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(job_id);
  return it != jobs_.end() && it->second.progress.WorkerFinished(worker_id);
}

absl::StatusOr<std::string> JobManager::FinalReporter(const std::string& job_id,
                                                      int64_t generation,
                                                      int32_t rank) const {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(job_id);
  if (it != jobs_.end() && it->second.job.generation() == generation) {
    const bool succeeded = it->second.job.state() == v1::JOB_STATE_SUCCEEDED;
    for (const v1::RankProgress& p : it->second.job.progress().ranks()) {
      if (p.rank() == rank &&
          (p.finished() || (succeeded && !p.gone().empty()))) {
        return p.worker_id();
      }
    }
  }
  return absl::NotFoundError(absl::StrCat("no final report of rank ", rank,
                                          " of generation ", generation));
}

absl::StatusOr<v1::CheckpointRecord> JobManager::CommitCheckpoint(
    const std::string& job_id, v1::CheckpointRecord record) {
  absl::Status s = Update(
      job_id,
      [&](Entry& e) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) -> absl::StatusOr<bool> {
        if (IsJobOver(e.job.state())) {
          return absl::FailedPreconditionError(
              absl::StrCat("job ", QuoteForError(job_id), " is finished"));
        }
        const v1::CheckpointRecord& last = e.job.last_checkpoint();
        if (last.checkpoint_id() != 0 && record.step() == last.step() &&
            record.path() == last.path()) {
          // A retry of a commit whose answer was lost (the coordinator
          // restarted): the same record, not a second one.
          record = last;
          return false;
        }
        if (record.step() < last.step()) {
          return absl::FailedPreconditionError(
              absl::StrCat("checkpoint at step ", record.step(),
                           " is older than the committed ", last.step()));
        }
        record.set_commit_time_ms(absl::ToUnixMillis(clock_->Now()));
        absl::StatusOr<int64_t> id =
            store_->AddCheckpoint(job_id, e.job.spec().name(), record);
        if (!id.ok()) return id.status();
        record.set_checkpoint_id(*id);
        *e.job.mutable_last_checkpoint() = record;
        return Changed(PersistLocked(e));
      });
  if (!s.ok()) return s;
  return record;
}

absl::StatusOr<std::vector<v1::CheckpointRecord>> JobManager::ResumeCandidates(
    const std::string& job_id, int limit) const {
  v1::Job job;
  {
    absl::MutexLock lock(&mu_);
    auto it = jobs_.find(job_id);
    if (it == jobs_.end()) {
      return absl::NotFoundError(
          absl::StrCat("job ", QuoteForError(job_id), " does not exist"));
    }
    job = it->second.job;
  }
  const v1::CheckpointRecord& last = job.last_checkpoint();
  if (last.checkpoint_id() == 0) return std::vector<v1::CheckpointRecord>();
  // A job submitted with `resume` continues another job's run: that job's
  // checkpoints (same name, older ids) are its history too.
  return store_->RecentCheckpoints(job_id,
                                   job.spec().resume() ? job.spec().name() : "",
                                   last.checkpoint_id(), limit);
}

absl::Status JobManager::ResumedFrom(
    const std::string& job_id, const v1::CheckpointRecord& chosen,
    const std::vector<v1::CheckpointRecord>& unreadable) {
  for (const v1::CheckpointRecord& bad : unreadable) {
    if (absl::Status s = store_->MarkCheckpointBad(
            bad.checkpoint_id(),
            absl::StrCat("no rank of job ", QuoteForError(job_id),
                         " could read ", bad.path()));
        !s.ok()) {
      return s;
    }
  }
  return Update(
      job_id,
      [&](Entry& e) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) -> absl::StatusOr<bool> {
        if (IsJobOver(e.job.state()) ||
            e.job.last_checkpoint().checkpoint_id() == chosen.checkpoint_id()) {
          return false;
        }
        *e.job.mutable_last_checkpoint() = chosen;
        return Changed(PersistLocked(e));
      });
}

}  // namespace ringleader
