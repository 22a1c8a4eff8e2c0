#ifndef RINGLEADER_CLI_PROGRESS_FORMAT_H_
#define RINGLEADER_CLI_PROGRESS_FORMAT_H_

// The pieces of `ringctl watch`: the progress bar, the ETA and the one-line
// status drawn per update, which updates get a line in a log, and the summary
// printed when the job ends. Time is passed in, never read. Pure functions
// and value classes; thread-safe except StepRateTracker and LogLinePacer,
// which are thread-compatible.

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <utility>

#include "absl/time/time.h"
#include "ringleader/v1/job.pb.h"

namespace ringleader::cli {

// "[#####-----]" with `width` cells between the brackets; `fraction` is
// clamped to [0, 1] (NaN counts as 0). width < 1 is taken as 1.
std::string ProgressBar(double fraction, int width);

// " 40.0%": the share of `step` in `total` (clamped to [0, 100]), padded to
// six characters so a redrawn line does not jitter.
std::string FormatPercent(int64_t step, int64_t total);

// Optimizer steps per second seen by the watcher, from the first and the
// last of the recent (step, time) observations; observations whose step goes
// backwards (a restart from a checkpoint) start over.
class StepRateTracker {
 public:
  explicit StepRateTracker(size_t window = 20) : window_(window) {}
  void Observe(int64_t step, absl::Time at);
  // 0 until two observations with progress in between, spaced in time.
  double StepsPerSecond() const;

 private:
  size_t window_;
  std::deque<std::pair<int64_t, absl::Time>> seen_;
};

// Which updates of a watched job get a line when the output is a log, not a
// terminal: the coordinator sends one update per rank's report, so printing
// each would give world_size identical lines per step. A line is due when
// the state differs from the last line's (always, so every state shows), or
// when the step does and `min_interval` has passed since the last line, or
// the run passed another quarter of its planned steps (so a job shorter
// than the interval still shows its progress, at most 3 more lines). The
// final summary is not an update and is never held back.
class LogLinePacer {
 public:
  explicit LogLinePacer(absl::Duration min_interval = absl::Seconds(1))
      : min_interval_(min_interval) {}
  // Whether the update `job`, seen at `now`, gets a line; a yes counts as
  // printed. A clock that went back since the last line counts as the
  // interval having passed, so a stepped clock cannot silence the log.
  bool ShouldPrint(const v1::Job& job, absl::Time now);

 private:
  static int QuarterOf(const v1::Job& job);

  absl::Duration min_interval_;
  bool printed_any_ = false;
  int quarter_ = 0;                                 // Of the last line.
  v1::JobState state_ = v1::JOB_STATE_UNSPECIFIED;  // Of the last line.
  int64_t step_ = 0;                                // Of the last line.
  absl::Time printed_at_;
};

// Time left for the job's remaining steps: from the reported samples/s when
// it is known (a step is batch_size x gradient_accumulation_steps x
// world_size samples), else from `observed_steps_per_sec`. nullopt when the
// total is unknown or neither rate is; zero when the steps are done.
std::optional<absl::Duration> EstimateEta(const v1::Job& job,
                                          double observed_steps_per_sec);

// One status line, e.g.
//   RUNNING gen 2 world 4 epoch 3/10 [#####-----]  50.0% 1200/2400
//   loss 0.3412 grad norm 1.234 1534.2 samples/s ETA 1m12s
// (on one line). Parts not known yet are left out; a RESTARTING job shows
// why, as FormatJobMessage does. `max_width` > 0 cuts the
// line to fit a terminal, so a carriage-return redraw stays on one row.
std::string FormatWatchLine(const v1::Job& job,
                            std::optional<absl::Duration> eta,
                            int max_width = 0, int bar_width = 20);

// What `watch` prints when the job is final, one or two lines, each ending
// in "\n" (the job's message as FormatJobMessage shows it):
//   job mnist-3 SUCCEEDED: all ranks finished
//   final train loss 0.2345, test accuracy 91.23%, top5_accuracy 99.80%, ...
// or, for a language model,
//   final train loss 1.2345, test loss 1.310, perplexity 3.706, ...
std::string FormatFinalSummary(const v1::Job& job);

}  // namespace ringleader::cli

#endif  // RINGLEADER_CLI_PROGRESS_FORMAT_H_
