// `--help` for the daemons: every flag a user sets, one line each with its
// default, in named groups.
//
// Abseil's own --help lists only flags defined in a file named after the
// program (ringleader-worker.cc), so for our daemons it printed "No flags
// matched"; its --helpfull buries ours among Abseil's internals and wraps each
// flag over several lines. --helpfull stays available for those.
#ifndef RINGLEADER_COMMON_FLAG_HELP_H_
#define RINGLEADER_COMMON_FLAG_HELP_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace ringleader {

struct FlagGroup {
  std::string title;
  std::vector<std::string> flags;  // Flag names, without dashes.
};

// The help text: `usage`, a line saying how the binary was built, then each
// group's flags as "  --name=DEFAULT  help". Flags that a file under one of
// `source_prefixes` defines but no group lists follow under "Other", so a new
// flag is never hidden. A listed name that no flag has is shown as such
// rather than skipped.
std::string FlagHelp(absl::string_view usage,
                     absl::Span<const FlagGroup> groups,
                     absl::Span<const std::string> source_prefixes);

// Flags defined in files under `source_prefixes` that no group lists.
std::vector<std::string> UngroupedFlags(
    absl::Span<const FlagGroup> groups,
    absl::Span<const std::string> source_prefixes);

// Whether argv asks for the short help (--help, -help, -h, --helpshort);
// --helpfull and --help=SUBSTRING are left to Abseil.
bool WantsFlagHelp(int argc, char** argv);

// "optimized (-c opt)" or a warning that the binary is an -O0 build.
std::string BuildModeDescription();

}  // namespace ringleader

#endif  // RINGLEADER_COMMON_FLAG_HELP_H_
