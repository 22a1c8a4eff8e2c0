#ifndef RINGLEADER_COMMON_JOB_SPEC_VALIDATOR_H_
#define RINGLEADER_COMMON_JOB_SPEC_VALIDATOR_H_

// Checks a user's JobSpec before the coordinator accepts it, so a bad spec
// fails at submit time, with a line for each mistake, instead of on every
// worker later.
// The CLI runs the same check locally for a fast answer; the coordinator runs
// it again because it cannot trust clients.
//
// Callers apply WithDefaults first and validate the result:
//   absl::Status s = ValidateJobSpec(WithDefaults(spec));
// The validator also accepts the zero values WithDefaults would replace, so
// validating an undefaulted spec gives the same verdict.
//
// Pure functions; thread-safe.

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "ringleader/v1/job.pb.h"

namespace ringleader {

// OK, or one InvalidArgument whose message has a line per violated rule, in
// field order, each phrased "invalid job spec: <proto.path> <rule> (got
// <value>)" (common/spec_violations.h), e.g.
//   invalid job spec: optimizer.learning_rate must be > 0 and finite (got -1)
//   invalid job spec: epochs must be in [1, 100000] (got -3)
// Every invalid field is reported, each at most once; a rule that relates a
// field to another one that is itself invalid (momentum to an unset
// optimizer.kind) waits until that one is fixed, so a mistake is not echoed
// by the rules built on it. Past a budget the last line only counts the
// rest ("invalid job spec: ... and 9 more"), to fit a gRPC status.
// Every JobSpec field is checked; enum fields also reject numeric values that
// are not in the enum (proto3 parsers keep those). A field that only one
// dataset format, loss or task uses is refused with the others rather than
// ignored. Sizes are bounded (README.md, "paths and sizes"): every path at
// 4096 bytes, every list, and the whole spec at 64 KiB serialized. Paths are
// absolute and normalized; the ones the job writes are not system ones (/,
// /proc, /sys, /dev, /etc). File existence (dataset files, TorchScript file,
// checkpoint_dir, export paths) is not checked: only workers see their file
// systems.
absl::Status ValidateJobSpec(const v1::JobSpec& spec);

// `spec` with zero-valued optional settings replaced by their defaults:
//   progress_every_steps         0 -> 10
//   progress_min_interval_ms     0 -> 100
//   rendezvous_last_call_ms      0 -> 1000
//   rendezvous_timeout_ms        0 -> 600000 (10 minutes)
//   gradient_accumulation_steps  0 -> 1
//   device          UNSPECIFIED -> DEVICE_KIND_CPU
//   task.kind       UNSPECIFIED -> TASK_KIND_CLASSIFICATION (what workers
//                                  take it to mean; shown by `ringctl get`)
//   model.hidden_sizes  empty   -> {256, 128}, only when model.arch is MLP
//   lr_schedule.gamma   0       -> 0.1, only when lr_schedule.kind is STEP
// proto3 cannot tell "unset" from 0, so a spec cannot ask for a last-call
// window of 0 ms; 1 ms is the shortest. Idempotent.
v1::JobSpec WithDefaults(v1::JobSpec spec);

// Absolute and normalized: no empty, "." or ".." component (one trailing
// "/" allowed), no NUL. The rule of every spec path, and of a checkpoint
// path a worker commits (which must also lie under checkpoint_dir).
bool IsCleanAbsolutePath(absl::string_view path);

}  // namespace ringleader

#endif  // RINGLEADER_COMMON_JOB_SPEC_VALIDATOR_H_
