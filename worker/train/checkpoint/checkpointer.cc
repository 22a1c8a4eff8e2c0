#include "worker/train/checkpoint/checkpointer.h"

#include <torch/torch.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "worker/train/checkpoint/checkpoint_snapshot.h"
#include "worker/train/checkpoint/resume.h"
#include "worker/train/int64_all_reduce.h"
#include "worker/train/job_error.h"

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
             const v1::CommitCheckpointResponse& r) { Committed(c, r); });
  writer_ = std::make_unique<CheckpointWriter>();
}

Checkpointer::~Checkpointer() {
  // The write in flight ends before the queue it hands its commit to.
  writer_.reset();
  if (saves_ > 0) {
    LOG(INFO) << "checkpoints: " << saves_ << " saves "
              << (spec_.checkpoint_synchronous() ? "(synchronous)"
                                                 : "(background)")
              << " blocked training for "
              << absl::ToDoubleMilliseconds(blocked_) << " ms, "
              << absl::ToDoubleMilliseconds(blocked_ / saves_)
              << " ms per save";
  }
}

void Checkpointer::Committed(const v1::CommitCheckpointRequest& committed,
                             const v1::CommitCheckpointResponse& answer) {
  if (answer.scale_up_pending()) scale_up_pending_ = true;
  Prune(committed);
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

v1::CommitCheckpointRequest Checkpointer::Commit(
    const CheckpointPosition& position, int64_t offset,
    bool trained_past) const {
  v1::CommitCheckpointRequest c;
  c.set_job_id(job_id_);
  c.set_generation(generation_);
  c.set_rank(0);
  c.set_epoch(position.epoch);
  c.set_step(position.step);
  c.set_epoch_sample_offset(offset);
  c.set_path(
      CheckpointPath(spec_.checkpoint_dir(), spec_.name(), position.step));
  c.set_resumed_checkpoint_id(resumed_checkpoint_id_);
  c.set_train_size(train_size_);
  c.set_trained_past(trained_past);
  return c;
}

absl::Status Checkpointer::Save(const CheckpointPosition& position,
                                int64_t offset) {
  VLOG(1) << "saving the checkpoint of step " << position.step;
  const absl::Time start = absl::Now();
  const absl::Status s =
      spec_.checkpoint_synchronous() || scale_up_pending_.load()
          ? SaveNow(position, offset)
          : SaveInBackground(position, offset);
  blocked_ += absl::Now() - start;
  ++saves_;
  return s;
}

absl::Status Checkpointer::SaveFinal(const CheckpointPosition& position,
                                     int64_t offset, absl::Duration timeout) {
  const absl::Time start = absl::Now();
  if (absl::Status s = SaveNow(position, offset); !s.ok()) return s;
  const absl::Status s = Drain(timeout);
  LOG(INFO) << "final checkpoint at step " << position.step << " written and "
            << (s.ok() ? "committed" : "not committed") << " in "
            << absl::Now() - start;
  return s;
}

absl::Status Checkpointer::SaveNow(const CheckpointPosition& position,
                                   int64_t offset) {
  // A background write still going queues its commit first: commits stay in
  // step order.
  if (absl::Status s = writer_->WaitIdle(absl::InfiniteDuration()); !s.ok()) {
    return s;
  }
  v1::CommitCheckpointRequest c =
      Commit(position, offset, /*trained_past=*/false);
  if (absl::Status s = SaveCheckpoint(c.path(), *model_, *optimizer_, position);
      !s.ok()) {
    return s;
  }
  // A scale-up ends the generation at this commit, and its answer is only
  // awaited when no commit is queued ahead of it: a background commit still
  // on its way (the coordinator answers in milliseconds, and a small model
  // trains tens of steps meanwhile) would let the ranks train past the
  // checkpoint they then resume from, and those steps are done again. So
  // the commits ahead are waited for first; an outage costs one wait. If
  // they are still unanswered then, this commit's answer would not be
  // awaited either: it goes as trained_past, so the coordinator does not
  // end the generation here, and the next checkpoint is written in place
  // again.
  if (scale_up_pending_.load()) {
    const absl::Status ahead = queue_->Drain(kCommitAnswerWait);
    if (absl::IsDeadlineExceeded(ahead)) {
      c.set_trained_past(true);
    } else if (!ahead.ok()) {
      return ahead;
    }
  }
  // Answered for this commit, not trained_past: the coordinator ends the
  // generation here if workers still wait, and says so if one comes later.
  if (!c.trained_past()) scale_up_pending_ = false;
  const std::string path = c.path();
  if (!queue_->Push(std::move(c), kCommitAnswerWait).has_value()) {
    LOG(WARNING) << "the coordinator has not answered the commit of " << path
                 << " within " << kCommitAnswerWait
                 << "; training goes on and the commit is delivered later ("
                 << queue_->pending() << " queued)";
  }
  return Verdict();
}

absl::Status Checkpointer::SaveInBackground(const CheckpointPosition& position,
                                            int64_t offset) {
  // At most one snapshot in flight: the training thread waits for the
  // previous write before copying the state again, which bounds the memory
  // checkpoints take at one extra copy of the state (and the disk's backlog
  // at one file). With checkpoints further apart than a write takes, it
  // does not wait.
  if (absl::Status s = writer_->WaitIdle(absl::InfiniteDuration()); !s.ok()) {
    return s;
  }
  if (absl::Status s = Verdict(); !s.ok()) return s;
  absl::StatusOr<CheckpointSnapshot> snapshot =
      CheckpointSnapshot::Take(*model_, *optimizer_, position);
  if (!snapshot.ok()) return snapshot.status();
  auto held = std::make_shared<CheckpointSnapshot>(*std::move(snapshot));
  auto commit = std::make_shared<v1::CommitCheckpointRequest>(
      Commit(position, offset, /*trained_past=*/true));
  CommitQueue* queue = queue_.get();
  if (absl::Status s = writer_->Submit(
          [held, path = commit->path()] { return SaveCheckpoint(path, *held); },
          // Queued without waiting for the answer: its verdict is read at
          // the next step boundary.
          [queue, commit] { queue->Push(*commit, absl::ZeroDuration()); });
      !s.ok()) {
    return s;
  }
  return Verdict();
}

absl::Status Checkpointer::Verdict() const {
  if (queue_ == nullptr) return absl::OkStatus();
  // A failed write ends training as it did when the training thread wrote:
  // the same error, returned from the trainer.
  if (absl::Status s = writer_->status(); !s.ok()) return s;
  return queue_->Verdict();
}

absl::Status Checkpointer::Drain(absl::Duration timeout) {
  if (queue_ == nullptr) return absl::OkStatus();
  const absl::Time deadline = absl::Now() + timeout;
  if (absl::Status s = writer_->WaitIdle(timeout); !s.ok()) return s;
  return queue_->Drain(std::max(absl::ZeroDuration(), deadline - absl::Now()));
}

}  // namespace ringleader
