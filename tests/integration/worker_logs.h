#ifndef RINGLEADER_TESTS_INTEGRATION_WORKER_LOGS_H_
#define RINGLEADER_TESTS_INTEGRATION_WORKER_LOGS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace ringleader::testing {

// One "samples generation=G rank=R epoch=E step=S ids=a,b,..." line that a
// worker run with GLOG_v=1 logs per batch.
struct SampleLine {
  int64_t generation = 0, rank = 0, epoch = 0, step = 0;
  std::vector<int64_t> ids;
  // When it was logged (InfinitePast if the line has no glog prefix).
  absl::Time time = absl::InfinitePast();
};

// When a glog line ("I20261204 09:10:54.275192 123 file.cc:1] ...") was
// logged, read in the local time zone as glog writes it; nullopt for a line
// without that prefix.
std::optional<absl::Time> GlogTime(const std::string& line);

// The complete sample lines of a worker log (a killed process may leave
// half a line at the end).
std::vector<SampleLine> ParseSampleLines(const std::string& log);

// One "resumes from checkpoint ID (path) at epoch E step S offset O" line:
// where a generation resumed.
struct ResumeLine {
  int64_t checkpoint_id = 0, epoch = 0, step = 0, offset = 0;
  // Recovered from a peer's memory (checkpoint_id 0), not from a file.
  bool from_memory = false;
};

// Every resume line of a worker log, in log order: "resumes from checkpoint
// ..." and "recovers from rank R's memory ...".
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

// One "generation G: rank R of W" line: the rank a worker took in a
// generation it joined.
struct RankLine {
  int64_t generation = 0, rank = 0, world_size = 0;
};

// Every rank line of a worker log, in log order.
std::vector<RankLine> ParseRankLines(const std::string& log);

}  // namespace ringleader::testing

#endif  // RINGLEADER_TESTS_INTEGRATION_WORKER_LOGS_H_
