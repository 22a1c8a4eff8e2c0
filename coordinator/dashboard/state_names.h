#ifndef RINGLEADER_COORDINATOR_DASHBOARD_STATE_NAMES_H_
#define RINGLEADER_COORDINATOR_DASHBOARD_STATE_NAMES_H_

// Job and worker states as the pages show them: upper case, as `ringctl`
// does, in a span whose class the style colours. Pure; thread-safe.

#include <string>

#include "ringleader/v1/job.pb.h"
#include "ringleader/v1/user_service.pb.h"

namespace ringleader::dashboard {

// `<span class="state state-running" data-state="RUNNING">RUNNING</span>`
std::string JobStateSpan(v1::JobState state);
// "IDLE", "BUSY", "SILENT".
std::string WorkerStateText(v1::WorkerState state);

}  // namespace ringleader::dashboard

#endif  // RINGLEADER_COORDINATOR_DASHBOARD_STATE_NAMES_H_
