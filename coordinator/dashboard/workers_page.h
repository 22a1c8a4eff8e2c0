#ifndef RINGLEADER_COORDINATOR_DASHBOARD_WORKERS_PAGE_H_
#define RINGLEADER_COORDINATOR_DASHBOARD_WORKERS_PAGE_H_

// The registered workers, as `ringctl workers` lists them. Pure;
// thread-safe.

#include <string>

#include "absl/time/time.h"
#include "ringleader/v1/user_service.pb.h"

namespace ringleader::dashboard {

// `now` times each worker's last heartbeat ("1.2 s ago").
std::string RenderWorkersPage(const v1::ListWorkersResponse& workers,
                              absl::Time now);

}  // namespace ringleader::dashboard

#endif  // RINGLEADER_COORDINATOR_DASHBOARD_WORKERS_PAGE_H_
