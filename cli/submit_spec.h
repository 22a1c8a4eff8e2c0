#ifndef RINGLEADER_CLI_SUBMIT_SPEC_H_
#define RINGLEADER_CLI_SUBMIT_SPEC_H_

// The JobSpec `ringctl submit` sends: the --file spec (if any), the job
// flags over it, WithDefaults, then ValidateJobSpec, so a bad spec is
// rejected, naming its field, before any RPC. Pure apart from reading the
// file; thread-safe.

#include <string>

#include "absl/status/statusor.h"
#include "cli/spec_flags.h"
#include "ringleader/v1/job.pb.h"

namespace ringleader::cli {

// `file` empty: start from an empty spec. Errors are the one-line message of
// an unreadable or unparsable file (starting with its path), or a line for
// each invalid field, with the flag that sets it ("invalid job spec:
// optimizer.learning_rate must be > 0 and finite (got -1) (flag --lr)").
// Every error is a usage error.
absl::StatusOr<v1::JobSpec> BuildSubmitSpec(const std::string& file,
                                            const SpecOverrides& overrides);

}  // namespace ringleader::cli

#endif  // RINGLEADER_CLI_SUBMIT_SPEC_H_
