#include "coordinator/training_calls.h"

#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/shard_plan.h"
#include "coordinator/report_checks.h"

namespace ringleader {
namespace {

constexpr size_t kMaxFatalErrorBytes = 4096;
constexpr size_t kMaxCheckpointPathBytes = 4096;

absl::Status CheckCommitRequest(const v1::CommitCheckpointRequest& r) {
  if (r.rank() != 0) {
    return absl::PermissionDeniedError("only rank 0 commits checkpoints");
  }
  if (r.path().empty() || r.path().size() > kMaxCheckpointPathBytes) {
    return absl::InvalidArgumentError("checkpoint path must be 1..4096 bytes");
  }
  if (r.epoch() < 0 || r.step() < 0 || r.epoch_sample_offset() < 0) {
    return absl::InvalidArgumentError(
        "checkpoint epoch, step and offset must be >= 0");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<v1::ShardAssignment> TrainingCalls::GetShard(
    const Caller& caller, const v1::GetShardRequest& r) {
  if (absl::Status s =
          checks_.CheckRank(caller, r.job_id(), r.generation(), r.rank());
      !s.ok()) {
    return s;
  }
  if (r.epoch() < 0) return absl::InvalidArgumentError("epoch must be >= 0");
  if (r.dataset_size() <= 0) {
    return absl::InvalidArgumentError("dataset_size must be > 0");
  }
  absl::StatusOr<v1::Job> job = jobs_.Get(r.job_id());
  if (!job.ok()) return job.status();
  if (r.epoch() >= job->spec().epochs()) {
    return absl::OutOfRangeError(absl::StrCat("epoch ", r.epoch(),
                                              " is past the job's ",
                                              job->spec().epochs(), " epochs"));
  }
  ShardPlanInput plan;
  plan.epoch = r.epoch();
  plan.rank = r.rank();
  plan.dataset_size = r.dataset_size();
  plan.test_split = r.test_split();
  absl::StatusOr<std::optional<v1::CheckpointRecord>> resume =
      facts_.NoteShardRequest(r.job_id(), r.generation(), r.rank(),
                              r.test_split(), r.dataset_size(),
                              r.resume_checkpoint_id());
  if (!resume.ok()) return resume.status();
  if (resume->has_value()) {
    plan.resume = {(*resume)->epoch(), (*resume)->epoch_sample_offset()};
  }
  // The generation can end (and a smaller one form) after the check.
  absl::StatusOr<Rendezvous::LiveRank> live =
      rendezvous_.LiveRankOf(r.job_id(), r.generation(), r.rank());
  if (!live.ok()) return live.status();
  plan.world_size = live->world_size;
  // The workers plan their shards with the same function (common/
  // shard_plan.h); this answer is for tools and tests.
  return PlanShard(job->spec(), plan);
}

absl::Status TrainingCalls::ReportProgress(const Caller& caller,
                                           const v1::ReportProgressRequest& r) {
  if (absl::Status s =
          checks_.CheckRank(caller, r.job_id(), r.generation(), r.rank());
      !s.ok()) {
    // A final report whose answer was lost (the coordinator did not answer
    // in time, or restarted) is sent again, and may find the job over
    // because it counted: the same answer as the first time.
    if (r.finished() && r.fatal_error().empty() &&
        FinalReportSettled(caller, r)) {
      return absl::OkStatus();
    }
    return s;
  }
  if (!r.fatal_error().empty()) {
    if (r.fatal_error().size() > kMaxFatalErrorBytes) {
      return absl::InvalidArgumentError("fatal_error must be <= 4096 bytes");
    }
    return jobs_.Fail(r.job_id(),
                      absl::StrCat("rank ", r.rank(), ": ", r.fatal_error()));
  }
  if (absl::Status s =
          NoteAndCheck(r, /*resumed_checkpoint_id=*/0, &CheckProgressNumbers);
      !s.ok()) {
    return s;
  }
  absl::StatusOr<Rendezvous::LiveRank> live =
      rendezvous_.LiveRankOf(r.job_id(), r.generation(), r.rank());
  if (!live.ok()) return live.status();
  // Before the report is recorded: from here on nothing ends a generation
  // some rank of which finished, so no verdict between the two can.
  if (r.finished()) {
    rendezvous_.Advance(r.job_id(), r.generation(),
                        Rendezvous::Stage::kFinishing);
  }
  step_heard_(r.job_id(), r.generation(), live->member.worker_id, r.step(),
              r.total_steps());
  return jobs_.ReportProgress(r, live->member.worker_id);
}

bool TrainingCalls::FinalReportSettled(
    const Caller& caller, const v1::ReportProgressRequest& r) const {
  absl::StatusOr<std::string> sender =
      jobs_.FinalReporter(r.job_id(), r.generation(), r.rank());
  if (!sender.ok()) return false;
  const std::string* token = caller.TokenOf(*sender);
  return token != nullptr &&
         workers_.AuthenticateRecent(*sender, *token, caller.peer_identity)
             .ok();
}

absl::StatusOr<v1::CommitCheckpointResponse> TrainingCalls::CommitCheckpoint(
    const Caller& caller, const v1::CommitCheckpointRequest& r) {
  absl::StatusOr<v1::CheckpointRecord> committed = Commit(caller, r);
  if (!committed.ok()) return committed.status();
  v1::CommitCheckpointResponse out;
  out.set_checkpoint_id(committed->checkpoint_id());
  GrowAtCommit(r, committed->epoch(), out);
  return out;
}

template <typename Request>
absl::Status TrainingCalls::NoteAndCheck(
    const Request& r, int64_t resumed_checkpoint_id,
    absl::Status (*check)(const v1::JobSpec&, int64_t, const Request&)) {
  if (absl::Status s =
          facts_.NoteTrainingFacts(r.job_id(), r.generation(), r.rank(),
                                   r.train_size(), resumed_checkpoint_id);
      !s.ok()) {
    return s;
  }
  absl::StatusOr<v1::Job> job = jobs_.Get(r.job_id());
  if (!job.ok()) return job.status();
  return check(job->spec(), facts_.TrainSize(r.job_id(), r.generation()), r);
}

absl::StatusOr<v1::CheckpointRecord> TrainingCalls::Commit(
    const Caller& caller, const v1::CommitCheckpointRequest& r) {
  if (absl::Status s =
          checks_.CheckRank(caller, r.job_id(), r.generation(), r.rank());
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckCommitRequest(r); !s.ok()) return s;
  // Before the commit, which must follow the checkpoint the generation
  // resumed from.
  if (absl::Status s =
          NoteAndCheck(r, r.resumed_checkpoint_id(), &CheckCommitNumbers);
      !s.ok()) {
    return s;
  }
  v1::CheckpointRecord record;
  record.set_generation(r.generation());
  record.set_epoch(r.epoch());
  record.set_step(r.step());
  record.set_epoch_sample_offset(r.epoch_sample_offset());
  record.set_path(r.path());
  return jobs_.CommitCheckpoint(r.job_id(), record);
}

void TrainingCalls::GrowAtCommit(const v1::CommitCheckpointRequest& r,
                                 int64_t epoch,
                                 v1::CommitCheckpointResponse& out) {
  // Workers waiting to join a smaller generation get in here, where the
  // generation loses no work; after the last epoch only evaluation is left.
  // A commit written in the background arrives after the ranks trained past
  // it: ending there would throw those steps away, so rank 0 is told instead
  // and writes its next checkpoint on the training thread, where it ends.
  absl::StatusOr<v1::Job> job = jobs_.Get(r.job_id());
  if (!job.ok() || epoch >= job->spec().epochs()) return;
  if (r.trained_past()) {
    out.set_scale_up_pending(
        rendezvous_.WantsToGrow(r.job_id(), r.generation()));
  } else {
    out.set_generation_ended(rendezvous_.Grow(r.job_id(), r.generation()));
  }
}

}  // namespace ringleader
