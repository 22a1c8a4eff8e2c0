#ifndef RINGLEADER_COORDINATOR_WORKER_CALLS_H_
#define RINGLEADER_COORDINATOR_WORKER_CALLS_H_

// A worker's own calls: Register, Heartbeat and Leave. A heartbeat renews
// the worker's lease and is evidence for every verdict about it
// (docs/design-notes.md, "Verdicts after a heal"): the connection it came
// over (HeartbeatConnections), the step and collective wait it reports
// (MemberLiveness, and the finish line through the step hook), the phase it
// is in (StallWatch: whom its peers wait for); its answer is
// the JobAssigner's directive. A process that registers again with its
// previous credential keeps its worker id; a registration that replaces an
// older one of the same process, and a Leave, make the older worker gone.

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "coordinator/caller.h"
#include "coordinator/caller_checks.h"
#include "coordinator/heartbeat_connections.h"
#include "coordinator/hooks.h"
#include "coordinator/job_assigner.h"
#include "coordinator/member_liveness.h"
#include "coordinator/rendezvous.h"
#include "coordinator/stall_watch.h"
#include "coordinator/worker_registry.h"
#include "ringleader/v1/worker_service.pb.h"

namespace ringleader {

// Holds no state of its own. Thread-safe.
class WorkerCalls {
 public:
  struct Hooks {
    WorkerGoneHook gone;
    StepHook step_heard;
  };

  WorkerCalls(const CallerChecks& checks, WorkerRegistry& workers,
              const Rendezvous& rendezvous, MemberLiveness& liveness,
              HeartbeatConnections& connections, JobAssigner& assigner,
              StallWatch& stalls, const Clock* clock, absl::Duration lease,
              Hooks hooks)
      : checks_(checks),
        workers_(workers),
        rendezvous_(rendezvous),
        liveness_(liveness),
        stalls_(stalls),
        connections_(connections),
        assigner_(assigner),
        clock_(clock),
        lease_(lease),
        hooks_(std::move(hooks)) {}

  // Records the caller's certificate identity; a lone credential is the
  // process's previous one (WorkerRegistry::Register).
  absl::StatusOr<v1::RegisterResponse> Register(const Caller& caller,
                                                const v1::RegisterRequest& r);
  absl::StatusOr<v1::HeartbeatResponse> Heartbeat(
      const Caller& caller, const v1::HeartbeatRequest& r);
  absl::Status Leave(const Caller& caller, const v1::LeaveRequest& r);

 private:
  // What heartbeat `r` of `worker` tells the liveness verdicts and the
  // finish line.
  void NoteHeard(const v1::WorkerInfo& worker, const v1::HeartbeatRequest& r);

  const CallerChecks& checks_;
  WorkerRegistry& workers_;
  const Rendezvous& rendezvous_;
  MemberLiveness& liveness_;
  StallWatch& stalls_;
  HeartbeatConnections& connections_;
  JobAssigner& assigner_;
  const Clock* const clock_;
  const absl::Duration lease_;
  const Hooks hooks_;
};

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_WORKER_CALLS_H_
