#ifndef RINGLEADER_CLI_LOGS_COMMAND_H_
#define RINGLEADER_CLI_LOGS_COMMAND_H_

// `ringctl logs JOB [--rank N] [--since D] [--tail N] [--follow]`: the lines
// the job's workers logged while serving it, collected by the coordinator
// (UserService.GetJobLogs), in time order across ranks, each prefixed with
// its rank, generation and host as torchrun prefixes its ranks' lines:
//   [rank 1 gen 2 host-b] I1206 16:10:11.123 epoch 1 step 40 ...
// With --output=json, one JSON object per line (NDJSON). --follow asks again
// twice a second for the lines that arrived since, across a coordinator
// restart (whose log starts afresh), and ends a little after the job does
// (its ranks' last lines arrive after its final state).

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "absl/time/time.h"
#include "cli/cli_config.h"
#include "cli/command_status.h"
#include "cli/coordinator_client.h"
#include "ringleader/v1/logs.pb.h"

namespace ringleader::cli {

struct LogsOptions {
  std::optional<int32_t> rank;                  // Unset: every rank.
  absl::Duration since = absl::ZeroDuration();  // 0: every line kept.
  int32_t tail = 0;                             // 0: every line.
  bool follow = false;
  // Follow: how often to ask; how long to go on after the job ended; how
  // long the coordinator may be unreachable before giving up.
  absl::Duration poll = absl::Milliseconds(500);
  absl::Duration linger = absl::Seconds(3);
  absl::Duration outage = absl::Seconds(60);
};

// One line as text, without its newline.
std::string FormatLogLine(const v1::LogLine& line);

CommandStatus RunLogs(const CliConfig& config, CoordinatorClient& client,
                      const std::string& job_id, const LogsOptions& options,
                      std::ostream& out);

}  // namespace ringleader::cli

#endif  // RINGLEADER_CLI_LOGS_COMMAND_H_
