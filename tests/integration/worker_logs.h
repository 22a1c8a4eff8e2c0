#ifndef RINGLEADER_TESTS_INTEGRATION_WORKER_LOGS_H_
#define RINGLEADER_TESTS_INTEGRATION_WORKER_LOGS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace ringleader::testing {

// One "samples generation=G rank=R epoch=E step=S ids=a,b,..." line that a
// worker run with GLOG_v=1 logs per batch.
struct SampleLine {
  int64_t generation = 0, rank = 0, epoch = 0, step = 0;
  std::vector<int64_t> ids;
};

// The complete sample lines of a worker log (a killed process may leave
// half a line at the end).
std::vector<SampleLine> ParseSampleLines(const std::string& log);

// One "resumes from checkpoint ID (path) at epoch E step S offset O" line:
// where a generation resumed.
struct ResumeLine {
  int64_t checkpoint_id = 0, epoch = 0, step = 0, offset = 0;
};

// Every resume line of a worker log, in log order.
std::vector<ResumeLine> ParseResumeLines(const std::string& log);

// The optimizer step of each resume line, in log order.
std::vector<int64_t> ParseResumeSteps(const std::string& log);

// One "plans N optimizer steps at world size W; learning-rate decay horizon
// H" line: what a generation planned when it started.
struct PlanLine {
  int64_t planned_steps = 0, world_size = 0, horizon = 0;
};

// Every plan line of a worker log, in log order.
std::vector<PlanLine> ParsePlanLines(const std::string& log);

}  // namespace ringleader::testing

#endif  // RINGLEADER_TESTS_INTEGRATION_WORKER_LOGS_H_
