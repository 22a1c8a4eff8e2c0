#include "coordinator/kv_store.h"

#include <limits>
#include <string_view>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/quote_for_error.h"

namespace ringleader {

KvStore::KvStore(TimerQueue* timers, Limits limits)
    : timers_(timers), limits_(limits) {}

absl::Status KvStore::ValidateKey(const std::string& key) const {
  if (key.empty()) return absl::InvalidArgumentError("kv key is empty");
  if (key.size() > limits_.max_key_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "kv key is ", key.size(), " bytes; at most ", limits_.max_key_bytes));
  }
  return absl::OkStatus();
}

absl::Status KvStore::CheckQuotaLocked(const Space& space,
                                       const std::string& key,
                                       size_t value_bytes) const {
  if (value_bytes > limits_.max_value_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("kv value for ", QuoteForError(key), " is ", value_bytes,
                     " bytes; at most ", limits_.max_value_bytes));
  }
  auto it = space.entries.find(key);
  const size_t old_bytes = it == space.entries.end() ? 0 : it->second.size();
  if (it == space.entries.end() &&
      space.entries.size() >= limits_.max_keys_per_generation) {
    return absl::ResourceExhaustedError(
        absl::StrCat("kv store holds ", space.entries.size(),
                     " keys for this generation; the limit is ",
                     limits_.max_keys_per_generation));
  }
  if (space.bytes - old_bytes + value_bytes >
      limits_.max_bytes_per_generation) {
    return absl::ResourceExhaustedError(
        absl::StrCat("kv store would exceed ", limits_.max_bytes_per_generation,
                     " bytes for this generation"));
  }
  return absl::OkStatus();
}

void KvStore::PutLocked(Space& space, const std::string& key, std::string value,
                        std::vector<Completion>& ready) {
  auto [it, fresh] = space.entries.try_emplace(key);
  space.bytes = space.bytes - it->second.size() + value.size();
  it->second = std::move(value);
  // Waiters wait for keys to exist, not for new values.
  if (!fresh) return;
  auto node = space.waiting_on.extract(key);
  if (node.empty()) return;
  for (WaitId id : node.mapped()) {
    ++visits_;
    auto w = space.waiters.find(id);
    if (w != space.waiters.end() && --w->second.missing == 0) {
      ready.push_back(CompleteLocked(space, id));
    }
  }
}

KvStore::Waiter KvStore::TakeWaiterLocked(Space& space, WaitId id) {
  auto node = space.waiters.extract(id);
  Waiter w = std::move(node.mapped());
  --waiters_;
  if (w.missing == 0) return w;
  for (const std::string& k : w.keys) {
    auto on = space.waiting_on.find(k);
    if (on == space.waiting_on.end()) continue;
    on->second.erase(id);
    if (on->second.empty()) space.waiting_on.erase(on);
  }
  return w;
}

KvStore::Completion KvStore::CompleteLocked(Space& space, WaitId id) {
  Waiter w = TakeWaiterLocked(space, id);
  timers_->Cancel(w.timer);
  std::vector<std::string> values;
  values.reserve(w.keys.size());
  for (const std::string& k : w.keys) values.push_back(space.entries.at(k));
  return [done = std::move(w.done), v = std::move(values)]() mutable {
    done(std::move(v));
  };
}

absl::Status KvStore::DroppedLocked(const GenerationKey& gen) const {
  auto it = dropped_.find(gen.first);
  if (it == dropped_.end() || gen.second > it->second.below_or_at) {
    return absl::OkStatus();
  }
  return absl::AbortedError(it->second.reason);
}

void KvStore::MarkDroppedLocked(const std::string& job_id, int64_t generation,
                                const std::string& reason) {
  Dropped& d = dropped_[job_id];
  if (generation < d.below_or_at) return;
  d.below_or_at = generation;
  d.reason = reason;
}

absl::Status KvStore::Set(const GenerationKey& gen, const std::string& key,
                          std::string value) {
  return Write(gen, key, std::move(value), /*create=*/false);
}

absl::Status KvStore::Create(const GenerationKey& gen, const std::string& key,
                             std::string value) {
  return Write(gen, key, std::move(value), /*create=*/true);
}

absl::Status KvStore::Write(const GenerationKey& gen, const std::string& key,
                            std::string value, bool create) {
  if (absl::Status s = ValidateKey(key); !s.ok()) return s;
  std::vector<Completion> ready;
  {
    absl::MutexLock lock(&mu_);
    if (absl::Status s = DroppedLocked(gen); !s.ok()) return s;
    Space& space = spaces_[gen];
    if (create && space.entries.contains(key)) {
      return absl::AlreadyExistsError(
          absl::StrCat("kv key ", QuoteForError(key), " is already set"));
    }
    if (!create) {
      if (absl::Status s = CheckQuotaLocked(space, key, value.size());
          !s.ok()) {
        return s;
      }
    }
    PutLocked(space, key, std::move(value), ready);
  }
  for (auto& fn : ready) fn();
  return absl::OkStatus();
}

absl::StatusOr<std::string> KvStore::Get(const GenerationKey& gen,
                                         const std::string& key) const {
  if (absl::Status s = ValidateKey(key); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  auto space = spaces_.find(gen);
  if (space != spaces_.end()) {
    auto it = space->second.entries.find(key);
    if (it != space->second.entries.end()) return it->second;
  }
  return absl::NotFoundError(
      absl::StrCat("kv key ", QuoteForError(key), " is not set"));
}

absl::StatusOr<int64_t> KvStore::Add(const GenerationKey& gen,
                                     const std::string& key, int64_t delta) {
  if (absl::Status s = ValidateKey(key); !s.ok()) return s;
  std::vector<Completion> ready;
  int64_t result = 0;
  {
    absl::MutexLock lock(&mu_);
    if (absl::Status s = DroppedLocked(gen); !s.ok()) return s;
    Space& space = spaces_[gen];
    int64_t current = 0;
    auto it = space.entries.find(key);
    if (it != space.entries.end() && !absl::SimpleAtoi(it->second, &current)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "kv key ", QuoteForError(key), " does not hold an integer"));
    }
    if (__builtin_add_overflow(current, delta, &result)) {
      return absl::OutOfRangeError(
          absl::StrCat("kv add on ", QuoteForError(key), " overflows"));
    }
    std::string text = absl::StrCat(result);
    if (absl::Status s = CheckQuotaLocked(space, key, text.size()); !s.ok()) {
      return s;
    }
    PutLocked(space, key, std::move(text), ready);
  }
  for (auto& fn : ready) fn();
  return result;
}

KvStore::WaitId KvStore::Wait(const GenerationKey& gen,
                              std::vector<std::string> keys,
                              absl::Time deadline, WaitCallback done) {
  if (keys.empty()) {
    done(absl::InvalidArgumentError("kv wait names no keys"));
    return kNoWait;
  }
  for (const std::string& k : keys) {
    if (absl::Status s = ValidateKey(k); !s.ok()) {
      done(s);
      return kNoWait;
    }
  }
  Completion now;
  WaitId id = kNoWait;
  {
    absl::MutexLock lock(&mu_);
    if (absl::Status s = DroppedLocked(gen); !s.ok()) {
      now = [done = std::move(done), s] { done(s); };
    } else if (Space& space = spaces_[gen];
               space.waiters.size() >= limits_.max_waiters_per_generation) {
      now = [done = std::move(done), n = space.waiters.size()] {
        done(absl::ResourceExhaustedError(absl::StrCat(
            "kv store has ", n, " waits pending for this generation")));
      };
    } else {
      id = next_waiter_id_++;
      Waiter& w = space.waiters[id];
      ++waiters_;
      w.keys = std::move(keys);
      w.done = std::move(done);
      absl::flat_hash_set<std::string_view> absent;
      for (const std::string& k : w.keys) {
        if (space.entries.contains(k) || !absent.insert(k).second) continue;
        ++w.missing;
        space.waiting_on[k].insert(id);
      }
      if (w.missing == 0) {
        now = CompleteLocked(space, id);
        id = kNoWait;
      } else {
        w.timer = timers_->Schedule(deadline,
                                    [this, gen, id] { OnTimeout(gen, id); });
      }
    }
  }
  if (now) now();
  return id;
}

void KvStore::OnTimeout(const GenerationKey& gen, WaitId id) {
  WaitCallback done;
  std::string missing;
  {
    absl::MutexLock lock(&mu_);
    auto space = spaces_.find(gen);
    if (space == spaces_.end() || !space->second.waiters.contains(id)) return;
    Waiter w = TakeWaiterLocked(space->second, id);
    for (const std::string& k : w.keys) {
      if (!space->second.entries.contains(k)) {
        missing = k;
        break;
      }
    }
    done = std::move(w.done);
  }
  done(absl::DeadlineExceededError(absl::StrCat(
      "kv wait timed out; key ", QuoteForError(missing), " was never set")));
}

void KvStore::CancelWait(const GenerationKey& gen, WaitId id) {
  WaitCallback done;
  {
    absl::MutexLock lock(&mu_);
    auto space = spaces_.find(gen);
    if (space == spaces_.end() || !space->second.waiters.contains(id)) return;
    Waiter w = TakeWaiterLocked(space->second, id);
    timers_->Cancel(w.timer);
    done = std::move(w.done);
  }
  done(absl::CancelledError("kv wait cancelled by its caller"));
}

void KvStore::DropGeneration(const GenerationKey& gen,
                             const std::string& reason) {
  std::vector<WaitCallback> failed;
  {
    absl::MutexLock lock(&mu_);
    MarkDroppedLocked(gen.first, gen.second, reason);
    auto node = spaces_.extract(gen);
    if (node.empty()) return;
    for (auto& [id, w] : node.mapped().waiters) {
      timers_->Cancel(w.timer);
      failed.push_back(std::move(w.done));
    }
    waiters_ -= failed.size();
  }
  for (auto& done : failed) done(absl::AbortedError(reason));
}

void KvStore::DropJob(const std::string& job_id, int64_t keep_from,
                      const std::string& reason) {
  std::vector<GenerationKey> doomed;
  {
    absl::MutexLock lock(&mu_);
    MarkDroppedLocked(
        job_id,
        keep_from < 0 ? std::numeric_limits<int64_t>::max() : keep_from - 1,
        reason);
    for (const auto& [gen, space] : spaces_) {
      if (gen.first == job_id && (keep_from < 0 || gen.second < keep_from)) {
        doomed.push_back(gen);
      }
    }
  }
  for (const GenerationKey& gen : doomed) DropGeneration(gen, reason);
}

bool KvStore::AwaitWaitersBetween(size_t lo, size_t hi,
                                  absl::Duration timeout) const {
  absl::MutexLock lock(&mu_);
  auto within = [this, lo, hi]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return lo <= waiters_ && waiters_ <= hi;
  };
  return mu_.AwaitWithTimeout(absl::Condition(&within), timeout);
}

uint64_t KvStore::waiter_visits() const {
  absl::MutexLock lock(&mu_);
  return visits_;
}

size_t KvStore::waiter_count() const {
  absl::MutexLock lock(&mu_);
  return waiters_;
}

}  // namespace ringleader
