#ifndef RINGLEADER_COORDINATOR_SERVER_COORDINATOR_METRICS_H_
#define RINGLEADER_COORDINATOR_SERVER_COORDINATOR_METRICS_H_

#include "common/clock.h"
#include "common/metrics.h"
#include "coordinator/coordinator.h"

namespace ringleader {

// Registers the coordinator's metrics on `registry` (README, "Metrics"):
// jobs by state, workers alive and job restarts are read from the managers
// at scrape time; rendezvous and barrier latencies and generations formed
// come from the Rendezvous and BarrierManager latency hooks, timed by
// `clock`. Call before Coordinator::Start. `coordinator` must outlive every
// scrape of `registry`.
void RegisterCoordinatorMetrics(Coordinator* coordinator, Clock* clock,
                                metrics::Registry* registry);

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_SERVER_COORDINATOR_METRICS_H_
