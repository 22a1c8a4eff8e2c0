#include "worker/phase_report.h"

namespace ringleader {
namespace {

// Phase is kept proto-free below the trainer (worker/timeline); its numbers
// are the wire's.
constexpr bool Same(Phase p, v1::WorkerPhase w) {
  return static_cast<int>(p) == static_cast<int>(w);
}
static_assert(Same(Phase::kUnspecified, v1::WORKER_PHASE_UNSPECIFIED));
static_assert(Same(Phase::kIdle, v1::WORKER_PHASE_IDLE));
static_assert(Same(Phase::kRendezvous, v1::WORKER_PHASE_RENDEZVOUS));
static_assert(Same(Phase::kDataLoading, v1::WORKER_PHASE_DATA_LOADING));
static_assert(Same(Phase::kForward, v1::WORKER_PHASE_FORWARD));
static_assert(Same(Phase::kBackward, v1::WORKER_PHASE_BACKWARD));
static_assert(Same(Phase::kAllReduceWait, v1::WORKER_PHASE_ALLREDUCE_WAIT));
static_assert(Same(Phase::kBufferSync, v1::WORKER_PHASE_BUFFER_SYNC));
static_assert(Same(Phase::kOptimizer, v1::WORKER_PHASE_OPTIMIZER));
static_assert(Same(Phase::kCheckpoint, v1::WORKER_PHASE_CHECKPOINT));
static_assert(Same(Phase::kRecovery, v1::WORKER_PHASE_RECOVERY));
static_assert(Same(Phase::kEvaluation, v1::WORKER_PHASE_EVALUATION));

}  // namespace

v1::WorkerPhase ToProto(Phase phase) {
  const int n = static_cast<int>(phase);
  return v1::WorkerPhase_IsValid(n) ? static_cast<v1::WorkerPhase>(n)
                                    : v1::WORKER_PHASE_UNSPECIFIED;
}

void AddPhase(const PhaseClock::Reading& r, v1::HeartbeatRequest& req) {
  req.set_phase(ToProto(r.phase));
  req.set_phase_ms(r.in_phase_ms);
  req.set_phase_step(r.step);
  req.set_phase_bucket(r.bucket >= 0 ? r.bucket : 0);
  req.set_step_time_ms(r.step_time_ms);
}

}  // namespace ringleader
