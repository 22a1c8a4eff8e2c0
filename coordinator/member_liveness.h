#ifndef RINGLEADER_COORDINATOR_MEMBER_LIVENESS_H_
#define RINGLEADER_COORDINATOR_MEMBER_LIVENESS_H_

// Whether a generation member whose lease lapsed is gone. A lapsed lease
// only says the coordinator stopped hearing the worker; the data plane does
// not need the coordinator, so the verdict weighs two more pieces of
// evidence (docs/design-notes.md, "A lease that lapses is evidence"):
//
// - Every member silent at once: the coordinator suspects its own link, not
//   the workers, and keeps the generation for `silent_generation_limit`.
//   When the first member is heard again, the silence is forgiven: the
//   others get `silent_member_limit` from then to get through.
// - Some members still heard: a silent member whose peers' optimizer steps
//   advance is alive, because no step completes without every rank's
//   gradients. Ranks run in lockstep, so when the generation's highest
//   reported step goes from q (heard at time t) to q + 3, every member took
//   part in a step that began after t: t is a time the silent member was
//   alive. Without such evidence it is gone after `silent_member_limit`.
// - Peers heard and stuck: heartbeats also say how long the rank has been
//   blocked in its current collective. A member silent past its lease
//   whose heard peers all report being blocked for at least `hung_wait`,
//   in reports newer than its last contact, is hung (or cut off from its
//   peers too): no collective of theirs completes without it. It is gone
//   at once, not after `silent_member_limit`.
//
// Keeps the books only; never calls other managers. Thread-safe.

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace ringleader {

class MemberLiveness {
 public:
  struct Options {
    absl::Duration lease = absl::Seconds(3);
    absl::Duration silent_member_limit = absl::Seconds(30);
    absl::Duration silent_generation_limit = absl::Minutes(5);
    // How long a peer must have been blocked in one collective for its
    // report to count against a silent member (longer than any collective
    // waits for a live, slow peer).
    absl::Duration hung_wait = absl::Seconds(1);
  };
  enum class Verdict {
    kNotMember,  // Not in a live generation: its lease decides.
    kKeep,       // Silent, but the evidence says alive (or our link is out).
    kGone,
  };

  explicit MemberLiveness(Options options) : options_(options) {}

  // A generation formed (or was adopted) at `now` with these members; it
  // replaces the job's previous one. Members count as heard at `now`.
  void StartGeneration(const std::string& job_id, int64_t number,
                       const std::vector<std::string>& members, absl::Time now);
  // The job's generation `number` is over (a newer one is left alone).
  void EndGeneration(const std::string& job_id, int64_t number);
  // The member left its generation (it finished or was removed).
  void Forget(const std::string& worker_id);
  // A member was heard at `now`, at optimizer step `step` (0: none yet),
  // blocked in a collective for `collective_wait` (zero: not waiting).
  // Ignored unless `generation` is the member's live one.
  void Heard(const std::string& worker_id, int64_t generation, int64_t step,
             absl::Time now,
             absl::Duration collective_wait = absl::ZeroDuration());
  // `replaced`: a new process took the member's device on its host
  // (WorkerRegistry::KeepSilent). The host reaches us, so our link is not
  // the reason for the silence, and the member is gone unless its peers'
  // steps prove it alive after it was last heard.
  Verdict Judge(const std::string& worker_id, absl::Time now,
                bool replaced = false) const;

  const Options& options() const { return options_; }

 private:
  // The generation's highest step first reached at `time`.
  struct StepMark {
    absl::Time time;
    int64_t step;
  };
  // A member's last report of a collective it was blocked in.
  struct Blocked {
    absl::Time since;     // When it began to wait.
    absl::Time reported;  // When it said so (its last heartbeat).
  };
  struct Generation {
    int64_t number = 0;
    absl::flat_hash_map<std::string, absl::Time> last_heard;
    // The latest of last_heard (kept, not scanned: Heard runs on every
    // heartbeat of every member).
    absl::Time latest = absl::InfinitePast();
    // Members whose last heartbeat said they were blocked.
    absl::flat_hash_map<std::string, Blocked> blocked;
    std::deque<StepMark> marks;  // Increasing steps; only the last few.
  };
  // The latest time every member is known alive from the steps, or
  // InfinitePast.
  static absl::Time StepEvidence(const Generation& g);
  static void AddStep(Generation& g, int64_t step, absl::Time now);
  // Generation::latest from scratch (after a member leaves).
  static absl::Time LatestHeard(const Generation& g);
  // Whether every member but `worker_id` heard within the lease (at least
  // one) reported, after `contact`, being blocked for hung_wait or longer.
  bool PeersStuck(const Generation& g, const std::string& worker_id,
                  absl::Time contact, absl::Time now) const;
  // Every member counts as heard at `now` (when the first one is heard
  // after all went silent).
  static void ExcuseSilence(Generation& g, absl::Time now);

  const Options options_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Generation> generations_
      ABSL_GUARDED_BY(mu_);  // By job id.
  absl::flat_hash_map<std::string, std::string> job_of_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_MEMBER_LIVENESS_H_
