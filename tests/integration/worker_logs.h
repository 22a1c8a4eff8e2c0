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

// The optimizer step of each "resumes from checkpoint ... step S" line, in
// log order.
std::vector<int64_t> ParseResumeSteps(const std::string& log);

}  // namespace ringleader::testing

#endif  // RINGLEADER_TESTS_INTEGRATION_WORKER_LOGS_H_
