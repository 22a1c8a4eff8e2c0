#ifndef RINGLEADER_CLI_WATCH_COMMAND_H_
#define RINGLEADER_CLI_WATCH_COMMAND_H_

// `ringctl watch JOB`: follows WatchJob until the job is final. On a
// terminal one status line is redrawn in place (a new line is started when
// the state changes, so the history of states stays on screen); otherwise,
// and for pipes and logs, one line per update; with --output=json one JSON
// object per update (NDJSON). Ends with the final state and metrics; exit 0
// when the job SUCCEEDED, 1 when it FAILED or was CANCELLED.

#include <optional>
#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "cli/cli_config.h"
#include "cli/command_status.h"
#include "cli/coordinator_client.h"
#include "cli/progress_format.h"
#include "ringleader/v1/job.pb.h"

namespace ringleader::cli {

// Draws the updates of one watched job and decides the outcome; no I/O but
// `out`, time passed in, so it is tested without a coordinator.
// Thread-compatible.
class WatchPrinter {
 public:
  WatchPrinter(const CliConfig& config, std::ostream& out);

  void OnJob(const v1::Job& job, absl::Time now);

  // Ends the display. `stream_status` is how the stream ended.
  CommandStatus Finish(const std::string& job_id,
                       const absl::Status& stream_status);

 private:
  const CliConfig& config_;
  std::ostream& out_;
  StepRateTracker rate_;
  std::optional<v1::Job> last_;
  bool line_open_ = false;  // A redrawn line without its "\n" yet.
};

CommandStatus RunWatch(const CliConfig& config, CoordinatorClient& client,
                       const std::string& job_id, std::ostream& out);

}  // namespace ringleader::cli

#endif  // RINGLEADER_CLI_WATCH_COMMAND_H_
