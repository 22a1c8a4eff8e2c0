#ifndef RINGLEADER_COORDINATOR_GENERATION_EVENTS_H_
#define RINGLEADER_COORDINATOR_GENERATION_EVENTS_H_

// A job's generation history as the coordinator saw it: each generation
// formed (who joined, who left since the last one), ended by a failure,
// resized or preempted, and, for a generation formed after a failure or a
// preemption, how many steps the job lost: the step its ranks had reached
// against the first step the new generation's ranks completed, as their
// heartbeats and reports named them (heartbeats come once a second, so on a
// fast job both are a few steps late and the loss is a lower bound). For
// the dashboard's job page (coordinator/dashboard/).
//
// Memory only, like the job logs (coordinator/log_store.h): a restarted
// coordinator holds the events from its start (a generation it adopted is
// recorded as such). Bounded: the last kMaxGenerationEvents per job, the
// number dropped before them counted.

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace ringleader {

inline constexpr size_t kMaxGenerationEvents = 200;

struct GenerationEvent {
  enum class Kind { kFormed, kAdopted, kEnded, kResized, kPreempted };
  Kind kind = Kind::kFormed;
  absl::Time time;
  int64_t generation = 0;
  // kFormed, kAdopted: the members, "host (worker id)" by rank, and the
  // workers new since the previous generation and those no longer in it.
  std::vector<std::string> members;
  std::vector<std::string> joined;
  std::vector<std::string> left;
  // kEnded, kResized, kPreempted: why; the highest step heard from the
  // generation's ranks (-1: none heard).
  std::string reason;
  int64_t reached_step = -1;
  // kFormed after a kEnded or kPreempted: the steps the job went back by
  // (-1: not known yet, until one of its ranks names its step).
  int64_t steps_lost = -1;
  bool recovery = false;
};

// "formed", "ended", ...
const char* GenerationEventKindName(GenerationEvent::Kind kind);

// Thread-safe; calls nothing.
class GenerationEvents {
 public:
  struct Member {
    std::string worker_id;
    std::string hostname;
  };

  void Formed(const std::string& job_id, int64_t generation,
              const std::vector<Member>& members, absl::Time now,
              bool adopted = false);
  // `kind` is kEnded, kResized or kPreempted.
  void Ended(const std::string& job_id, int64_t generation,
             GenerationEvent::Kind kind, const std::string& reason,
             absl::Time now);
  // A rank of `generation` completed `step` (a heartbeat or a report; 0:
  // none yet).
  void StepHeard(const std::string& job_id, int64_t generation, int64_t step);
  void Forget(const std::string& job_id);

  struct Snapshot {
    std::vector<GenerationEvent> events;  // Oldest first.
    int64_t dropped = 0;                  // Older events no longer kept.
  };
  Snapshot Get(const std::string& job_id) const;

 private:
  struct JobEvents {
    std::deque<GenerationEvent> events;
    int64_t dropped = 0;
    int64_t generation = 0;               // The latest formed.
    int64_t max_step = -1;                // Heard from it.
    std::vector<std::string> worker_ids;  // Its members.
    // A recovery's event waiting for its first step (-1: none).
    int64_t recovery_generation = -1;
    int64_t reached_before = -1;
  };
  static void Push(JobEvents& job, GenerationEvent event);

  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, JobEvents> jobs_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_GENERATION_EVENTS_H_
