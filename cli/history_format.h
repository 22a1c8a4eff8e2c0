#ifndef RINGLEADER_CLI_HISTORY_FORMAT_H_
#define RINGLEADER_CLI_HISTORY_FORMAT_H_

// `ringctl get JOB --history`: the job's training curves as a table, one
// row per history point (step, epoch, loss, learning rate, gradient norm,
// samples/s) with each per-epoch evaluation as a row of its own after the
// epoch's last point, its metrics in columns of their own; or, with
// --output=json, the GetJobHistory response in the protobuf JSON mapping.
// Pure functions; thread-safe.

#include <string>

#include "ringleader/v1/history.pb.h"

namespace ringleader::cli {

std::string FormatHistoryTable(const v1::JobHistoryResponse& history);

// Indented; the protobuf JSON mapping as `get --output=json` prints a job
// (lowerCamel names, 64-bit integers as strings, zero values omitted).
std::string HistoryJson(const v1::JobHistoryResponse& history);

}  // namespace ringleader::cli

#endif  // RINGLEADER_CLI_HISTORY_FORMAT_H_
