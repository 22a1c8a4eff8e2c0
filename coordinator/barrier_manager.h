#ifndef RINGLEADER_COORDINATOR_BARRIER_MANAGER_H_
#define RINGLEADER_COORDINATOR_BARRIER_MANAGER_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/timer_queue.h"
#include "coordinator/generation_key.h"

namespace ringleader {

// Named barriers per (job, generation). A barrier completes when every rank
// of the generation has arrived; the same name can then be used again (the
// next round). Dropping a generation fails its pending arrivals with ABORTED,
// so a barrier of a dead generation never hangs.
//
// Arrivals are map entries with a timer, not threads. Callbacks run once,
// without the manager's lock. Thread-safe.
class BarrierManager {
 public:
  using Callback = std::function<void(absl::Status)>;

  // How long a released round took, from its first arrival: for metrics.
  using LatencyHook = std::function<void(absl::Duration took)>;

  explicit BarrierManager(TimerQueue* timers) : timers_(timers) {}

  // Set before the first Arrive.
  void SetLatencyHook(Clock* clock, LatencyHook hook) {
    clock_ = clock;
    on_latency_ = std::move(hook);
  }

  // `world_size` is the generation's size; `rank` must be in [0, world_size).
  // A rank arriving twice at the same round fails with ALREADY_EXISTS.
  // Returns the round the arrival waits in (for Cancel), 0 if it was
  // answered at once.
  uint64_t Arrive(const GenerationKey& gen, const std::string& name,
                  int32_t rank, int32_t world_size, absl::Time deadline,
                  Callback done);
  // Withdraws `rank`'s pending arrival at round `round_id` of barrier `name`
  // with CANCELLED (its caller went away): the rank may arrive again. A
  // no-op once the round was released or the arrival ended.
  void Cancel(const GenerationKey& gen, const std::string& name,
              uint64_t round_id, int32_t rank);
  void DropGeneration(const GenerationKey& gen, const std::string& reason);
  // Drops every generation of `job_id` below `keep_from` (all if -1).
  void DropJob(const std::string& job_id, int64_t keep_from,
               const std::string& reason);
  size_t pending_arrivals() const;
  // Waits until between `lo` and `hi` arrivals are pending (or `timeout`;
  // false then): a test sees a call's state appear, or freed, without
  // polling.
  bool AwaitArrivalsBetween(size_t lo, size_t hi, absl::Duration timeout) const;

 private:
  struct Arrival {
    Callback done;
    TimerQueue::TimerId timer = 0;
  };
  struct Round {
    int32_t world_size = 0;
    uint64_t round_id = 0;
    absl::Time first_arrival;
    absl::flat_hash_map<int32_t, Arrival> ranks;
  };
  using Rounds = absl::flat_hash_map<std::string, Round>;

  // Removes `rank`'s arrival from the round; sets `arrived` (counting it)
  // and `world`. Null if it is not pending.
  Callback Withdraw(const GenerationKey& gen, const std::string& name,
                    uint64_t round_id, int32_t rank, int32_t* arrived,
                    int32_t* world);
  void OnTimeout(const GenerationKey& gen, const std::string& name,
                 uint64_t round_id, int32_t rank);
  size_t PendingLocked() const ABSL_SHARED_LOCKS_REQUIRED(mu_);

  TimerQueue* const timers_;
  Clock* clock_ = nullptr;
  LatencyHook on_latency_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<GenerationKey, Rounds> barriers_ ABSL_GUARDED_BY(mu_);
  uint64_t next_round_id_ ABSL_GUARDED_BY(mu_) = 1;
};

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_BARRIER_MANAGER_H_
