#include "tests/slurm/documented_commands.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace ringleader::testing {
namespace {

// `line` without a trailing comment: a '#' at its start or after a blank.
std::string WithoutComment(const std::string& line) {
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '#' && (i == 0 || line[i - 1] == ' ')) {
      return std::string(absl::StripAsciiWhitespace(line.substr(0, i)));
    }
  }
  return std::string(absl::StripAsciiWhitespace(line));
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ShellBlockUnder(
    const std::string& text, const std::string& heading) {
  const std::vector<std::string> lines = absl::StrSplit(text, '\n');
  size_t i = 0;
  while (i < lines.size() && lines[i] != heading) ++i;
  if (i == lines.size()) {
    return absl::NotFoundError(absl::StrCat("no heading \"", heading, "\""));
  }
  while (i < lines.size() && lines[i] != "```sh") ++i;
  if (i == lines.size()) {
    return absl::NotFoundError(
        absl::StrCat("no ```sh block after \"", heading, "\""));
  }
  std::vector<std::string> commands;
  std::string pending;
  for (++i; i < lines.size() && lines[i] != "```"; ++i) {
    std::string line = lines[i];
    const bool continued = absl::EndsWith(line, "\\");
    if (continued) line.pop_back();
    pending = absl::StrCat(
        pending, pending.empty() ? "" : " ",
        continued ? absl::StripAsciiWhitespace(line) : WithoutComment(line));
    if (continued) continue;
    if (!pending.empty()) commands.push_back(pending);
    pending.clear();
  }
  if (i == lines.size()) {
    return absl::NotFoundError(
        absl::StrCat("the ```sh block after \"", heading, "\" never ends"));
  }
  return commands;
}

absl::StatusOr<std::vector<std::string>> CommandStartingWith(
    const std::vector<std::string>& commands, const std::string& prefix) {
  for (const std::string& c : commands) {
    if (absl::StartsWith(c, prefix)) {
      return std::vector<std::string>(
          absl::StrSplit(c, ' ', absl::SkipWhitespace()));
    }
  }
  return absl::NotFoundError(
      absl::StrCat("no documented command starts with \"", prefix, "\""));
}

}  // namespace ringleader::testing
