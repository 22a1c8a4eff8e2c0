// `--help` of the shipped daemons lists every flag they define, one line each
// with its default, in named groups; compared against Abseil's --helpfull,
// which lists every flag with the file that defines it.
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/process.h"

namespace ringleader {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using testing::RunfilePath;
using testing::RunProcess;
using ::testing::StartsWith;

// Abseil's --helpfull exits 1; our --help exits 0.
std::string Run(const std::string& binary, const std::string& flag,
                int expected_exit_code = 0) {
  absl::StatusOr<testing::ProcessResult> r =
      RunProcess({RunfilePath(binary), flag}, absl::Seconds(30));
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return "";
  EXPECT_EQ(r->exit_code, expected_exit_code) << r->err;
  return r->out + r->err;
}

// Flag names that --helpfull attributes to files under `dir`.
std::set<std::string> FlagsDefinedUnder(const std::string& helpfull,
                                        const std::string& dir) {
  std::set<std::string> names;
  bool ours = false;
  for (absl::string_view line : absl::StrSplit(helpfull, '\n')) {
    if (absl::StrContains(line, "Flags from ")) {
      ours = absl::StrContains(line, "Flags from " + dir) ||
             absl::StrContains(line, "Flags from ./" + dir);
    } else if (ours && absl::StartsWith(line, "    --")) {
      line.remove_prefix(6);
      names.emplace(line.substr(0, line.find(' ')));
    }
  }
  return names;
}

void ExpectEveryFlagOnItsLine(const std::string& binary,
                              const std::string& dir) {
  const std::string help = Run(binary, "--help");
  const std::vector<std::string> lines = absl::StrSplit(help, '\n');
  EXPECT_THAT(lines, Contains(StartsWith("Build: ")));
  EXPECT_THAT(help, Not(HasSubstr("No flags matched")));
  EXPECT_THAT(lines, Not(Contains("Other:"))) << "a flag is in no group";
  EXPECT_THAT(help, Not(HasSubstr("(no such flag)")));
  const std::set<std::string> defined =
      FlagsDefinedUnder(Run(binary, "--helpfull", 1), dir);
  ASSERT_THAT(defined, Not(IsEmpty())) << "--helpfull format changed?";
  for (const std::string& name : defined) {
    EXPECT_THAT(lines, Contains(StartsWith("  --" + name + "=")))
        << binary << " --help misses --" << name;
  }
}

TEST(DaemonHelpTest, WorkerListsEveryFlag) {
  ExpectEveryFlagOnItsLine("worker/ringleader-worker", "worker/");
}

TEST(DaemonHelpTest, CoordinatorListsEveryFlag) {
  ExpectEveryFlagOnItsLine("coordinator/ringleader-coordinator",
                           "coordinator/");
}

}  // namespace
}  // namespace ringleader
