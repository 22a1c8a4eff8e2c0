#ifndef RINGLEADER_COORDINATOR_DASHBOARD_JOB_PAGE_H_
#define RINGLEADER_COORDINATOR_DASHBOARD_JOB_PAGE_H_

// One job's page: its state and the line of whom its ranks wait for, the
// curves (loss, learning rate, gradient norm, samples/s, evaluation
// metrics, per-rank step time and data-wait share), the ranks' latest
// numbers, the generation history and each rank's last log lines. Pure;
// thread-safe.

#include <map>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "coordinator/generation_events.h"
#include "ringleader/v1/history.pb.h"
#include "ringleader/v1/job.pb.h"
#include "ringleader/v1/logs.pb.h"

namespace ringleader::dashboard {

// Log lines shown per rank.
inline constexpr int kLogLinesPerRank = 20;
// Ranks whose lines are shown (the lowest): a page stays small at any
// world size; `ringctl logs --rank N` reads the others.
inline constexpr int kMaxRanksWithLogs = 64;

// What the page shows, read through the same calls `ringctl get`,
// `get --history` and `logs` use.
struct JobPageData {
  v1::Job job;  // GetJob's: waiting_for timed when read.
  v1::JobHistoryResponse history;
  GenerationEvents::Snapshot generations;
  std::map<int32_t, std::vector<v1::LogLine>> logs;  // By rank.
  absl::Time now;
};

std::string RenderJobPage(const JobPageData& data);

}  // namespace ringleader::dashboard

#endif  // RINGLEADER_COORDINATOR_DASHBOARD_JOB_PAGE_H_
