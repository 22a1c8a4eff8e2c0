#ifndef RINGLEADER_WORKER_PHASE_REPORT_H_
#define RINGLEADER_WORKER_PHASE_REPORT_H_

// A PhaseClock reading as a heartbeat carries it (HeartbeatRequest fields
// phase, phase_ms, phase_step, phase_bucket, step_time_ms).

#include "ringleader/v1/worker_service.pb.h"
#include "worker/timeline/phase.h"

namespace ringleader {

v1::WorkerPhase ToProto(Phase phase);
void AddPhase(const PhaseClock::Reading& r, v1::HeartbeatRequest& req);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_PHASE_REPORT_H_
