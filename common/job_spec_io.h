#ifndef RINGLEADER_COMMON_JOB_SPEC_IO_H_
#define RINGLEADER_COMMON_JOB_SPEC_IO_H_

// Reading job specs that users write (protobuf text format or JSON) and
// printing jobs as JSON for `ringctl --output=json`. Parsing is strict:
// unknown fields, wrong types and trailing garbage are errors, so a typo never
// silently falls back to a default. Parsing does not validate the values: run
// ValidateJobSpec(WithDefaults(spec)) (common/job_spec_validator.h) next.
//
// Pure functions apart from LoadJobSpecFile's read of one file; thread-safe.

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ringleader/v1/job.pb.h"

namespace ringleader {

enum class JobSpecFormat {
  kTextProto,  // google.protobuf.TextFormat, proto field names.
  kJson,       // Proto3 JSON mapping: lowerCamel or proto field names.
};

// Specs are a few hundred bytes; the cap keeps a wrong path (a dataset, a
// device file) from being read whole.
inline constexpr int64_t kMaxJobSpecFileBytes = 1 << 20;

// Parses `text`. Errors are InvalidArgument: "job spec is empty" for empty or
// all-whitespace input, "line L col C: <parser message>" (1-based) for text
// format, the JSON parser's message for JSON.
absl::StatusOr<v1::JobSpec> ParseJobSpec(absl::string_view text,
                                         JobSpecFormat format);

// Reads and parses the file at `path`, choosing the format by extension
// (case-insensitive): .json is JSON; .textproto, .txtpb, .pbtxt and .txt are
// text format; anything else is InvalidArgument naming the supported
// extensions. Every error message starts with the path. Files over
// kMaxJobSpecFileBytes and non-regular files are rejected; open/read errors
// carry strerror and map errno to a code (ENOENT: NotFound, EACCES:
// PermissionDenied, ...).
absl::StatusOr<v1::JobSpec> LoadJobSpecFile(const std::string& path);

// The format LoadJobSpecFile would use for `path`, or InvalidArgument.
absl::StatusOr<JobSpecFormat> JobSpecFormatForPath(absl::string_view path);

// How the JSON is laid out; the content is the same.
enum class JsonStyle {
  kCompact,  // One line: one message per line in `watch` streams.
  kPretty,   // Indented, for a person reading one object.
};

// Proto3 JSON with lowerCamel field names, enums as names and zero-valued
// fields omitted; parseable by ParseJobSpec(..., kJson). Invalid UTF-8 in a
// string field is dropped by protobuf (which logs it), not an error. These
// messages have no Any, so printing cannot fail; the defensive fallback if it
// ever does is {"error": "<reason>"}, so the output stays JSON.
std::string JobSpecToJson(const v1::JobSpec& spec,
                          JsonStyle style = JsonStyle::kCompact);
std::string JobToJson(const v1::Job& job,
                      JsonStyle style = JsonStyle::kCompact);

}  // namespace ringleader

#endif  // RINGLEADER_COMMON_JOB_SPEC_IO_H_
