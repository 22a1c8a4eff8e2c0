#ifndef RINGLEADER_COORDINATOR_DASHBOARD_JOB_CHARTS_H_
#define RINGLEADER_COORDINATOR_DASHBOARD_JOB_CHARTS_H_

// A job's curves from its history (coordinator/job_history.h: at most
// --history_points points, thinned evenly) as SVG charts. Pure;
// thread-safe.

#include <string>

#include "ringleader/v1/history.pb.h"

namespace ringleader::dashboard {

// Loss, learning rate, gradient norm and samples/s over steps; each rank's
// step time and data-wait share over steps.
std::string TrainingCharts(const v1::JobHistoryResponse& history);
// One chart per evaluation metric (accuracy and the task's others) over
// epochs; empty when the job has no evaluation yet.
std::string EvaluationCharts(const v1::JobHistoryResponse& history);

}  // namespace ringleader::dashboard

#endif  // RINGLEADER_COORDINATOR_DASHBOARD_JOB_CHARTS_H_
