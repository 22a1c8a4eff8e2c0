#ifndef RINGLEADER_COORDINATOR_KV_STORE_H_
#define RINGLEADER_COORDINATOR_KV_STORE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/timer_queue.h"
#include "coordinator/generation_key.h"

namespace ringleader {

// The per-(job, generation) key-value store that bootstraps collectives
// (Gloo's rendezvous store, the NCCL unique id), modelled on c10d's Store:
// set, get, add, and wait with a deadline.
//
// A waiter is a map entry plus a timer, never a thread: `done` runs once,
// on the thread that set the last missing key, the timer thread, the
// thread that cancels it, or the caller (when the keys already exist).
// Waiters are indexed by the keys they still miss, so a write costs the
// waiters on that key, never every pending wait (a large job's Gloo
// bootstrap is thousands of waits at once). Callbacks run without the
// store's lock. Thread-safe.
class KvStore {
 public:
  struct Limits {
    size_t max_key_bytes = 512;
    size_t max_value_bytes = 4 << 20;
    size_t max_keys_per_generation = 100'000;
    size_t max_bytes_per_generation = 256 << 20;
    // Pending waits per generation: a rank waits on a few at a time, so
    // this is far above any honest job and bounds what a client can pin.
    size_t max_waiters_per_generation = 65'536;
  };
  using WaitCallback =
      std::function<void(absl::StatusOr<std::vector<std::string>>)>;
  // Names a pending wait for CancelWait; kNoWait when it was answered at
  // once.
  using WaitId = uint64_t;
  static constexpr WaitId kNoWait = 0;

  KvStore(TimerQueue* timers, Limits limits);
  explicit KvStore(TimerQueue* timers) : KvStore(timers, Limits()) {}

  absl::Status Set(const GenerationKey& gen, const std::string& key,
                   std::string value);
  // The coordinator's own entry (the NCCL id): ALREADY_EXISTS if `key` is
  // set; outside the per-generation quotas, so a space full of a job's own
  // keys cannot stop it.
  absl::Status Create(const GenerationKey& gen, const std::string& key,
                      std::string value);
  // NOT_FOUND when the key is absent.
  absl::StatusOr<std::string> Get(const GenerationKey& gen,
                                  const std::string& key) const;
  // Adds `delta` to the integer stored at `key` (absent counts as 0).
  absl::StatusOr<int64_t> Add(const GenerationKey& gen, const std::string& key,
                              int64_t delta);
  // Calls `done` with the values of all `keys` once they all exist, or
  // DEADLINE_EXCEEDED at `deadline`, or ABORTED if the generation is dropped,
  // or CANCELLED by CancelWait. Returns the id CancelWait takes.
  WaitId Wait(const GenerationKey& gen, std::vector<std::string> keys,
              absl::Time deadline, WaitCallback done);
  // Ends a pending wait with CANCELLED (its caller went away) and frees it;
  // a no-op if it already ended.
  void CancelWait(const GenerationKey& gen, WaitId id);
  // Frees a generation's entries and fails its waiters with ABORTED.
  void DropGeneration(const GenerationKey& gen, const std::string& reason);
  // Drops every generation of a job below `keep_from` (and all if -1).
  void DropJob(const std::string& job_id, int64_t keep_from,
               const std::string& reason);

  size_t waiter_count() const;
  // Waiters a write has advanced, over the store's life: what writes cost
  // (a write advances only the waiters on its key; before the index every
  // write visited every pending wait). For tests and metrics.
  uint64_t waiter_visits() const;
  // Waits until between `lo` and `hi` waits are pending (or `timeout`;
  // false then): a test sees a call's state appear, or freed, without
  // polling.
  bool AwaitWaitersBetween(size_t lo, size_t hi, absl::Duration timeout) const;

 private:
  struct Waiter {
    std::vector<std::string> keys;
    size_t missing = 0;  // Distinct keys of `keys` not set yet.
    WaitCallback done;
    TimerQueue::TimerId timer = 0;
  };
  struct Space {
    absl::flat_hash_map<std::string, std::string> entries;
    size_t bytes = 0;
    // By waiter id: a timer that fires after its waiter completed finds
    // nothing and does nothing.
    absl::flat_hash_map<WaitId, Waiter> waiters;
    // The waiters each absent key would advance.
    absl::flat_hash_map<std::string, absl::flat_hash_set<WaitId>> waiting_on;
  };
  using Completion = std::function<void()>;

  absl::Status ValidateKey(const std::string& key) const;
  // Set's and Create's write: a created key must be new and is outside the
  // quota; a set one counts against it. Completes the waiters it was the
  // last key of, after the lock.
  absl::Status Write(const GenerationKey& gen, const std::string& key,
                     std::string value, bool create);
  absl::Status CheckQuotaLocked(const Space& space, const std::string& key,
                                size_t value_bytes) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // Stores `value` and completes the waiters it was the last key of.
  void PutLocked(Space& space, const std::string& key, std::string value,
                 std::vector<Completion>& ready)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Removes waiter `id` from `space` (its index entries included) and
  // returns it.
  Waiter TakeWaiterLocked(Space& space, WaitId id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Completion CompleteLocked(Space& space, WaitId id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void OnTimeout(const GenerationKey& gen, WaitId id);

  TimerQueue* const timers_;
  const Limits limits_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<GenerationKey, Space> spaces_ ABSL_GUARDED_BY(mu_);
  // Per job, the newest generation dropped and why. A call checked against
  // the live generation just before it ended reaches the store after the
  // drop: it is refused (ABORTED) instead of waiting out its deadline on a
  // generation nobody will write again, or recreating its space.
  struct Dropped {
    int64_t below_or_at = -1;
    std::string reason;
  };
  absl::flat_hash_map<std::string, Dropped> dropped_ ABSL_GUARDED_BY(mu_);
  absl::Status DroppedLocked(const GenerationKey& gen) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void MarkDroppedLocked(const std::string& job_id, int64_t generation,
                         const std::string& reason)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  WaitId next_waiter_id_ ABSL_GUARDED_BY(mu_) = 1;
  size_t waiters_ ABSL_GUARDED_BY(mu_) = 0;  // Over all spaces.
  uint64_t visits_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_KV_STORE_H_
