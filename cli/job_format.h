#ifndef RINGLEADER_CLI_JOB_FORMAT_H_
#define RINGLEADER_CLI_JOB_FORMAT_H_

// Text output of `ringctl get`, `list` and `workers`, and the small pieces
// (state names, durations, step counts) the watch line shares. `now` is
// passed in so ages are testable. Pure functions; thread-safe.

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "ringleader/v1/job.pb.h"
#include "ringleader/v1/user_service.pb.h"

namespace ringleader::cli {

// "RUNNING" for JOB_STATE_RUNNING; the number for values the enum lacks.
std::string JobStateName(v1::JobState state);
// "IDLE" for WORKER_STATE_IDLE.
std::string WorkerStateName(v1::WorkerState state);

// A comma-separated list of states, case-insensitive, with or without the
// JOB_STATE_ prefix: "running,pending". InvalidArgument names the bad item
// and the valid names.
absl::StatusOr<std::vector<v1::JobState>> ParseJobStates(
    absl::string_view text);

// Compact, two units at most: "0s", "42s", "3m05s", "2h03m", "3d04h".
// Negative durations show as "0s".
std::string HumanDuration(absl::Duration d);

// "400/1000", "400/?" when the total is unknown, "-" before the first step.
std::string FormatStepTotal(const v1::JobProgress& progress);

// "0.3412"; "-" when there is no loss yet (no step reported).
std::string FormatLoss(const v1::JobProgress& progress);

// The global gradient norm before clipping, 4 significant digits: "1.234",
// "0.0001234"; "-" when none was reported yet (0).
std::string FormatGradNorm(const v1::JobProgress& progress);
// The ranks whose workers joined with the current generation: how long
// each took from its assignment to its first step ("" when none).
std::string FormatJoined(const v1::JobProgress& progress);

// "1534.2"; "-" when zero.
std::string FormatSamplesPerSec(double samples_per_sec);

// 1-based "3/10" from the 0-based progress epoch and the spec's epochs;
// "-" before the first step.
std::string FormatEpoch(const v1::Job& job);

// A job's message (why it failed, restarted, was cancelled) on one readable
// line: its first non-blank line, control characters as spaces, cut to
// `max_bytes` (on a UTF-8 character boundary) with "..." when anything was
// left out. A worker's error can be a whole traceback; the full text stays
// in `ringctl get --output=json`.
std::string FormatJobMessage(absl::string_view message, size_t max_bytes = 300);

// One pooled metric's value: accuracies ("accuracy", "top5_accuracy") as
// percentages, "91.23%"; others with 4 significant digits, "0.2512",
// "3.706", "1.890", and whole numbers from 10^4 on, "50257".
std::string FormatMetricValue(const v1::Metric& metric);

// "test accuracy 91.23%, top5_accuracy 99.80%, loss 0.2512": every metric by
// name in the job's order; a job from before metrics (none) shows
// "test accuracy <legacy_accuracy>".
std::string FormatTestMetrics(
    const google::protobuf::RepeatedPtrField<v1::Metric>& metrics,
    double legacy_accuracy);

// "train loss 0.2345, test accuracy 91.23%, ...": the finished job's result
// (progress.has_final_metrics()).
std::string FormatFinalMetrics(const v1::JobProgress& progress);

// "epoch 2: test accuracy 85.50%, loss 0.4012".
std::string FormatEvaluation(const v1::EpochEvaluation& evaluation);

// ID, STATE, GEN, WORKERS, EPOCH, STEP/TOTAL, LOSS, SAMPLES/S, RESTARTS.
std::string FormatJobsTable(const std::vector<v1::Job>& jobs);

// `ringctl get`: key/value lines about one job, its last evaluations among
// them.
std::string FormatJobDetail(const v1::Job& job, absl::Time now);

// ID, HOST, DEVICE, STATE, JOB, LAST HEARTBEAT (an age: "2s ago").
std::string FormatWorkersTable(const std::vector<v1::WorkerInfo>& workers,
                               absl::Time now);

}  // namespace ringleader::cli

#endif  // RINGLEADER_CLI_JOB_FORMAT_H_
