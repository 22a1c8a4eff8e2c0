#include "coordinator/preemption.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "glog/logging.h"

namespace ringleader {
namespace {

std::string Name(const GenerationKey& key) {
  return absl::StrCat("generation ", key.second, " of job ", key.first);
}

}  // namespace

Preemption::Preemption(Clock* clock, TimerQueue* timers, Options options,
                       Hooks hooks)
    : clock_(clock),
      timers_(timers),
      options_(options),
      hooks_(std::move(hooks)) {}

Preemption::~Preemption() {
  absl::MutexLock lock(&mu_);
  for (auto& [key, e] : entries_) timers_->Cancel(e.timer);
}

Preemption::Outcome Preemption::OutcomeFor(const Entry& e, int32_t rank) {
  Outcome o;
  o.verdict = e.verdict;
  if (e.verdict != Verdict::kWhole) return o;
  o.steps_agree = e.steps_agree;
  auto it = e.arrivals.find(rank);
  o.save_checkpoint =
      rank == 0 && it != e.arrivals.end() && it->second.step >= 0;
  return o;
}

uint64_t Preemption::Arrive(const GenerationKey& key, int32_t world_size,
                            int32_t rank, const std::string& worker_id,
                            int64_t step, Done done) {
  std::vector<Completion> out;
  uint64_t id = 0;
  {
    absl::MutexLock lock(&mu_);
    auto [it, opened] = entries_.try_emplace(key);
    Entry& e = it->second;
    if (opened) {
      e.world_size = world_size;
      e.timer = timers_->Schedule(clock_->Now() + options_.window,
                                  [this, key] { OnWindowEnd(key); });
      LOG(INFO) << Name(key) << ": rank " << rank << " stopped after step "
                << step << " to leave; preemption window of " << options_.window
                << " open";
      out.push_back([this, key] {
        if (hooks_.opened) hooks_.opened(key);
      });
    }
    Arrival& a = e.arrivals[rank];
    if (a.done) {
      out.push_back([old = std::move(a.done)] {
        old(absl::AbortedError("superseded by a newer call of this rank"));
      });
    }
    a.worker_id = worker_id;
    a.step = step;
    a.id = id = next_id_++;
    if (e.decided) {
      // A late or repeated call hears the verdict already given.
      out.push_back(
          [done = std::move(done), o = OutcomeFor(e, rank)] { done(o); });
    } else {
      a.done = std::move(done);
      if (static_cast<int32_t>(e.arrivals.size()) >= e.world_size) {
        DecideWholeLocked(key, e, out);
      }
    }
  }
  for (auto& fn : out) fn();
  return id;
}

void Preemption::DecideWholeLocked(const GenerationKey& key, Entry& e,
                                   std::vector<Completion>& out) {
  timers_->Cancel(e.timer);
  e.decided = true;
  e.verdict = Verdict::kWhole;
  e.steps_agree = true;
  std::vector<std::string> steps;
  for (const auto& [rank, a] : e.arrivals) {
    e.steps_agree &= a.step == e.arrivals.begin()->second.step;
    steps.push_back(absl::StrCat(a.step));
  }
  LOG(INFO) << Name(key) << ": every member is leaving (steps "
            << absl::StrJoin(steps, ",") << "): the job stops";
  for (auto& [rank, a] : e.arrivals) {
    if (!a.done) continue;
    out.push_back(
        [done = std::move(a.done), o = OutcomeFor(e, rank)] { done(o); });
    a.done = nullptr;
  }
  auto rank0 = e.arrivals.find(0);
  if (rank0 != e.arrivals.end() && rank0->second.step >= 0) {
    e.timer = timers_->Schedule(clock_->Now() + options_.finish_wait,
                                [this, key] { OnFinishWait(key); });
    return;
  }
  // Rank 0 holds no state to save: nothing more to wait for.
  e.timer = 0;
  out.push_back([this, key] {
    if (hooks_.end) {
      hooks_.end(key, /*whole=*/true,
                 "every member was stopped; rank 0 held no state to save", {});
    }
  });
}

void Preemption::Withdraw(const GenerationKey& key, int32_t rank, uint64_t id) {
  Done done;
  {
    absl::MutexLock lock(&mu_);
    auto it = entries_.find(key);
    if (it == entries_.end()) return;
    auto a = it->second.arrivals.find(rank);
    if (a == it->second.arrivals.end() || a->second.id != id) return;
    done = std::move(a->second.done);
    a->second.done = nullptr;
  }
  if (done) done(absl::CancelledError("the preempt call was cancelled"));
}

void Preemption::OnWindowEnd(const GenerationKey& key) {
  std::vector<std::pair<Done, Outcome>> answers;
  std::vector<std::string> leaving;
  std::string reason;
  {
    absl::MutexLock lock(&mu_);
    auto it = entries_.find(key);
    if (it == entries_.end() || it->second.decided) return;
    Entry& e = it->second;
    e.decided = true;
    e.verdict = Verdict::kPartial;
    e.timer = 0;
    std::vector<std::string> ranks;
    for (auto& [rank, a] : e.arrivals) {
      leaving.push_back(a.worker_id);
      ranks.push_back(absl::StrCat(rank));
      if (a.done) answers.emplace_back(std::move(a.done), OutcomeFor(e, rank));
      a.done = nullptr;
    }
    reason = absl::StrCat("rank(s) ", absl::StrJoin(ranks, ","), " of ",
                          e.world_size, " were stopped (preemption window ",
                          absl::FormatDuration(options_.window),
                          "); the others go on without them");
  }
  LOG(INFO) << Name(key) << ": " << reason;
  // The generation ends before the leaving members hear it, so that the
  // members who stay are not held any longer than the window.
  if (hooks_.end) hooks_.end(key, /*whole=*/false, reason, leaving);
  for (auto& [done, o] : answers) done(o);
}

void Preemption::OnFinishWait(const GenerationKey& key) {
  {
    absl::MutexLock lock(&mu_);
    auto it = entries_.find(key);
    if (it == entries_.end()) return;
    it->second.timer = 0;
  }
  if (hooks_.end) {
    hooks_.end(key, /*whole=*/true,
               absl::StrCat("every member was stopped; rank 0 did not commit "
                            "its checkpoint within ",
                            absl::FormatDuration(options_.finish_wait)),
               {});
  }
}

absl::Status Preemption::Finish(const GenerationKey& key, int32_t rank,
                                bool committed) {
  if (rank != 0) {
    return absl::InvalidArgumentError(
        "only rank 0 finishes a preemption (it writes the checkpoint)");
  }
  int64_t step = -1;
  {
    absl::MutexLock lock(&mu_);
    auto it = entries_.find(key);
    if (it == entries_.end() || !it->second.decided ||
        it->second.verdict != Verdict::kWhole) {
      return absl::FailedPreconditionError(absl::StrCat(
          Name(key), " has no WHOLE preemption verdict to finish"));
    }
    timers_->Cancel(it->second.timer);
    it->second.timer = 0;
    step = it->second.arrivals.at(0).step;
  }
  if (hooks_.end) {
    hooks_.end(key, /*whole=*/true,
               committed ? absl::StrCat("every member was stopped; rank 0 "
                                        "committed a checkpoint at step ",
                                        step)
                         : absl::StrCat("every member was stopped; rank 0 "
                                        "could not commit a checkpoint at "
                                        "step ",
                                        step),
               {});
  }
  return absl::OkStatus();
}

void Preemption::Forget(const GenerationKey& key) {
  std::vector<Done> pending;
  {
    absl::MutexLock lock(&mu_);
    auto it = entries_.find(key);
    if (it == entries_.end()) return;
    timers_->Cancel(it->second.timer);
    for (auto& [rank, a] : it->second.arrivals) {
      if (a.done) pending.push_back(std::move(a.done));
    }
    entries_.erase(it);
  }
  for (Done& done : pending) {
    done(absl::AbortedError(
        absl::StrCat(Name(key), " ended before its preemption was decided")));
  }
}

void Preemption::ForgetJob(const std::string& job_id) {
  std::vector<GenerationKey> keys;
  {
    absl::MutexLock lock(&mu_);
    for (auto it = entries_.lower_bound(GenerationKey{job_id, 0});
         it != entries_.end() && it->first.first == job_id; ++it) {
      keys.push_back(it->first);
    }
  }
  for (const GenerationKey& key : keys) Forget(key);
}

bool Preemption::Preempting(const std::string& job_id) const {
  absl::MutexLock lock(&mu_);
  auto it = entries_.lower_bound(GenerationKey{job_id, 0});
  return it != entries_.end() && it->first.first == job_id;
}

size_t Preemption::Size() const {
  absl::MutexLock lock(&mu_);
  return entries_.size();
}

}  // namespace ringleader
