#include "coordinator/barrier_manager.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/quote_for_error.h"

namespace ringleader {

uint64_t BarrierManager::Arrive(const GenerationKey& gen,
                                const std::string& name, int32_t rank,
                                int32_t world_size, absl::Time deadline,
                                Callback done) {
  if (name.empty() || name.size() > 256) {
    done(absl::InvalidArgumentError("barrier name must be 1..256 bytes"));
    return 0;
  }
  if (world_size < 1 || rank < 0 || rank >= world_size) {
    done(absl::InvalidArgumentError(
        absl::StrCat("barrier ", QuoteForError(name), ": rank ", rank,
                     " is outside [0, ", world_size, ")")));
    return 0;
  }
  std::vector<Callback> release;
  uint64_t waits_in = 0;
  absl::Duration took;
  absl::Status refusal;
  {
    absl::MutexLock lock(&mu_);
    Rounds& rounds = barriers_[gen];
    auto [it, fresh] = rounds.try_emplace(name);
    Round& round = it->second;
    if (fresh) {
      round.world_size = world_size;
      round.round_id = next_round_id_++;
      if (clock_ != nullptr) round.first_arrival = clock_->Now();
    } else if (round.world_size != world_size) {
      refusal = absl::FailedPreconditionError(
          absl::StrCat("barrier ", QuoteForError(name), " has world size ",
                       round.world_size, ", not ", world_size));
    } else if (round.ranks.contains(rank)) {
      refusal = absl::AlreadyExistsError(absl::StrCat(
          "rank ", rank, " already waits at barrier ", QuoteForError(name)));
    }
    if (!refusal.ok()) {
      // Answered below, without the lock.
    } else if (static_cast<int32_t>(round.ranks.size()) + 1 == world_size) {
      for (auto& [r, arrival] : round.ranks) {
        timers_->Cancel(arrival.timer);
        release.push_back(std::move(arrival.done));
      }
      release.push_back(std::move(done));
      if (clock_ != nullptr) took = clock_->Now() - round.first_arrival;
      rounds.erase(it);
    } else {
      Arrival& a = round.ranks[rank];
      waits_in = round.round_id;
      a.done = std::move(done);
      a.timer = timers_->Schedule(deadline,
                                  [this, gen, name, id = round.round_id, rank] {
                                    OnTimeout(gen, name, id, rank);
                                  });
    }
  }
  if (!refusal.ok()) {
    done(std::move(refusal));
    return 0;
  }
  if (!release.empty() && on_latency_) on_latency_(took);
  for (auto& cb : release) cb(absl::OkStatus());
  return waits_in;
}

BarrierManager::Callback BarrierManager::Withdraw(
    const GenerationKey& gen, const std::string& name, uint64_t round_id,
    int32_t rank, int32_t* arrived, int32_t* world) {
  absl::MutexLock lock(&mu_);
  auto g = barriers_.find(gen);
  if (g == barriers_.end()) return nullptr;
  auto r = g->second.find(name);
  if (r == g->second.end() || r->second.round_id != round_id) return nullptr;
  auto a = r->second.ranks.find(rank);
  if (a == r->second.ranks.end()) return nullptr;
  timers_->Cancel(a->second.timer);
  Callback done = std::move(a->second.done);
  r->second.ranks.erase(a);
  *arrived = static_cast<int32_t>(r->second.ranks.size()) + 1;
  *world = r->second.world_size;
  if (r->second.ranks.empty()) g->second.erase(r);
  if (g->second.empty()) barriers_.erase(g);
  return done;
}

void BarrierManager::OnTimeout(const GenerationKey& gen,
                               const std::string& name, uint64_t round_id,
                               int32_t rank) {
  int32_t arrived = 0, world = 0;
  Callback done = Withdraw(gen, name, round_id, rank, &arrived, &world);
  if (!done) return;
  done(absl::DeadlineExceededError(
      absl::StrCat("barrier ", QuoteForError(name), " timed out with ", arrived,
                   " of ", world, " ranks arrived")));
}

void BarrierManager::Cancel(const GenerationKey& gen, const std::string& name,
                            uint64_t round_id, int32_t rank) {
  int32_t arrived = 0, world = 0;
  Callback done = Withdraw(gen, name, round_id, rank, &arrived, &world);
  if (!done) return;
  done(absl::CancelledError(absl::StrCat("rank ", rank, " left barrier ",
                                         QuoteForError(name),
                                         ": its call was cancelled")));
}

void BarrierManager::DropGeneration(const GenerationKey& gen,
                                    const std::string& reason) {
  std::vector<Callback> failed;
  {
    absl::MutexLock lock(&mu_);
    auto node = barriers_.extract(gen);
    if (node.empty()) return;
    for (auto& [name, round] : node.mapped()) {
      for (auto& [rank, arrival] : round.ranks) {
        timers_->Cancel(arrival.timer);
        failed.push_back(std::move(arrival.done));
      }
    }
  }
  for (auto& cb : failed) cb(absl::AbortedError(reason));
}

void BarrierManager::DropJob(const std::string& job_id, int64_t keep_from,
                             const std::string& reason) {
  std::vector<GenerationKey> doomed;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [gen, rounds] : barriers_) {
      if (gen.first == job_id && (keep_from < 0 || gen.second < keep_from)) {
        doomed.push_back(gen);
      }
    }
  }
  for (const GenerationKey& gen : doomed) DropGeneration(gen, reason);
}

size_t BarrierManager::PendingLocked() const {
  size_t n = 0;
  for (const auto& [gen, rounds] : barriers_) {
    for (const auto& [name, round] : rounds) n += round.ranks.size();
  }
  return n;
}

size_t BarrierManager::pending_arrivals() const {
  absl::MutexLock lock(&mu_);
  return PendingLocked();
}

bool BarrierManager::AwaitArrivalsBetween(size_t lo, size_t hi,
                                          absl::Duration timeout) const {
  absl::MutexLock lock(&mu_);
  auto within = [this, lo, hi]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    const size_t n = PendingLocked();
    return lo <= n && n <= hi;
  };
  return mu_.AwaitWithTimeout(absl::Condition(&within), timeout);
}

}  // namespace ringleader
