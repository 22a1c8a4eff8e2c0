#include "common/flag_help.h"

#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

ABSL_FLAG(std::string, help_test_name, "", "A string flag, empty default.");
ABSL_FLAG(int, help_test_count, 7, "An int flag.");
ABSL_FLAG(bool, help_test_forgotten, false, "In no group.");

namespace ringleader {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

const std::vector<std::string> kPrefixes = {"tests/common/"};

std::vector<std::string> Lines(const std::string& text) {
  return absl::StrSplit(text, '\n');
}

TEST(FlagHelpTest, OneLinePerFlagWithItsDefaultUnderItsGroup) {
  std::vector<FlagGroup> groups = {
      {"Names", {"help_test_name"}},
      {"Counts", {"help_test_count", "help_test_forgotten"}}};
  std::vector<std::string> lines =
      Lines(FlagHelp("prog: does things", groups, kPrefixes));
  EXPECT_EQ(lines[0], "prog: does things");
  EXPECT_THAT(lines[1], StartsWith("Build: "));
  EXPECT_THAT(lines, Contains("Names:"));
  EXPECT_THAT(lines, Contains("Counts:"));
  EXPECT_THAT(lines, Contains(StartsWith("  --help_test_name=\"\" ")));
  EXPECT_THAT(lines, Contains(StartsWith("  --help_test_count=7 ")));
  EXPECT_THAT(lines, Contains(HasSubstr("An int flag.")));
  EXPECT_THAT(lines, Not(Contains("Other:")));
}

TEST(FlagHelpTest, AFlagInNoGroupIsListedUnderOther) {
  std::vector<FlagGroup> groups = {
      {"Some", {"help_test_name", "help_test_count"}}};
  EXPECT_THAT(UngroupedFlags(groups, kPrefixes),
              ElementsAre("help_test_forgotten"));
  std::vector<std::string> lines = Lines(FlagHelp("u", groups, kPrefixes));
  auto other = std::find(lines.begin(), lines.end(), "Other:");
  ASSERT_NE(other, lines.end());
  EXPECT_THAT(*(other + 1), StartsWith("  --help_test_forgotten=false "));
}

TEST(FlagHelpTest, ALibraryFlagOutsideThePrefixesIsNotOurs) {
  // Abseil's own flags (--flagfile, --help...) are defined under absl/.
  EXPECT_THAT(
      UngroupedFlags({}, kPrefixes),
      ElementsAre("help_test_count", "help_test_forgotten", "help_test_name"));
}

TEST(FlagHelpTest, AListedNameWithoutAFlagSaysSo) {
  std::vector<FlagGroup> groups = {{"G", {"no_such_flag_here"}}};
  EXPECT_THAT(FlagHelp("u", groups, kPrefixes),
              HasSubstr("--no_such_flag_here  (no such flag)"));
}

TEST(FlagHelpTest, WantsHelpOnlyForTheShortHelpFlags) {
  auto wants = [](std::vector<std::string> args) {
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    return WantsFlagHelp(static_cast<int>(argv.size()), argv.data());
  };
  EXPECT_TRUE(wants({"prog", "--help"}));
  EXPECT_TRUE(wants({"prog", "--device=cpu", "-h"}));
  EXPECT_TRUE(wants({"prog", "-helpshort"}));
  EXPECT_FALSE(wants({"prog"}));
  EXPECT_FALSE(wants({"prog", "--helpfull"}));
  EXPECT_FALSE(wants({"prog", "--help=tls"}));
  EXPECT_FALSE(wants({"prog", "--", "--help"}));
}

}  // namespace
}  // namespace ringleader
