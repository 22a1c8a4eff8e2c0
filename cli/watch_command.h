#ifndef RINGLEADER_CLI_WATCH_COMMAND_H_
#define RINGLEADER_CLI_WATCH_COMMAND_H_

// `ringctl watch JOB`: follows WatchJob until the job is final. On a
// terminal one status line is redrawn in place (a new line is started when
// the state changes, so the history of states stays on screen); otherwise,
// for pipes and logs, a line when the state changes, or when the step does
// and a second has passed since the last line (LogLinePacer), so a log does
// not get a line per rank's report; with --output=json one JSON object per
// update (NDJSON). Ends with the final state and metrics; exit 0 when the
// job SUCCEEDED, 1 when it FAILED or was CANCELLED.
//
// A running rank whose step time exceeds the median over ranks by more than
// the straggler factor is marked on the status line ("STRAGGLER rank 1
// (2.1x)"), with a "straggler: ..." message line when the set of stragglers
// changes; in JSON each object then carries "stragglers": [{rank,
// step_time_ms, median_step_time_ms, ratio}].
//
// Each per-epoch evaluation is printed once, as it is recorded, on a line
// of its own ("evaluated epoch 2: test accuracy 85.50%, loss 0.4012"); the
// final one is the summary's. A job's message shows as FormatJobMessage
// cuts it; JSON carries it whole.
//
// When ranks wait in a collective past the threshold (Job.waiting_for), a
// line says whom they wait for ("waiting 12.3 s in all-reduce of step 4711
// for rank 2 (host h3): data loading for 12.4 s"), once when it appears and
// again only when the rank, its phase, the collective or the step change;
// "the wait for rank 2 ended" when it goes.

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "cli/cli_config.h"
#include "cli/command_status.h"
#include "cli/coordinator_client.h"
#include "cli/progress_format.h"
#include "cli/straggler.h"
#include "ringleader/v1/job.pb.h"

namespace ringleader::cli {

// Draws the updates of one watched job and decides the outcome; no I/O but
// `out`, time passed in, so it is tested without a coordinator.
// Thread-compatible.
class WatchPrinter {
 public:
  WatchPrinter(const CliConfig& config, std::ostream& out,
               double straggler_factor = kDefaultStragglerFactor);

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
  LogLinePacer pacer_;      // Off a terminal only.
  const double straggler_factor_;
  std::vector<int32_t> straggler_ranks_;  // Of the last update.
  int evaluations_shown_ = 0;
  // The waiting-for line's identity last printed ("": none) and its rank.
  std::string wait_shown_;
  int32_t wait_rank_ = -1;

  std::string WaitingMessages(const v1::Job& job);
};

CommandStatus RunWatch(const CliConfig& config, CoordinatorClient& client,
                       const std::string& job_id, std::ostream& out,
                       double straggler_factor = kDefaultStragglerFactor);

}  // namespace ringleader::cli

#endif  // RINGLEADER_CLI_WATCH_COMMAND_H_
