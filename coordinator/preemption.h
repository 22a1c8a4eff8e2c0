#ifndef RINGLEADER_COORDINATOR_PREEMPTION_H_
#define RINGLEADER_COORDINATOR_PREEMPTION_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/timer_queue.h"
#include "coordinator/generation_key.h"

namespace ringleader {

// The preemption of live generations: which members were signalled to stop
// (a scheduler's SIGTERM) and what that means for the job.
//
// A scheduler that preempts a job signals every process at about the same
// moment; one that drains a node, only some. In synchronous data-parallel
// training every step has a collective with all ranks, so the first rank
// that stops after step s makes every other rank block in step s+1: all
// hold their state at s. The first member's arrival opens a window (the
// `opened` hook holds the generation and tells its members, who abort the
// collective they are blocked in and keep their state at s). When every
// member arrived within the window the verdict is WHOLE: rank 0 writes a
// checkpoint of its state and says it is Finished, and the job stops
// PREEMPTED (the `end` hook, whole). When the window ends first, PARTIAL:
// the arrived members leave, and the others go on without them from their
// memory, as after any member's loss (the `end` hook, not whole). Neither
// spends the job's restart budget.
//
// Arrivals wait for the verdict as a map entry plus a timer, never a thread.
// Hooks and answers run without the lock. Thread-safe.
class Preemption {
 public:
  struct Options {
    // From the first arrival to a PARTIAL verdict: long enough for every
    // member of a job the scheduler stops to see its signal and finish its
    // step, well under the workers' grace (--preempt_grace).
    absl::Duration window = absl::Seconds(5);
    // After a WHOLE verdict, how long rank 0 may take to commit its
    // checkpoint before the job is PREEMPTED without it.
    absl::Duration finish_wait = absl::Seconds(60);
  };
  enum class Verdict { kWhole, kPartial };
  // What an arrival is answered.
  struct Outcome {
    Verdict verdict = Verdict::kPartial;
    // WHOLE, rank 0 with a state: it writes and commits a checkpoint.
    bool save_checkpoint = false;
    // WHOLE: every member arrived at the same step.
    bool steps_agree = false;
  };
  using Done = std::function<void(absl::StatusOr<Outcome>)>;
  struct Hooks {
    // Generation `key`'s window opened: hold it, tell its members.
    std::function<void(const GenerationKey& key)> opened;
    // Generation `key` ends preempted: `whole`, or only the members
    // `leaving` (worker ids) leave.
    std::function<void(const GenerationKey& key, bool whole,
                       const std::string& reason,
                       const std::vector<std::string>& leaving)>
        end;
  };

  Preemption(Clock* clock, TimerQueue* timers, Options options, Hooks hooks);
  ~Preemption();

  // Member `rank` (worker `worker_id`) of generation `key`, which has
  // `world_size` members, stopped with its state after `step` (-1: none).
  // `done` gets the verdict once there is one (at once when there already
  // is); an arrival of the same rank again replaces its earlier call, which
  // is answered ABORTED. Returns the id Withdraw takes.
  uint64_t Arrive(const GenerationKey& key, int32_t world_size, int32_t rank,
                  const std::string& worker_id, int64_t step, Done done);
  // Arrival `id`'s caller went away: it is answered CANCELLED, and still
  // counts (the member is leaving).
  void Withdraw(const GenerationKey& key, int32_t rank, uint64_t id);
  // Rank 0 after a WHOLE verdict: its checkpoint is committed (`committed`)
  // or cannot be; the generation ends whole. FAILED_PRECONDITION before a
  // WHOLE verdict, INVALID_ARGUMENT from another rank.
  absl::Status Finish(const GenerationKey& key, int32_t rank, bool committed);
  // Generation `key` ended (however): its pending arrivals are answered
  // ABORTED and its state goes.
  void Forget(const GenerationKey& key);

  // The job finished: every generation of it goes, as in Forget.
  void ForgetJob(const std::string& job_id);

  // Whether a generation of `job_id` is being preempted.
  bool Preempting(const std::string& job_id) const;
  // Generations being preempted, of any job.
  size_t Size() const;

 private:
  struct Arrival {
    std::string worker_id;
    int64_t step = -1;
    Done done;  // Null once answered.
    uint64_t id = 0;
  };
  struct Entry {
    int32_t world_size = 0;
    std::map<int32_t, Arrival> arrivals;  // By rank.
    bool decided = false;
    Verdict verdict = Verdict::kPartial;
    bool steps_agree = false;
    TimerQueue::TimerId timer = 0;  // The window, then the finish wait.
  };
  using Completion = std::function<void()>;

  // Every member is in: WHOLE. Appends the answers and, when rank 0 holds
  // no state to save, the end.
  void DecideWholeLocked(const GenerationKey& key, Entry& e,
                         std::vector<Completion>& out)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The answer for `rank` under `e`'s verdict.
  static Outcome OutcomeFor(const Entry& e, int32_t rank);
  void OnWindowEnd(const GenerationKey& key);
  void OnFinishWait(const GenerationKey& key);

  Clock* const clock_;
  TimerQueue* const timers_;
  const Options options_;
  const Hooks hooks_;
  mutable absl::Mutex mu_;
  std::map<GenerationKey, Entry> entries_ ABSL_GUARDED_BY(mu_);
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
};

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_PREEMPTION_H_
