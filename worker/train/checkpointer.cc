#include "worker/train/checkpointer.h"

#include <torch/torch.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"
#include "worker/train/int64_all_reduce.h"
#include "worker/train/job_error.h"
#include "worker/train/resume.h"

namespace ringleader {
namespace {

std::vector<v1::CheckpointRecord> Candidates(
    const v1::JoinRendezvousResponse& gen) {
  std::vector<v1::CheckpointRecord> out(gen.resume_candidates().begin(),
                                        gen.resume_candidates().end());
  if (out.empty() && gen.resume_from().checkpoint_id() != 0) {
    out.push_back(gen.resume_from());  // A coordinator without them.
  }
  return out;
}

}  // namespace

absl::StatusOr<ResumePoint> ResumeFromOffered(
    const v1::JoinRendezvousResponse& gen, Model& model,
    torch::optim::Optimizer& optimizer, Communicator& comm,
    const c10::Device& device) {
  ResumePoint point;
  const std::vector<v1::CheckpointRecord> candidates = Candidates(gen);
  if (candidates.empty()) return point;
  absl::StatusOr<ResumeChoice> choice = ChooseCheckpoint(
      candidates, [&](const v1::CheckpointRecord& c) -> absl::Status {
        absl::StatusOr<CheckpointPosition> loaded =
            LoadCheckpoint(c.path(), model, &optimizer);
        if (!loaded.ok()) return loaded.status();
        point.position = *loaded;
        return absl::OkStatus();
      });
  if (!choice.ok()) return choice.status();
  for (const std::string& why : choice->skipped) {
    LOG(WARNING) << "rank " << gen.rank() << " skips unreadable checkpoint "
                 << why;
  }
  // Every rank's one-hot vote for its choice, summed.
  absl::StatusOr<std::vector<int64_t>> votes = AllReduceInt64Sum(
      comm, ResumeVote(choice->index, candidates.size()), device);
  if (!votes.ok()) return votes.status();
  absl::StatusOr<int> agreed =
      AgreedCheckpoint(*votes, gen.world_size(), candidates, *choice);
  // Retrying cannot help: every rank fails the job with the same reason.
  if (!agreed.ok()) return JobError(agreed.status());
  const v1::CheckpointRecord& from = candidates[*agreed];
  point.checkpoint_id = from.checkpoint_id();
  point.epoch_sample_offset = from.epoch_sample_offset();
  LOG(INFO) << "rank " << gen.rank() << " resumes from checkpoint "
            << point.checkpoint_id << " (" << from.path() << ") at epoch "
            << point.position.epoch << " step " << point.position.step
            << " offset " << from.epoch_sample_offset()
            << (*agreed > 0 ? absl::StrCat(", skipping ", *agreed,
                                           " unreadable newer one(s)")
                            : "");
  return point;
}

Checkpointer::Checkpointer(CommitQueue::Send send, std::string job_id,
                           const v1::JoinRendezvousResponse& generation,
                           Model* model, torch::optim::Optimizer* optimizer,
                           int64_t resumed_checkpoint_id, int64_t train_size)
    : job_id_(std::move(job_id)),
      spec_(generation.spec()),
      generation_(generation.generation()),
      enabled_(generation.rank() == 0 &&
               !generation.spec().checkpoint_dir().empty()),
      model_(model),
      optimizer_(optimizer),
      resumed_checkpoint_id_(resumed_checkpoint_id),
      train_size_(train_size) {
  if (!enabled_) return;
  queue_ = std::make_unique<CommitQueue>(
      std::move(send),
      [this](const v1::CommitCheckpointRequest& c,
             const v1::CommitCheckpointResponse&) { Prune(c); });
}

void Checkpointer::Prune(const v1::CommitCheckpointRequest& committed) const {
  // Only after this commit succeeded: the older files are still offered.
  if (absl::Status s =
          PruneCheckpointFiles(spec_.checkpoint_dir(), spec_.name(),
                               committed.step(), kKeepCheckpoints);
      !s.ok()) {
    LOG(WARNING) << "checkpoint pruning: " << s.message();
  }
}

absl::Status Checkpointer::Save(const CheckpointPosition& position,
                                int64_t offset) {
  const std::string path =
      CheckpointPath(spec_.checkpoint_dir(), spec_.name(), position.step);
  if (absl::Status s = SaveCheckpoint(path, *model_, *optimizer_, position);
      !s.ok()) {
    return s;
  }
  v1::CommitCheckpointRequest c;
  c.set_job_id(job_id_);
  c.set_generation(generation_);
  c.set_rank(0);
  c.set_epoch(position.epoch);
  c.set_step(position.step);
  c.set_epoch_sample_offset(offset);
  c.set_path(path);
  c.set_resumed_checkpoint_id(resumed_checkpoint_id_);
  c.set_train_size(train_size_);
  if (!queue_->Push(std::move(c), kCommitAnswerWait).has_value()) {
    LOG(WARNING) << "the coordinator has not answered the commit of " << path
                 << " within " << kCommitAnswerWait
                 << "; training goes on and the commit is delivered later ("
                 << queue_->pending() << " queued)";
  }
  return queue_->Verdict();
}

absl::Status Checkpointer::Verdict() const {
  return queue_ == nullptr ? absl::OkStatus() : queue_->Verdict();
}

absl::Status Checkpointer::Drain(absl::Duration timeout) {
  return queue_ == nullptr ? absl::OkStatus() : queue_->Drain(timeout);
}

}  // namespace ringleader
