#ifndef RINGLEADER_CLI_SPEC_FLAG_TABLE_H_
#define RINGLEADER_CLI_SPEC_FLAG_TABLE_H_

// The job flags of `ringctl submit`, one row per settable JobSpec field:
// the flag, the field it sets, its --help group and its help. Registering
// the flags, --help, the validator hints ("(flag --lr)") and applying the
// values (by reflection, typed by the field) all read this table, so a new
// JobSpec field costs one row. A field that deliberately has no flag is
// listed in FileOnlySpecFields with the reason; tests/cli fails on a field
// in neither.
//
// Plain data, so a test or a tool can list it; thread-safe.

#include <string>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace ringleader::cli {

struct SpecFlag {
  // The flag as typed: "--lr".
  absl::string_view flag;
  // The JobSpec field it sets, by path: "optimizer.learning_rate". Its type
  // is the flag's: bool fields are switches ("--resume", "--resume=false"),
  // enum fields take the value's lower-case name (common/enum_names.h),
  // repeated fields a comma-separated list that replaces the list. Several
  // paths, comma separated, make a shorthand that sets each to one value
  // (--workers) and excludes the flags of those fields.
  absl::string_view field;
  // The --help heading it is listed under; the table's order is --help's.
  absl::string_view group;
  absl::string_view help;
  // Optional, bool flags: a second flag that sets the field false.
  absl::string_view negation = {};
  // Optional, enum flags: values the flag spells its own way, as
  // "flag_name=descriptor_name" pairs, comma separated ("bf16=bf16_mixed").
  absl::string_view spellings = {};
  // Optional: a sub-message the validator may name whole (the NPY split of
  // another format) and whose hint is this flag, the one that starts it.
  absl::string_view starts = {};
};

// A JobSpec field (or whole sub-message) that only a spec file sets.
struct FileOnlyField {
  absl::string_view field;
  absl::string_view reason;
};

absl::Span<const SpecFlag> SpecFlagTable();

// The name `row`'s flag takes for the enum value named `name` (as
// common/enum_names.h names it): its spelling if it has one, else `name`.
std::string FlagValueName(const SpecFlag& row, absl::string_view name);

absl::Span<const FileOnlyField> FileOnlySpecFields();

}  // namespace ringleader::cli

#endif  // RINGLEADER_CLI_SPEC_FLAG_TABLE_H_
