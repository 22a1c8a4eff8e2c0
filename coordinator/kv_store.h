#ifndef RINGLEADER_COORDINATOR_KV_STORE_H_
#define RINGLEADER_COORDINATOR_KV_STORE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
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
// on the thread that set the last missing key, the timer thread, or the caller
// (when the keys already exist). Callbacks run without the store's lock.
// Thread-safe.
class KvStore {
 public:
  struct Limits {
    size_t max_key_bytes = 512;
    size_t max_value_bytes = 4 << 20;
    size_t max_keys_per_generation = 100'000;
    size_t max_bytes_per_generation = 256 << 20;
  };
  using WaitCallback =
      std::function<void(absl::StatusOr<std::vector<std::string>>)>;

  KvStore(TimerQueue* timers, Limits limits);
  explicit KvStore(TimerQueue* timers) : KvStore(timers, Limits()) {}

  absl::Status Set(const GenerationKey& gen, const std::string& key,
                   std::string value);
  // NOT_FOUND when the key is absent.
  absl::StatusOr<std::string> Get(const GenerationKey& gen,
                                  const std::string& key) const;
  // Adds `delta` to the integer stored at `key` (absent counts as 0).
  absl::StatusOr<int64_t> Add(const GenerationKey& gen, const std::string& key,
                              int64_t delta);
  // Calls `done` with the values of all `keys` once they all exist, or
  // DEADLINE_EXCEEDED at `deadline`, or ABORTED if the generation is dropped.
  void Wait(const GenerationKey& gen, std::vector<std::string> keys,
            absl::Time deadline, WaitCallback done);
  // Frees a generation's entries and fails its waiters with ABORTED.
  void DropGeneration(const GenerationKey& gen, const std::string& reason);
  // Drops every generation of a job below `keep_from` (and all if -1).
  void DropJob(const std::string& job_id, int64_t keep_from,
               const std::string& reason);

  size_t waiter_count() const;

 private:
  struct Waiter {
    std::vector<std::string> keys;
    WaitCallback done;
    TimerQueue::TimerId timer = 0;
  };
  struct Space {
    absl::flat_hash_map<std::string, std::string> entries;
    size_t bytes = 0;
    // By waiter id: a timer that fires after its waiter completed finds
    // nothing and does nothing.
    absl::flat_hash_map<uint64_t, Waiter> waiters;
  };

  absl::Status ValidateKey(const std::string& key) const;
  absl::Status StoreLocked(Space& space, const std::string& key,
                           std::string value)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Removes satisfied waiters of `space` and returns their completions.
  std::vector<std::function<void()>> CollectReadyLocked(Space& space)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void OnTimeout(const GenerationKey& gen, uint64_t waiter_id);

  TimerQueue* const timers_;
  const Limits limits_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<GenerationKey, Space> spaces_ ABSL_GUARDED_BY(mu_);
  uint64_t next_waiter_id_ ABSL_GUARDED_BY(mu_) = 1;
};

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_KV_STORE_H_
