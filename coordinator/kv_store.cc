#include "coordinator/kv_store.h"

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

absl::Status KvStore::StoreLocked(Space& space, const std::string& key,
                                  std::string value) {
  if (value.size() > limits_.max_value_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("kv value for ", QuoteForError(key), " is ", value.size(),
                     " bytes; at most ", limits_.max_value_bytes));
  }
  auto it = space.entries.find(key);
  size_t old_bytes = it == space.entries.end() ? 0 : it->second.size();
  if (it == space.entries.end() &&
      space.entries.size() >= limits_.max_keys_per_generation) {
    return absl::ResourceExhaustedError(
        absl::StrCat("kv store holds ", space.entries.size(),
                     " keys for this generation; the limit is ",
                     limits_.max_keys_per_generation));
  }
  if (space.bytes - old_bytes + value.size() >
      limits_.max_bytes_per_generation) {
    return absl::ResourceExhaustedError(
        absl::StrCat("kv store would exceed ", limits_.max_bytes_per_generation,
                     " bytes for this generation"));
  }
  space.bytes = space.bytes - old_bytes + value.size();
  space.entries[key] = std::move(value);
  return absl::OkStatus();
}

std::vector<std::function<void()>> KvStore::CollectReadyLocked(Space& space) {
  std::vector<std::function<void()>> ready;
  for (auto it = space.waiters.begin(); it != space.waiters.end();) {
    Waiter& w = it->second;
    std::vector<std::string> values;
    values.reserve(w.keys.size());
    bool all = true;
    for (const std::string& k : w.keys) {
      auto e = space.entries.find(k);
      if (e == space.entries.end()) {
        all = false;
        break;
      }
      values.push_back(e->second);
    }
    if (!all) {
      ++it;
      continue;
    }
    timers_->Cancel(w.timer);
    ready.push_back([done = std::move(w.done),
                     v = std::move(values)]() mutable { done(std::move(v)); });
    space.waiters.erase(it++);
  }
  return ready;
}

absl::Status KvStore::Set(const GenerationKey& gen, const std::string& key,
                          std::string value) {
  if (absl::Status s = ValidateKey(key); !s.ok()) return s;
  std::vector<std::function<void()>> ready;
  {
    absl::MutexLock lock(&mu_);
    Space& space = spaces_[gen];
    if (absl::Status s = StoreLocked(space, key, std::move(value)); !s.ok()) {
      return s;
    }
    ready = CollectReadyLocked(space);
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
  std::vector<std::function<void()>> ready;
  int64_t result = 0;
  {
    absl::MutexLock lock(&mu_);
    Space& space = spaces_[gen];
    int64_t current = 0;
    auto it = space.entries.find(key);
    if (it != space.entries.end() && !absl::SimpleAtoi(it->second, &current)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "kv key ", QuoteForError(key), " does not hold an integer"));
    }
    if ((delta > 0 && current > INT64_MAX - delta) ||
        (delta < 0 && current < INT64_MIN - delta)) {
      return absl::OutOfRangeError(
          absl::StrCat("kv add on ", QuoteForError(key), " overflows"));
    }
    result = current + delta;
    if (absl::Status s = StoreLocked(space, key, absl::StrCat(result));
        !s.ok()) {
      return s;
    }
    ready = CollectReadyLocked(space);
  }
  for (auto& fn : ready) fn();
  return result;
}

void KvStore::Wait(const GenerationKey& gen, std::vector<std::string> keys,
                   absl::Time deadline, WaitCallback done) {
  if (keys.empty()) {
    done(absl::InvalidArgumentError("kv wait names no keys"));
    return;
  }
  for (const std::string& k : keys) {
    if (absl::Status s = ValidateKey(k); !s.ok()) {
      done(s);
      return;
    }
  }
  std::vector<std::function<void()>> ready;
  {
    absl::MutexLock lock(&mu_);
    Space& space = spaces_[gen];
    uint64_t id = next_waiter_id_++;
    Waiter& w = space.waiters[id];
    w.keys = std::move(keys);
    w.done = std::move(done);
    ready = CollectReadyLocked(space);
    if (ready.empty()) {
      w.timer =
          timers_->Schedule(deadline, [this, gen, id] { OnTimeout(gen, id); });
    }
  }
  for (auto& fn : ready) fn();
}

void KvStore::OnTimeout(const GenerationKey& gen, uint64_t waiter_id) {
  WaitCallback done;
  std::string missing;
  {
    absl::MutexLock lock(&mu_);
    auto space = spaces_.find(gen);
    if (space == spaces_.end()) return;
    auto it = space->second.waiters.find(waiter_id);
    if (it == space->second.waiters.end()) return;
    for (const std::string& k : it->second.keys) {
      if (!space->second.entries.contains(k)) {
        missing = k;
        break;
      }
    }
    done = std::move(it->second.done);
    space->second.waiters.erase(it);
  }
  done(absl::DeadlineExceededError(absl::StrCat(
      "kv wait timed out; key ", QuoteForError(missing), " was never set")));
}

void KvStore::DropGeneration(const GenerationKey& gen,
                             const std::string& reason) {
  std::vector<WaitCallback> failed;
  {
    absl::MutexLock lock(&mu_);
    auto node = spaces_.extract(gen);
    if (node.empty()) return;
    for (auto& [id, w] : node.mapped().waiters) {
      timers_->Cancel(w.timer);
      failed.push_back(std::move(w.done));
    }
  }
  for (auto& done : failed) done(absl::AbortedError(reason));
}

void KvStore::DropJob(const std::string& job_id, int64_t keep_from,
                      const std::string& reason) {
  std::vector<GenerationKey> doomed;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [gen, space] : spaces_) {
      if (gen.first == job_id && (keep_from < 0 || gen.second < keep_from)) {
        doomed.push_back(gen);
      }
    }
  }
  for (const GenerationKey& gen : doomed) DropGeneration(gen, reason);
}

size_t KvStore::waiter_count() const {
  absl::MutexLock lock(&mu_);
  size_t n = 0;
  for (const auto& [gen, space] : spaces_) n += space.waiters.size();
  return n;
}

}  // namespace ringleader
