#include "worker/train/checkpointer.h"

#include <torch/torch.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"
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

// Sums every rank's one-hot vote for its choice.
absl::StatusOr<std::vector<int64_t>> SumVotes(Communicator& comm,
                                              const std::vector<int64_t>& vote,
                                              const c10::Device& device) {
  torch::Tensor votes =
      torch::tensor(vote, torch::dtype(torch::kInt64)).to(device);
  if (absl::Status s = comm.AllReduceSum(votes.data_ptr(),
                                         static_cast<size_t>(votes.numel()),
                                         DataType::kInt64);
      !s.ok()) {
    return CollectiveFailed(s);
  }
  votes = votes.cpu();
  return std::vector<int64_t>(votes.data_ptr<int64_t>(),
                              votes.data_ptr<int64_t>() + votes.numel());
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
  absl::StatusOr<std::vector<int64_t>> votes =
      SumVotes(comm, ResumeVote(choice->index, candidates.size()), device);
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

Checkpointer::Checkpointer(CoordinatorClient* client, std::string job_id,
                           const v1::JoinRendezvousResponse& generation,
                           Model* model, torch::optim::Optimizer* optimizer)
    : client_(client),
      job_id_(std::move(job_id)),
      spec_(generation.spec()),
      generation_(generation.generation()),
      enabled_(generation.rank() == 0 &&
               !generation.spec().checkpoint_dir().empty()),
      model_(model),
      optimizer_(optimizer) {}

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
  absl::StatusOr<v1::CommitCheckpointResponse> committed =
      client_->CommitCheckpoint(c);
  if (!committed.ok()) return committed.status();
  // Only after this commit succeeded: the older files are still offered.
  if (absl::Status s =
          PruneCheckpointFiles(spec_.checkpoint_dir(), spec_.name(),
                               position.step, kKeepCheckpoints);
      !s.ok()) {
    LOG(WARNING) << "checkpoint pruning: " << s.message();
  }
  if (committed->generation_ended()) {
    // The peers fail their next collective when this rank's communicator
    // goes away.
    return absl::AbortedError(absl::StrCat(
        "generation ", generation_, " of job ", job_id_,
        " ended at checkpoint step ", position.step, " for a scale-up"));
  }
  return absl::OkStatus();
}

}  // namespace ringleader
