#include "coordinator/rendezvous.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/quote_for_error.h"

namespace ringleader {

absl::Status Rendezvous::OpenJob(const std::string& job_id,
                                 const Config& config,
                                 int64_t last_generation) {
  if (config.min_workers < 1 || config.max_workers < config.min_workers) {
    return absl::InvalidArgumentError(
        absl::StrCat("rendezvous needs 1 <= min_workers <= max_workers, got ",
                     config.min_workers, "..", config.max_workers));
  }
  absl::MutexLock lock(&mu_);
  auto [it, fresh] = jobs_.try_emplace(job_id);
  if (!fresh) {
    return absl::AlreadyExistsError(absl::StrCat(
        "rendezvous for job ", QuoteForError(job_id), " is already open"));
  }
  it->second.config = config;
  it->second.live.number = last_generation;
  return absl::OkStatus();
}

absl::Status Rendezvous::RestoreGeneration(const std::string& job_id,
                                           const Generation& generation) {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) {
    return absl::NotFoundError(absl::StrCat(
        "rendezvous for job ", QuoteForError(job_id), " is not open"));
  }
  JobState& job = it->second;
  const int32_t size = static_cast<int32_t>(generation.members.size());
  if (job.live_valid || generation.number < job.live.number ||
      generation.number < 1) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot restore generation ", generation.number, " of job ",
        QuoteForError(job_id), ": generation ", job.live.number, " is ",
        job.live_valid ? "live" : "newer"));
  }
  if (size < job.config.min_workers || size > job.config.max_workers) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot restore generation ", generation.number, " of job ",
        QuoteForError(job_id), ": ", size, " members, outside ",
        job.config.min_workers, "..", job.config.max_workers));
  }
  for (int32_t r = 0; r < size; ++r) {
    if (generation.members[r].rank != r ||
        generation.members[r].worker_id.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot restore generation ", generation.number,
                       " of job ", QuoteForError(job_id), ": member ", r,
                       " has rank ", generation.members[r].rank));
    }
  }
  SetLiveLocked(job, generation);
  return absl::OkStatus();
}

void Rendezvous::CloseJob(const std::string& job_id,
                          const absl::Status& status) {
  std::vector<JoinCallback> failed;
  {
    absl::MutexLock lock(&mu_);
    auto node = jobs_.extract(job_id);
    if (node.empty()) return;
    JobState& job = node.mapped();
    if (job.last_call_armed) timers_->Cancel(job.last_call_timer);
    if (job.round_armed) timers_->Cancel(job.round_timer);
    for (auto& [id, w] : job.waiters) {
      timers_->Cancel(w.timer);
      failed.push_back(std::move(w.done));
    }
  }
  for (auto& done : failed) done(status);
}

uint64_t Rendezvous::Join(const std::string& job_id, const Member& member,
                          absl::Time deadline, JoinCallback done) {
  std::vector<Completion> out;
  uint64_t waits_as = 0;
  {
    absl::MutexLock lock(&mu_);
    auto it = jobs_.find(job_id);
    if (it == jobs_.end()) {
      out.push_back([done = std::move(done), job_id] {
        done(absl::NotFoundError(absl::StrCat("job ", QuoteForError(job_id),
                                              " has no open rendezvous")));
      });
    } else if (!it->second.timed_out.empty()) {
      out.push_back([done = std::move(done), why = it->second.timed_out] {
        done(absl::DeadlineExceededError(why));
      });
    } else {
      JoinLocked(job_id, it->second, member, deadline, std::move(done), out);
      auto w = it->second.waiters.find(member.worker_id);
      if (w != it->second.waiters.end()) waits_as = w->second.id;
    }
  }
  for (auto& fn : out) fn();
  return waits_as;
}

void Rendezvous::JoinLocked(const std::string& job_id, JobState& job,
                            const Member& member, absl::Time deadline,
                            JoinCallback done, std::vector<Completion>& out) {
  {
    if (!MemberRejoinsLocked(job_id, job, member, done, out)) return;
    // A retried join replaces the earlier call of the same worker.
    if (auto old = job.waiters.find(member.worker_id);
        old != job.waiters.end()) {
      timers_->Cancel(old->second.timer);
      out.push_back([cb = std::move(old->second.done)] {
        cb(absl::AbortedError("superseded by a newer join of this worker"));
      });
      job.waiters.erase(old);
    }
    job.rejoining.erase(member.worker_id);
    if (!job.live_valid && !job.round_started) {
      job.round_start = clock_->Now();
      job.round_started = true;
    }
    Waiter& w = job.waiters[member.worker_id];
    w.member = member;
    w.done = std::move(done);
    w.id = next_waiter_id_++;
    w.timer = timers_->Schedule(
        deadline, [this, job_id, wid = member.worker_id, id = w.id] {
          OnJoinTimeout(job_id, wid, id);
        });
    ArmRoundLocked(job_id, job);
    MaybeFormLocked(job_id, job, out);
  }
}

bool Rendezvous::MemberRejoinsLocked(const std::string& job_id, JobState& job,
                                     const Member& member, JoinCallback& done,
                                     std::vector<Completion>& out) {
  if (!job.live_valid) return true;
  auto rank = job.live_rank.find(member.worker_id);
  if (rank == job.live_rank.end()) return true;
  // A held generation ends as its preemption decides: the member waits
  // for the next generation.
  if (job.held) return true;
  if (job.stage != Stage::kFinishing) {
    // A member joining again lost its place (it restarted, or its
    // collective failed): its generation cannot go on without it.
    EndLiveLocked(
        job_id, job,
        absl::StrCat("worker ", member.worker_id, " rejoined the rendezvous"),
        out);
    return true;
  }
  // Its peers are reporting their final results: there is nothing left to
  // train, so no generation forms for it, and its rank is done without
  // its own report.
  const std::string why = absl::StrCat(
      "generation ", job.live.number, " of job ", QuoteForError(job_id),
      " trained to its last step and its ranks are reporting; rank ",
      rank->second, " (worker ", member.worker_id,
      ") joined again, so its part ends without its final report");
  GoneLocked(job_id, job, member.worker_id, rank->second, why, out);
  out.push_back(
      [cb = std::move(done), why] { cb(absl::FailedPreconditionError(why)); });
  return false;
}

void Rendezvous::GoneLocked(const std::string& job_id, JobState& job,
                            const std::string& worker_id, int32_t rank,
                            const std::string& reason,
                            std::vector<Completion>& out) {
  if (!job.gone.insert(worker_id).second) return;
  if (job.gone.size() == job.live.members.size()) {
    EndLiveLocked(job_id, job,
                  absl::StrCat("every member is gone; the last: ", reason),
                  out);
    return;
  }
  out.push_back(
      [this, job_id, number = job.live.number, rank, worker_id, reason] {
        if (on_gone_) on_gone_(job_id, number, rank, worker_id, reason);
      });
}

void Rendezvous::Advance(const std::string& job_id, int64_t generation,
                         Stage stage) {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(job_id);
  if (it == jobs_.end() || !it->second.live_valid ||
      it->second.live.number != generation) {
    return;
  }
  it->second.stage = std::max(it->second.stage, stage);
}

int32_t Rendezvous::Returned(const std::string& job_id,
                             const std::string& worker_id) {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(job_id);
  if (it == jobs_.end() || !it->second.live_valid ||
      it->second.gone.erase(worker_id) == 0) {
    return -1;
  }
  return it->second.live_rank.at(worker_id);
}

void Rendezvous::MaybeFormLocked(const std::string& job_id, JobState& job,
                                 std::vector<Completion>& out) {
  if (job.live_valid) return;  // Joiners wait for the next generation.
  const int32_t waiting = static_cast<int32_t>(job.waiters.size());
  // After a scale-up, the grown generation's members are on their way back.
  if (job.resized && !job.rejoining.empty() &&
      waiting < job.config.max_workers) {
    return;
  }
  // Every member of the ended generation is back (or removed): nobody
  // else is expected, so no last call.
  const bool all_back = job.reforming && job.rejoining.empty();
  if (waiting >= job.config.max_workers ||
      (waiting >= job.config.min_workers &&
       (all_back || job.config.last_call <= absl::ZeroDuration()))) {
    FormLocked(job_id, job, out);
    return;
  }
  if (waiting >= job.config.min_workers && !job.last_call_armed) {
    job.last_call_armed = true;
    job.last_call_timer =
        timers_->Schedule(clock_->Now() + job.config.last_call,
                          [this, job_id] { OnLastCall(job_id); });
  }
}

void Rendezvous::FormLocked(const std::string& job_id, JobState& job,
                            std::vector<Completion>& out) {
  if (job.last_call_armed) {
    timers_->Cancel(job.last_call_timer);
    job.last_call_armed = false;
  }
  if (job.round_armed) {
    timers_->Cancel(job.round_timer);
    job.round_armed = false;
  }
  job.rejoining.clear();
  job.resized = false;
  job.reforming = false;
  std::vector<std::string> ids;
  ids.reserve(job.waiters.size());
  for (const auto& [id, w] : job.waiters) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  if (static_cast<int32_t>(ids.size()) > job.config.max_workers) {
    ids.resize(job.config.max_workers);  // The rest wait for the next one.
  }
  Generation gen;
  gen.number = job.live.number + 1;
  std::vector<JoinCallback> callbacks;
  for (size_t r = 0; r < ids.size(); ++r) {
    auto node = job.waiters.extract(ids[r]);
    timers_->Cancel(node.mapped().timer);
    Member m = node.mapped().member;
    m.rank = static_cast<int32_t>(r);
    gen.members.push_back(std::move(m));
    callbacks.push_back(std::move(node.mapped().done));
  }
  SetLiveLocked(job, gen);
  const absl::Duration took = job.round_started
                                  ? clock_->Now() - job.round_start
                                  : absl::ZeroDuration();
  // Workers left waiting start their round when this generation ends.
  job.round_started = false;
  out.push_back([this, job_id, gen, took, callbacks = std::move(callbacks)] {
    if (on_latency_) on_latency_(job_id, took);
    // The hook first, so the job is RUNNING before any rank hears of it.
    if (on_formed_) on_formed_(job_id, gen);
    const absl::StatusOr<Generation> formed(gen);
    for (const JoinCallback& cb : callbacks) cb(formed);
  });
}

void Rendezvous::EndLiveLocked(const std::string& job_id, JobState& job,
                               const std::string& reason,
                               std::vector<Completion>& out, EndKind kind) {
  if (!job.live_valid) return;
  job.live_valid = false;
  job.held = false;
  const int64_t number = job.live.number;
  job.ended_number = number;
  job.ended_reason = reason;
  const bool resized = kind == EndKind::kResized;
  const bool whole = kind == EndKind::kPreemptedWhole;
  // The next generation expects every member back (the caller removes the
  // one it knows gone); after a whole preemption, nobody: the workers that
  // come back are new processes.
  job.reforming = !whole;
  job.resized = resized;
  job.rejoining.clear();
  for (const Member& m : job.live.members) {
    if (!whole && !job.waiters.contains(m.worker_id)) {
      job.rejoining.insert(m.worker_id);
    }
  }
  // Workers already waiting (hot spares) start the next round now.
  job.round_started = !job.waiters.empty();
  job.round_start = clock_->Now();
  // The survivors' rejoin (or their replacements) is a round like the
  // first. A job preempted whole waits for workers as a queued job does:
  // its round starts with the first join.
  if (!whole || !job.waiters.empty()) ArmRoundLocked(job_id, job);
  out.push_back([this, job_id, number, reason, kind] {
    if (kind == EndKind::kPreempted || kind == EndKind::kPreemptedWhole) {
      if (on_preempted_) {
        on_preempted_(job_id, number, reason, kind == EndKind::kPreemptedWhole);
      }
      return;
    }
    const EndedHook& hook = kind == EndKind::kResized ? on_resized_ : on_ended_;
    if (hook) hook(job_id, number, reason);
  });
}

bool Rendezvous::Grow(const std::string& job_id, int64_t generation) {
  std::vector<Completion> out;
  {
    absl::MutexLock lock(&mu_);
    auto it = jobs_.find(job_id);
    if (it == jobs_.end()) return false;
    JobState& job = it->second;
    if (!Growable(job, generation)) return false;
    const int32_t size = static_cast<int32_t>(job.live.members.size());
    const std::string reason = absl::StrCat(
        "scale-up: ", job.waiters.size(), " worker(s) waiting to join ", size,
        " member(s), max_workers ", job.config.max_workers);
    EndLiveLocked(job_id, job, reason, out, EndKind::kResized);
  }
  for (auto& fn : out) fn();
  return true;
}

Rendezvous::JoinCallback Rendezvous::WithdrawJoin(const std::string& job_id,
                                                  const std::string& worker_id,
                                                  uint64_t waiter_id,
                                                  int32_t* waiting,
                                                  int32_t* min) {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return nullptr;
  JobState& job = it->second;
  auto w = job.waiters.find(worker_id);
  if (w == job.waiters.end() || w->second.id != waiter_id) return nullptr;
  timers_->Cancel(w->second.timer);
  JoinCallback done = std::move(w->second.done);
  job.waiters.erase(w);
  *waiting = static_cast<int32_t>(job.waiters.size());
  *min = job.config.min_workers;
  if (*waiting < *min && job.last_call_armed) {
    timers_->Cancel(job.last_call_timer);
    job.last_call_armed = false;
  }
  return done;
}

void Rendezvous::OnJoinTimeout(const std::string& job_id,
                               const std::string& worker_id,
                               uint64_t waiter_id) {
  int32_t waiting = 0, min = 0;
  JoinCallback done =
      WithdrawJoin(job_id, worker_id, waiter_id, &waiting, &min);
  if (!done) return;
  done(absl::DeadlineExceededError(
      absl::StrCat("rendezvous of job ", QuoteForError(job_id),
                   " did not complete in time: ", waiting + 1,
                   " worker(s) were waiting, min_workers is ", min)));
}

void Rendezvous::CancelJoin(const std::string& job_id,
                            const std::string& worker_id, uint64_t waiter_id) {
  int32_t waiting = 0, min = 0;
  JoinCallback done =
      WithdrawJoin(job_id, worker_id, waiter_id, &waiting, &min);
  if (!done) return;
  done(absl::CancelledError(
      absl::StrCat("worker ", QuoteForError(worker_id),
                   " left the rendezvous: its call was cancelled")));
}

bool Rendezvous::RemoveWorker(const std::string& job_id,
                              const std::string& worker_id,
                              const std::string& reason) {
  std::vector<Completion> out;
  bool ended = false;
  {
    absl::MutexLock lock(&mu_);
    auto it = jobs_.find(job_id);
    if (it == jobs_.end()) return false;
    JobState& job = it->second;
    if (auto w = job.waiters.find(worker_id); w != job.waiters.end()) {
      timers_->Cancel(w->second.timer);
      out.push_back([cb = std::move(w->second.done), reason] {
        cb(absl::AbortedError(reason));
      });
      job.waiters.erase(w);
      if (static_cast<int32_t>(job.waiters.size()) < job.config.min_workers &&
          job.last_call_armed) {
        timers_->Cancel(job.last_call_timer);
        job.last_call_armed = false;
      }
    }
    if (auto rank = job.live_rank.find(worker_id);
        job.live_valid && rank != job.live_rank.end()) {
      if (job.held) {
        HeldGoneLocked(job_id, job, worker_id, reason, out);
      } else if (job.stage == Stage::kTraining) {
        EndLiveLocked(job_id, job, reason, out);
      } else {
        GoneLocked(job_id, job, worker_id, rank->second, reason, out);
      }
      ended = !job.live_valid;
    }
    // A member of the ended generation that will not come back.
    const bool was_rejoining = job.rejoining.erase(worker_id) > 0;
    // Waiters that arrived during the generation can form the next one.
    if (ended || was_rejoining) MaybeFormLocked(job_id, job, out);
  }
  for (auto& fn : out) fn();
  return ended;
}

void Rendezvous::SetLiveLocked(JobState& job, const Generation& gen) {
  job.live = gen;
  job.live_valid = true;
  job.live_rank.clear();
  job.live_keeps_state = false;
  job.stage = Stage::kTraining;
  job.held = false;
  job.gone.clear();
  for (const Member& m : gen.members) {
    job.live_rank[m.worker_id] = m.rank;
    job.live_keeps_state |= m.keeps_state;
  }
}

}  // namespace ringleader
