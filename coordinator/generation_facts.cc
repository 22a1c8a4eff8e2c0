#include "coordinator/generation_facts.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace ringleader {

std::vector<v1::CheckpointRecord> GenerationFacts::CurrentOffer(
    const std::string& job_id) const {
  absl::StatusOr<std::vector<v1::CheckpointRecord>> candidates =
      jobs_.ResumeCandidates(job_id, kResumeCandidates);
  if (candidates.ok()) return *std::move(candidates);
  // The history is unreadable: offer the last commit alone.
  std::vector<v1::CheckpointRecord> last;
  absl::StatusOr<v1::Job> job = jobs_.Get(job_id);
  if (job.ok() && job->last_checkpoint().checkpoint_id() != 0) {
    last.push_back(job->last_checkpoint());
  }
  return last;
}

bool GenerationFacts::Formed(const std::string& job_id, int64_t number) {
  std::vector<v1::CheckpointRecord> offer = CurrentOffer(job_id);
  absl::MutexLock lock(&mu_);
  Facts& facts = by_job_[job_id];
  if (facts.number > number) return false;
  facts = Facts();
  facts.number = number;
  facts.resume_candidates = std::move(offer);
  return true;
}

void GenerationFacts::Adopted(const std::string& job_id, int64_t number) {
  absl::MutexLock lock(&mu_);
  Facts& facts = by_job_[job_id];
  facts = Facts();
  facts.number = number;
}

void GenerationFacts::Forget(const std::string& job_id) {
  absl::MutexLock lock(&mu_);
  by_job_.erase(job_id);
}

std::vector<v1::CheckpointRecord> GenerationFacts::Offer(
    const std::string& job_id, int64_t number) const {
  absl::MutexLock lock(&mu_);
  auto it = by_job_.find(job_id);
  if (it == by_job_.end() || it->second.number != number) return {};
  return it->second.resume_candidates;
}

absl::StatusOr<std::optional<v1::CheckpointRecord>>
GenerationFacts::NoteShardRequest(const std::string& job_id, int64_t generation,
                                  int32_t rank, bool test_split,
                                  int64_t dataset_size,
                                  int64_t resume_checkpoint_id) {
  absl::MutexLock lock(&mu_);
  Facts& facts = by_job_[job_id];
  if (absl::Status s = NoteDatasetSize(facts, test_split, rank, dataset_size);
      !s.ok()) {
    return s;
  }
  if (test_split) return std::nullopt;
  absl::StatusOr<const v1::CheckpointRecord*> resume =
      ResumeChoiceLocked(facts, job_id, generation, rank, resume_checkpoint_id);
  if (!resume.ok()) return resume.status();
  if (*resume == nullptr) return std::nullopt;
  return **resume;
}

absl::Status GenerationFacts::NoteTrainingFacts(const std::string& job_id,
                                                int64_t generation,
                                                int32_t rank,
                                                int64_t train_size,
                                                int64_t resumed_checkpoint_id) {
  if (train_size < 0) {
    return absl::InvalidArgumentError("train_size must be >= 0");
  }
  absl::MutexLock lock(&mu_);
  auto it = by_job_.find(job_id);
  if (it == by_job_.end() || it->second.number != generation) {
    return absl::OkStatus();
  }
  Facts& facts = it->second;
  if (train_size > 0) {
    if (absl::Status s = NoteDatasetSize(facts, false, rank, train_size);
        !s.ok()) {
      return s;
    }
  }
  if (resumed_checkpoint_id == 0) return absl::OkStatus();
  if (facts.resume_candidates.empty() && facts.resumed < 0 &&
      !RecallOfferLocked(facts, job_id, resumed_checkpoint_id)) {
    return absl::OkStatus();
  }
  return ResumeChoiceLocked(facts, job_id, generation, rank,
                            resumed_checkpoint_id)
      .status();
}

int64_t GenerationFacts::TrainSize(const std::string& job_id,
                                   int64_t generation) const {
  absl::MutexLock lock(&mu_);
  auto it = by_job_.find(job_id);
  if (it == by_job_.end() || it->second.number != generation) return -1;
  return it->second.dataset_size[0];
}

absl::StatusOr<const v1::CheckpointRecord*> GenerationFacts::ResumeChoiceLocked(
    Facts& facts, const std::string& job_id, int64_t generation, int32_t rank,
    int64_t resume_checkpoint_id) {
  const std::vector<v1::CheckpointRecord>& c = facts.resume_candidates;
  if (c.empty()) return nullptr;
  // 0 names no checkpoint: a worker that predates the candidates resumed
  // from the first. The candidates' own index type: no narrowing.
  int64_t index = 0;
  if (resume_checkpoint_id != 0) {
    index = -1;
    for (size_t i = 0; i < c.size(); ++i) {
      if (c[i].checkpoint_id() == resume_checkpoint_id) {
        index = static_cast<int64_t>(i);
      }
    }
    if (index < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "checkpoint ", resume_checkpoint_id, " is not one generation ",
          generation, " may resume from"));
    }
  }
  if (facts.resumed < 0) {
    // The first rank to say fixes the choice. The newer candidates were
    // unreadable to every rank (each loads the first it can read, and they
    // checked that they agree). Done under mu_ so that no commit overtakes
    // the job's last_checkpoint going back.
    if (absl::Status s = jobs_.ResumedFrom(
            job_id, c[index],
            std::vector<v1::CheckpointRecord>(c.begin(), c.begin() + index));
        !s.ok()) {
      return s;
    }
    facts.resumed = index;
  } else if (facts.resumed != index) {
    return absl::FailedPreconditionError(absl::StrCat(
        "rank ", rank, " resumed from checkpoint ", c[index].checkpoint_id(),
        " but another rank from ", c[facts.resumed].checkpoint_id(),
        ": every rank must read the same checkpoint"));
  }
  return &c[index];
}

absl::Status GenerationFacts::NoteDatasetSize(Facts& facts, bool test_split,
                                              int32_t rank,
                                              int64_t dataset_size) {
  int64_t& size = facts.dataset_size[test_split ? 1 : 0];
  if (size < 0) size = dataset_size;
  if (size != dataset_size) {
    return absl::FailedPreconditionError(absl::StrCat(
        "rank ", rank, " sees ", dataset_size, " samples but another rank saw ",
        size, ": every worker needs the same dataset"));
  }
  return absl::OkStatus();
}

bool GenerationFacts::RecallOfferLocked(Facts& facts, const std::string& job_id,
                                        int64_t resumed_checkpoint_id) {
  // A generation adopted after a coordinator restart kept no offer. Until
  // one of its commits went through (or its choice moved the job back), the
  // job offers what the generation was offered when it formed: the choice
  // can still be applied, or its first commit, older than the unreadable
  // checkpoint it skipped, would be refused.
  absl::StatusOr<v1::Job> job = jobs_.Get(job_id);
  if (!job.ok() || job->last_checkpoint().generation() >= facts.number ||
      job->last_checkpoint().checkpoint_id() == resumed_checkpoint_id) {
    return false;
  }
  absl::StatusOr<std::vector<v1::CheckpointRecord>> offer =
      jobs_.ResumeCandidates(job_id, kResumeCandidates);
  if (!offer.ok()) return false;
  for (const v1::CheckpointRecord& c : *offer) {
    if (c.checkpoint_id() == resumed_checkpoint_id) {
      facts.resume_candidates = *std::move(offer);
      return true;
    }
  }
  return false;  // Chosen before the restart, and the job moved on since.
}

}  // namespace ringleader
