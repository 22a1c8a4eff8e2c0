#ifndef RINGLEADER_CLI_JSON_OUTPUT_H_
#define RINGLEADER_CLI_JSON_OUTPUT_H_

// `--output=json`: the protobuf JSON mapping (lowerCamel names, enums by
// name, zero values omitted, 64-bit integers as strings), the same as
// common/job_spec_io's JobToJson, wrapped in an object for lists so the
// output is always one JSON object. Pure functions; thread-safe.

#include <string>
#include <vector>

#include "ringleader/v1/job.pb.h"
#include "ringleader/v1/user_service.pb.h"

namespace ringleader::cli {

// {"job_id": "<id>"}, indented unless `one_line`.
std::string JobIdJson(const std::string& job_id, bool one_line = false);

// One job, indented.
std::string JobJson(const v1::Job& job);

// {"jobs": [...]}, indented; the array is there even when empty.
std::string JobsJson(const std::vector<v1::Job>& jobs);

// {"workers": [...]}, indented; the array is there even when empty.
std::string WorkersJson(const std::vector<v1::WorkerInfo>& workers);

}  // namespace ringleader::cli

#endif  // RINGLEADER_CLI_JSON_OUTPUT_H_
