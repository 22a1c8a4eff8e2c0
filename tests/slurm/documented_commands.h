#ifndef RINGLEADER_TESTS_SLURM_DOCUMENTED_COMMANDS_H_
#define RINGLEADER_TESTS_SLURM_DOCUMENTED_COMMANDS_H_

// The commands a document shows, read from it so that a test runs exactly
// them (issue 48: deploy/README.md's Slurm block is what tests/slurm runs).

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace ringleader::testing {

// The commands of the first ```sh block after the line `heading` in the
// markdown `text`: lines ending in a backslash joined to the next, blank
// lines and comments (a '#' first, or after a blank) dropped. NOT_FOUND
// names the heading or the block that is missing.
absl::StatusOr<std::vector<std::string>> ShellBlockUnder(
    const std::string& text, const std::string& heading);

// The first of `commands` that starts with `prefix`, split at blanks (the
// documented commands quote nothing); NOT_FOUND naming `prefix` otherwise.
absl::StatusOr<std::vector<std::string>> CommandStartingWith(
    const std::vector<std::string>& commands, const std::string& prefix);

}  // namespace ringleader::testing

#endif  // RINGLEADER_TESTS_SLURM_DOCUMENTED_COMMANDS_H_
