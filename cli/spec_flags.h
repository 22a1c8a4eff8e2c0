#ifndef RINGLEADER_CLI_SPEC_FLAGS_H_
#define RINGLEADER_CLI_SPEC_FLAGS_H_

// `ringctl submit`'s job flags, registered from the table in
// cli/spec_flag_table.h: every settable JobSpec field has one. A flag that
// is given overrides the field (of an empty spec, or of the spec read from
// --file); a flag that is not given leaves the field alone, so the file and
// WithDefaults keep the last word. Parsing the values (ranges of integer
// types, enum names) is CLI11's; the rules are the validator's.
//
// Pure apart from CLI11's registration; thread-compatible.

#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/string_view.h"
#include "cli/spec_field_path.h"
#include "ringleader/v1/job.pb.h"

namespace ringleader::cli {

// The job flags given on the command line.
struct SpecOverrides {
  // Each given flag's value, at its field. Only the fields in `given` count:
  // a proto3 scalar cannot tell "--epochs=0" from no flag.
  v1::JobSpec values;
  // The fields given, each once, in the order first given.
  std::vector<FieldPath> given;
};

// Registers the job flags on `command`; parsing fills `*overrides`, which
// must outlive `command`. The last of repeated flags wins, but a list flag
// (--hidden, --train_inputs, --input_mean, ...) takes comma-separated values
// and, given twice, the values of both. --workers=N sets min_workers and
// max_workers and excludes both flags.
void AddSpecFlags(CLI::App* command, SpecOverrides* overrides);

// Writes every given flag into `*spec`; a list replaces the whole list.
// Sub-messages are created only for the flags given.
void ApplySpecOverrides(const SpecOverrides& overrides, v1::JobSpec* spec);

// The flag that sets a JobSpec field path ("optimizer.learning_rate" ->
// "--lr", "model.hidden_sizes[2]" -> "--hidden"); empty when none does.
std::string FlagForField(absl::string_view field_path);

// A validator message, one line per violation ("invalid job spec: <field>
// ..."), with the flag that sets each line's field appended to it:
// "... (flag --lr)". Other lines are unchanged.
std::string WithFlagHint(absl::string_view validator_message);

}  // namespace ringleader::cli

#endif  // RINGLEADER_CLI_SPEC_FLAGS_H_
