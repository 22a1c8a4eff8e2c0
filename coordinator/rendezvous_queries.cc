// Rendezvous (coordinator/rendezvous.h): what it answers about its state.
// Read-only, under the lock, like every other call.
#include <string>

#include "absl/strings/str_cat.h"
#include "common/quote_for_error.h"
#include "coordinator/rendezvous.h"

namespace ringleader {

Rendezvous::Stage Rendezvous::StageOf(const std::string& job_id) const {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(job_id);
  if (it == jobs_.end() || !it->second.live_valid) return Stage::kTraining;
  return it->second.stage;
}

bool Rendezvous::IsLiveMember(const std::string& job_id,
                              const std::string& worker_id) const {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(job_id);
  return it != jobs_.end() && it->second.live_valid &&
         it->second.live_rank.contains(worker_id);
}

bool Rendezvous::Growable(const JobState& job, int64_t generation) {
  const int32_t size = static_cast<int32_t>(job.live.members.size());
  return job.live_valid && job.live.number == generation &&
         job.stage == Stage::kTraining && !job.held &&
         size < job.config.max_workers && !job.waiters.empty();
}

bool Rendezvous::WantsToGrow(const std::string& job_id,
                             int64_t generation) const {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(job_id);
  return it != jobs_.end() && Growable(it->second, generation);
}

int64_t Rendezvous::GrowableKeepingState(const std::string& job_id) const {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return 0;
  const JobState& job = it->second;
  return job.live_keeps_state && Growable(job, job.live.number)
             ? job.live.number
             : 0;
}

bool Rendezvous::CountsOn(const std::string& job_id, int64_t generation,
                          const std::string& worker_id) const {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(job_id);
  if (it == jobs_.end() || it->second.live.number != generation) return false;
  const JobState& job = it->second;
  return job.live_valid ? job.live_rank.contains(worker_id)
                        : job.rejoining.contains(worker_id);
}

absl::Status Rendezvous::CheckMember(const std::string& job_id,
                                     int64_t generation, int32_t rank) const {
  if (generation <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "generation must be >= 1 (from JoinRendezvous), got ", generation));
  }
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) {
    return absl::NotFoundError(
        absl::StrCat("job ", QuoteForError(job_id), " has no open rendezvous"));
  }
  const JobState& job = it->second;
  if (generation < job.live.number ||
      (generation == job.live.number && !job.live_valid)) {
    return absl::AbortedError(absl::StrCat("generation ", generation,
                                           " of job ", QuoteForError(job_id),
                                           " has ended; abort and rejoin"));
  }
  if (generation > job.live.number) {
    return absl::FailedPreconditionError(
        absl::StrCat("generation ", generation, " of job ",
                     QuoteForError(job_id), " has not formed"));
  }
  const int32_t world = static_cast<int32_t>(job.live.members.size());
  if (rank < 0 || rank >= world) {
    return absl::InvalidArgumentError(
        absl::StrCat("rank ", rank, " is outside [0, ", world,
                     ") for generation ", generation));
  }
  return absl::OkStatus();
}

std::string Rendezvous::EndReason(const std::string& job_id,
                                  int64_t generation) const {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(job_id);
  if (it == jobs_.end() || it->second.ended_number != generation) return "";
  return it->second.ended_reason;
}

absl::StatusOr<Rendezvous::Generation> Rendezvous::Live(
    const std::string& job_id) const {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(job_id);
  if (it == jobs_.end() || !it->second.live_valid) {
    return absl::NotFoundError(
        absl::StrCat("job ", QuoteForError(job_id), " has no live generation"));
  }
  return it->second.live;
}

absl::StatusOr<Rendezvous::LiveRank> Rendezvous::LiveRankOf(
    const std::string& job_id, int64_t generation, int32_t rank) const {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(job_id);
  if (it == jobs_.end() || !it->second.live_valid ||
      it->second.live.number != generation || rank < 0 ||
      rank >= static_cast<int32_t>(it->second.live.members.size())) {
    return absl::AbortedError(absl::StrCat("generation ", generation,
                                           " of job ", QuoteForError(job_id),
                                           " has ended; abort and rejoin"));
  }
  LiveRank out;
  out.world_size = static_cast<int32_t>(it->second.live.members.size());
  out.member = it->second.live.members[rank];
  return out;
}

absl::StatusOr<int32_t> Rendezvous::LiveRankOfWorker(
    const std::string& job_id, int64_t generation,
    const std::string& worker_id) const {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(job_id);
  if (it == jobs_.end() || !it->second.live_valid ||
      it->second.live.number != generation) {
    return absl::AbortedError(absl::StrCat("generation ", generation,
                                           " of job ", QuoteForError(job_id),
                                           " has ended; abort and rejoin"));
  }
  auto rank = it->second.live_rank.find(worker_id);
  if (rank == it->second.live_rank.end()) {
    return absl::NotFoundError(absl::StrCat(
        "worker ", QuoteForError(worker_id), " is not in generation ",
        generation, " of job ", QuoteForError(job_id)));
  }
  return rank->second;
}

int64_t Rendezvous::LastGeneration(const std::string& job_id) const {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(job_id);
  return it == jobs_.end() ? 0 : it->second.live.number;
}

bool Rendezvous::IsWaiting(const std::string& job_id,
                           const std::string& worker_id) const {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(job_id);
  return it != jobs_.end() && it->second.waiters.contains(worker_id);
}

size_t Rendezvous::WaitersLocked() const {
  size_t n = 0;
  for (const auto& [id, job] : jobs_) n += job.waiters.size();
  return n;
}

size_t Rendezvous::waiter_count() const {
  absl::MutexLock lock(&mu_);
  return WaitersLocked();
}

bool Rendezvous::AwaitWaitersBetween(size_t lo, size_t hi,
                                     absl::Duration timeout) const {
  absl::MutexLock lock(&mu_);
  auto within = [this, lo, hi]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    const size_t n = WaitersLocked();
    return lo <= n && n <= hi;
  };
  return mu_.AwaitWithTimeout(absl::Condition(&within), timeout);
}

}  // namespace ringleader
