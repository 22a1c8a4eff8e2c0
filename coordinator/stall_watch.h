#ifndef RINGLEADER_COORDINATOR_STALL_WATCH_H_
#define RINGLEADER_COORDINATOR_STALL_WATCH_H_

// Which rank holds the others up, named while it happens (issue 36 point
// 2; docs/design-notes.md, "The rank the others wait for"). Every member's
// heartbeat says what it is doing (its phase, how long it has been in it,
// its step and all-reduce bucket), how long it has been blocked in its
// current collective, and its recent step time. When members of a job's
// generation have waited in a collective past the threshold (3x the median
// of the members' step times, at least `floor`), the verdict names the
// rank they wait for:
//   1. a member whose heartbeats stopped (the longest silent): it may be
//      hung or stopped; its last heartbeat says where it was;
//   2. else a member not blocked in a collective: the one at the lowest
//      step, then the longest in its phase (loading data, computing...);
//   3. else (every member blocked) the one blocked the shortest: it
//      entered the collective last.
// The verdict is computed when asked (GetJob) from the reports and the
// time since each; Changes() tells the sweep when a job's verdict appears,
// names another rank or phase, or goes, so that watchers see it without a
// snapshot every sweep.
//
// Keeps the books only; never calls other managers. Thread-safe.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "coordinator/rendezvous.h"
#include "ringleader/v1/job.pb.h"
#include "ringleader/v1/worker_service.pb.h"

namespace ringleader {

class StallWatch {
 public:
  struct Options {
    // The threshold is never below this (coordinator --stall_floor).
    absl::Duration floor = absl::Seconds(1);
    // ... and is this many times the generation's median step time.
    double step_time_factor = 3.0;
    // A member not heard for this long is named as silent ("no heartbeat
    // for"): two heartbeat intervals.
    absl::Duration silent_after = absl::Seconds(2);
  };
  // A job's verdict changed: the new one, or none (the wait ended).
  struct Change {
    std::string job_id;
    std::optional<v1::WaitingFor> waiting_for;
  };

  explicit StallWatch(Options options) : options_(options) {}

  // Generation `gen` of `job_id` formed (or was adopted) at `now`; it
  // replaces the job's previous one. Its members count as heard at `now`.
  void StartGeneration(const std::string& job_id,
                       const Rendezvous::Generation& gen, absl::Time now);
  // The job's generation `number` is over (a newer one is left alone);
  // INT64_MAX: whichever it runs (the job finished).
  void EndGeneration(const std::string& job_id, int64_t number);
  // Heartbeat `r` of a member of generation `r.generation()` of
  // `r.job_id()`, at `now`. Ignored unless that is the member's generation.
  void Heard(const v1::HeartbeatRequest& r, absl::Time now);

  // The job's verdict at `now`: none while no member waited past the
  // threshold.
  std::optional<v1::WaitingFor> Judge(const std::string& job_id,
                                      absl::Time now) const;
  // The jobs whose verdict appeared, went, or changed its rank, its phase,
  // its collective or its step (not its times) since the last call.
  std::vector<Change> Changes(absl::Time now);

  const Options& options() const { return options_; }

 private:
  struct MemberState {
    int32_t rank = -1;
    std::string worker_id;
    std::string host;
    absl::Time heard;  // Its last heartbeat (the generation's start).
    v1::HeartbeatRequest report;  // That heartbeat (empty: none yet).
  };
  struct Generation {
    int64_t number = 0;
    std::vector<MemberState> members;  // By rank.
  };

  std::optional<v1::WaitingFor> JudgeLocked(const Generation& g,
                                            absl::Time now) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // 3x the median step time, at least the floor.
  absl::Duration Threshold(const Generation& g) const;
  // How long `m` has been blocked in its collective at `now` (zero: not
  // blocked, or silent: its wait then says nothing now).
  absl::Duration Blocked(const MemberState& m, absl::Time now) const;
  bool Silent(const MemberState& m, absl::Time now) const {
    return now - m.heard > options_.silent_after;
  }
  // The member the waiters wait for (see the header), or null.
  const MemberState* WaitedFor(const Generation& g, absl::Time now) const;
  // What Changes() compares: the verdict without its times.
  static std::string Identity(const std::optional<v1::WaitingFor>& w);

  const Options options_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Generation> by_job_ ABSL_GUARDED_BY(mu_);
  // Member worker id -> its job.
  absl::flat_hash_map<std::string, std::string> job_of_ ABSL_GUARDED_BY(mu_);
  // What Changes() last published per job (Identity; absent: nothing), kept
  // past a generation's end so that its verdict's end is published too.
  absl::flat_hash_map<std::string, std::string> published_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_STALL_WATCH_H_
