#ifndef RINGLEADER_COORDINATOR_PREEMPT_CALLS_H_
#define RINGLEADER_COORDINATOR_PREEMPT_CALLS_H_

// WorkerService.Preempt: a member signalled to stop says so after its last
// completed step and waits for its generation's verdict (coordinator/
// preemption.h); rank 0 says again when its checkpoint is committed. Checked
// against the worker holding the rank, as the other rank calls are.

#include "coordinator/caller.h"
#include "coordinator/caller_checks.h"
#include "coordinator/preemption.h"
#include "coordinator/rendezvous.h"
#include "coordinator/waits.h"
#include "ringleader/v1/worker_service.pb.h"

namespace ringleader {

// Holds no state of its own. Thread-safe.
class PreemptCalls {
 public:
  PreemptCalls(const CallerChecks& checks, const Rendezvous& rendezvous,
               Preemption& preemption)
      : checks_(checks), rendezvous_(rendezvous), preemption_(preemption) {}

  // FAILED_PRECONDITION for a generation that trained to its last step (its
  // members finish instead) or a `finished` call without a WHOLE verdict.
  Canceller Preempt(const Caller& caller, const v1::PreemptRequest& r,
                    Reply<v1::PreemptResponse> done);

 private:
  const CallerChecks& checks_;
  const Rendezvous& rendezvous_;
  Preemption& preemption_;
};

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_PREEMPT_CALLS_H_
