#ifndef RINGLEADER_CLI_JOB_FORMAT_H_
#define RINGLEADER_CLI_JOB_FORMAT_H_

// Text output of `ringctl get`, `list` and `workers`, and the small pieces
// (state names, durations, step counts) the watch line shares. `now` is
// passed in so ages are testable. Pure functions; thread-safe.

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

bool IsFinalState(v1::JobState state);

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

// "1534.2"; "-" when zero.
std::string FormatSamplesPerSec(double samples_per_sec);

// 1-based "3/10" from the 0-based progress epoch and the spec's epochs;
// "-" before the first step.
std::string FormatEpoch(const v1::Job& job);

// ID, STATE, GEN, WORKERS, EPOCH, STEP/TOTAL, LOSS, SAMPLES/S, RESTARTS.
std::string FormatJobsTable(const std::vector<v1::Job>& jobs);

// `ringctl get`: key/value lines about one job.
std::string FormatJobDetail(const v1::Job& job, absl::Time now);

// ID, HOST, DEVICE, STATE, JOB, LAST HEARTBEAT (an age: "2s ago").
std::string FormatWorkersTable(const std::vector<v1::WorkerInfo>& workers,
                               absl::Time now);

}  // namespace ringleader::cli

#endif  // RINGLEADER_CLI_JOB_FORMAT_H_
