#ifndef RINGLEADER_COORDINATOR_RENDEZVOUS_H_
#define RINGLEADER_COORDINATOR_RENDEZVOUS_H_

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
#include "common/clock.h"
#include "common/timer_queue.h"

namespace ringleader {

// Generation-numbered rendezvous per job, after TorchElastic's dynamic
// rendezvous. Workers join; once `min_workers` wait, a last-call window opens
// for late joiners; at `max_workers` (or when the window closes) a generation
// forms: its number increases, ranks are assigned by sorted worker id (the same
// set always gets the same ranks), and every waiter is answered.
//
// A generation ends when a member dies, leaves, or joins again (it restarted):
// survivors are told, through the coordinator, to abort and rejoin. The
// next generation forms the moment every member of the ended one is back
// or removed (the survivors do not wait out a last call for a member known
// gone); a member neither back nor removed is waited for until the last
// call, as newcomers are before the first generation. While a generation
// is live, new joiners wait for the next one; the coordinator ends a
// generation smaller than max_workers for them with Grow() (a membership
// change, not a failure: the resized hook, not the ended one), and the next
// generation then waits for every member of the grown one to rejoin (or be
// removed) before it forms, without a last call.
//
// A round (the time without a live generation, from the first join or the
// end of the last generation) that has not reached min_workers within
// `timeout` fails: the timed-out hook runs and every waiter gets
// DEADLINE_EXCEEDED with the same message.
//
// A generation that trained to its last step is over but for its final
// evaluation and reports: the coordinator marks it (Advance), and from then
// on a member it judges gone no longer ends it (the gone hook runs and the
// generation goes on, so that the others finish; the data plane still ends
// it: a member whose collective failed joins again). Once some member sent
// its final report nothing ends it: a member that joins again is refused
// and counted gone.
//
// A generation being preempted is held (Hold, coordinator/preemption.h):
// until the coordinator ends it with EndHeld, no member gone and no member
// joining again ends it (a member that joins again waits for the next
// generation; one judged gone is counted, and the generation ends as
// preempted once every member is), and no scale-up does. A generation that
// ends preempted runs the preempted hook, not the ended one: no restart is
// spent. After a whole preemption no member is expected back and no round
// timeout runs until a worker joins again.
//
// Waiters are map entries plus timers, never threads. Callbacks and listener
// hooks run without the lock held. Thread-safe; listeners must be set before
// the first Join.
class Rendezvous {
 public:
  struct Member {
    std::string worker_id;
    std::string hostname;
    std::string address;
    int32_t rank = -1;
    // It keeps its training state when its generation ends (it can hand
    // it to a newcomer).
    bool keeps_state = false;
  };
  struct Generation {
    int64_t number = 0;
    std::vector<Member> members;  // Indexed by rank.
  };
  struct Config {
    int32_t min_workers = 1;
    int32_t max_workers = 1;
    absl::Duration last_call = absl::ZeroDuration();
    // How long a round may stay below min_workers (zero: forever).
    absl::Duration timeout = absl::ZeroDuration();
  };
  // By reference: one formed generation is handed to all its members' callbacks
  // without a copy of the member list each (O(n^2) at thousands of workers).
  using JoinCallback = std::function<void(const absl::StatusOr<Generation>&)>;
  using FormedHook = std::function<void(const std::string& job_id,
                                        const Generation& generation)>;
  using EndedHook =
      std::function<void(const std::string& job_id, int64_t generation,
                         const std::string& reason)>;
  // A held generation ended (EndHeld, or every member gone): `whole` when
  // the whole job stopped.
  using PreemptedHook =
      std::function<void(const std::string& job_id, int64_t generation,
                         const std::string& reason, bool whole)>;
  using TimedOutHook =
      std::function<void(const std::string& job_id, const std::string& why)>;
  // How far the live generation got, as the coordinator learned it. Only
  // moves forward.
  enum class Stage {
    kTraining,   // Until every member reached the planned last step.
    kTrained,    // Every member reached it; no final report yet.
    kFinishing,  // Some member sent its final report.
  };
  // A member of a generation at kTrained or later left without its final
  // report: judged gone (RemoveWorker), or, at kFinishing, joined again.
  using GoneHook = std::function<void(
      const std::string& job_id, int64_t generation, int32_t rank,
      const std::string& worker_id, const std::string& reason)>;
  // How long a round took, from its start (the first join, or the end of
  // the previous generation if workers already waited) to the generation
  // formed: for metrics.
  using LatencyHook =
      std::function<void(const std::string& job_id, absl::Duration took)>;

  Rendezvous(Clock* clock, TimerQueue* timers)
      : clock_(clock), timers_(timers) {}

  void SetFormedHook(FormedHook hook) { on_formed_ = std::move(hook); }
  void SetEndedHook(EndedHook hook) { on_ended_ = std::move(hook); }
  // A generation that Grow() ended; the ended hook is not called for it.
  void SetResizedHook(EndedHook hook) { on_resized_ = std::move(hook); }
  void SetPreemptedHook(PreemptedHook hook) { on_preempted_ = std::move(hook); }
  void SetTimedOutHook(TimedOutHook hook) { on_timed_out_ = std::move(hook); }
  void SetLatencyHook(LatencyHook hook) { on_latency_ = std::move(hook); }
  void SetGoneHook(GoneHook hook) { on_gone_ = std::move(hook); }

  // Starts accepting joins for a job. `last_generation` continues numbering
  // (after a coordinator restart) so generation numbers never repeat.
  absl::Status OpenJob(const std::string& job_id, const Config& config,
                       int64_t last_generation);
  // Makes `generation` the job's live one again, without the formed hook: a
  // restarted coordinator adopting the generation its members still run.
  absl::Status RestoreGeneration(const std::string& job_id,
                                 const Generation& generation);
  // Fails pending joins with `status` and forgets the job.
  void CloseJob(const std::string& job_id, const absl::Status& status);

  // Returns the id CancelJoin takes while the join waits (0 if it was
  // answered at once).
  uint64_t Join(const std::string& job_id, const Member& member,
                absl::Time deadline, JoinCallback done);
  // Withdraws a waiting join with CANCELLED (its caller went away), so it no
  // longer counts toward the next generation; a no-op once it was answered.
  void CancelJoin(const std::string& job_id, const std::string& worker_id,
                  uint64_t waiter_id);
  // Ends the live generation of `job_id` if `worker_id` is in it, and drops it
  // from the waiters. Returns true if a generation ended. A generation at
  // kTrained or later goes on: the member is gone (the gone hook runs),
  // and the generation ends only when every member is.
  bool RemoveWorker(const std::string& job_id, const std::string& worker_id,
                    const std::string& reason);
  // Raises live generation `generation` of `job_id` to `stage`; a lower
  // stage, or a generation that is not live, changes nothing.
  void Advance(const std::string& job_id, int64_t generation, Stage stage);
  // The live generation's stage (kTraining when none is live).
  Stage StageOf(const std::string& job_id) const;
  // Whether `worker_id` is a member of the live generation of `job_id`.
  bool IsLiveMember(const std::string& job_id,
                    const std::string& worker_id) const;
  // A member counted gone is back (the same process registered again):
  // its rank in the live generation, or -1 if it was not gone.
  int32_t Returned(const std::string& job_id, const std::string& worker_id);
  // Whether `worker_id` is a member of generation `generation` of `job_id`
  // that the job still counts on: the live generation's member, or, once
  // it ended, a member the next one waits for (not back yet, not removed).
  bool CountsOn(const std::string& job_id, int64_t generation,
                const std::string& worker_id) const;
  // Ends live generation `generation` of `job_id` if it has fewer than
  // max_workers members and workers wait to join: a scale-up. Returns true
  // if it ended (the resized hook has then run).
  bool Grow(const std::string& job_id, int64_t generation);
  // Whether Grow would end generation `generation` now (a commit written in
  // the background is answered with this instead of ending it there).
  bool WantsToGrow(const std::string& job_id, int64_t generation) const;
  // The live generation's number if it would grow now and one of its
  // members keeps its state, so that it loses no work wherever it ends
  // (0 otherwise).
  int64_t GrowableKeepingState(const std::string& job_id) const;

  // Holds live generation `generation` of `job_id` for its preemption
  // (see the class comment); false if it is not live or trained to its
  // last step (kTrained or later: it finishes instead).
  bool Hold(const std::string& job_id, int64_t generation);
  // Whether the job's live generation is held.
  bool IsHeld(const std::string& job_id) const;
  // Ends held generation `generation` (the preempted hook runs): `whole`,
  // nobody is expected back; otherwise the members in `leaving` are not,
  // and the others (waiting already, most of them) form the next one.
  // False if that generation is not live and held.
  bool EndHeld(const std::string& job_id, int64_t generation,
               const std::string& reason, bool whole,
               const std::vector<std::string>& leaving);

  // OK if `generation` is the live generation of `job_id` and `rank` is one of
  // its ranks; ABORTED for an older or ended generation, FAILED_PRECONDITION
  // for one not formed yet, INVALID_ARGUMENT for a generation below 1 (none
  // is ever numbered so) or a rank out of range.
  absl::Status CheckMember(const std::string& job_id, int64_t generation,
                           int32_t rank) const;
  // Why generation `generation` of `job_id` ended, when it is the last one
  // that did ("" otherwise): the hooks that push the end to its members run
  // after the state changed, so a watch that found the generation ended
  // first still tells its member why.
  std::string EndReason(const std::string& job_id, int64_t generation) const;
  // The live generation, NOT_FOUND if none is live.
  absl::StatusOr<Generation> Live(const std::string& job_id) const;
  // The size of generation `generation` and its member at `rank`, without
  // copying the member list; ABORTED unless that generation is live and has
  // that rank.
  struct LiveRank {
    int32_t world_size = 0;
    Member member;
  };
  absl::StatusOr<LiveRank> LiveRankOf(const std::string& job_id,
                                      int64_t generation, int32_t rank) const;
  // The rank `worker_id` holds in live generation `generation`: ABORTED
  // unless that generation is live, NOT_FOUND if the worker is not in it.
  absl::StatusOr<int32_t> LiveRankOfWorker(const std::string& job_id,
                                           int64_t generation,
                                           const std::string& worker_id) const;
  // The highest generation number formed so far (0 if none).
  int64_t LastGeneration(const std::string& job_id) const;
  bool IsWaiting(const std::string& job_id, const std::string& worker_id) const;
  size_t waiter_count() const;
  // Waits until between `lo` and `hi` joins are pending (or `timeout`;
  // false then): a test sees a call's state appear, or freed, without
  // polling.
  bool AwaitWaitersBetween(size_t lo, size_t hi, absl::Duration timeout) const;

 private:
  struct Waiter {
    Member member;
    JoinCallback done;
    TimerQueue::TimerId timer = 0;
    uint64_t id = 0;
  };
  struct JobState {
    Config config;
    Generation live;
    bool live_valid = false;
    bool live_keeps_state = false;   // A member of `live` keeps its state.
    Stage stage = Stage::kTraining;  // Of `live`.
    bool held = false;               // `live` is being preempted.
    // The last generation that ended, and why (EndReason).
    int64_t ended_number = 0;
    std::string ended_reason;
    // Members of `live` gone since it reached kTrained.
    absl::flat_hash_set<std::string> gone;
    // Rank by worker id in `live`.
    absl::flat_hash_map<std::string, int32_t> live_rank;
    absl::flat_hash_map<std::string, Waiter> waiters;  // By worker id.
    TimerQueue::TimerId last_call_timer = 0;
    bool last_call_armed = false;
    // Members of the ended generation that have not joined again nor been
    // removed: the next generation waits for them, until the last call
    // after a failure, without one after a scale-up (`resized`).
    absl::flat_hash_set<std::string> rejoining;
    bool resized = false;
    // From a generation's end to the next one's forming: once every member
    // is back, the next one forms at once.
    bool reforming = false;
    TimerQueue::TimerId round_timer = 0;
    bool round_armed = false;
    // Set when a round timed out: later joins fail with it.
    std::string timed_out;
    // When the current round started (for the latency hook).
    absl::Time round_start;
    bool round_started = false;
  };
  using Completion = std::function<void()>;
  // How a live generation ends: which hook runs.
  enum class EndKind { kFailed, kResized, kPreempted, kPreemptedWhole };

  void SetLiveLocked(JobState& job, const Generation& gen)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Records that live member `worker_id` (rank `rank`) of a generation at
  // kTrained or later is gone; ends the generation when every member is.
  void GoneLocked(const std::string& job_id, JobState& job,
                  const std::string& worker_id, int32_t rank,
                  const std::string& reason, std::vector<Completion>& out)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A member's join while its generation is live: ends it, or, at
  // kFinishing, refuses the join. False when the join was answered.
  bool MemberRejoinsLocked(const std::string& job_id, JobState& job,
                           const Member& member, JoinCallback& done,
                           std::vector<Completion>& out)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void JoinLocked(const std::string& job_id, JobState& job,
                  const Member& member, absl::Time deadline, JoinCallback done,
                  std::vector<Completion>& out)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Forms a generation if the job's waiters allow it now; otherwise arms the
  // last-call timer. Appends what must run after unlocking.
  void MaybeFormLocked(const std::string& job_id, JobState& job,
                       std::vector<Completion>& out)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void FormLocked(const std::string& job_id, JobState& job,
                  std::vector<Completion>& out)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A live generation `generation` with room and workers waiting.
  static bool Growable(const JobState& job, int64_t generation);
  void EndLiveLocked(const std::string& job_id, JobState& job,
                     const std::string& reason, std::vector<Completion>& out,
                     EndKind kind = EndKind::kFailed)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Member `worker_id` of a held generation is gone; ends it (whole) once
  // every member is.
  void HeldGoneLocked(const std::string& job_id, JobState& job,
                      const std::string& worker_id, const std::string& reason,
                      std::vector<Completion>& out)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Starts the round's timeout unless one runs (or a generation is live).
  void ArmRoundLocked(const std::string& job_id, JobState& job)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void OnLastCall(const std::string& job_id);
  void OnRoundTimeout(const std::string& job_id);
  // Removes a waiting join (null if it is not waiting) and disarms the
  // last call if too few wait now; sets how many wait and min_workers.
  JoinCallback WithdrawJoin(const std::string& job_id,
                            const std::string& worker_id, uint64_t waiter_id,
                            int32_t* waiting, int32_t* min);
  void OnJoinTimeout(const std::string& job_id, const std::string& worker_id,
                     uint64_t waiter_id);
  size_t WaitersLocked() const ABSL_SHARED_LOCKS_REQUIRED(mu_);

  Clock* const clock_;
  TimerQueue* const timers_;
  FormedHook on_formed_;
  EndedHook on_ended_;
  EndedHook on_resized_;
  PreemptedHook on_preempted_;
  TimedOutHook on_timed_out_;
  LatencyHook on_latency_;
  GoneHook on_gone_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, JobState> jobs_ ABSL_GUARDED_BY(mu_);
  uint64_t next_waiter_id_ ABSL_GUARDED_BY(mu_) = 1;
};

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_RENDEZVOUS_H_
