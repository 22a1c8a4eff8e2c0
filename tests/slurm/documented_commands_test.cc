#include "tests/slurm/documented_commands.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ringleader::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kDoc[] = R"(# Title
```sh
not this one
```
## Slurm

Text.

```sh
bazel build //deploy:bin   # the binaries
# a comment line

sbatch -n 2 \
  --export=ALL,X=$PWD/y \
  script JOB # trailing
scancel --signal=TERM JOBID.3
```
```sh
later block
```
)";

TEST(DocumentedCommandsTest, TheBlockUnderTheHeadingJoinedAndWithoutComments) {
  absl::StatusOr<std::vector<std::string>> c =
      ShellBlockUnder(kDoc, "## Slurm");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_THAT(*c, ElementsAre("bazel build //deploy:bin",
                              "sbatch -n 2 --export=ALL,X=$PWD/y script JOB",
                              "scancel --signal=TERM JOBID.3"));
  absl::StatusOr<std::vector<std::string>> s =
      CommandStartingWith(*c, "sbatch ");
  ASSERT_TRUE(s.ok());
  EXPECT_THAT(*s, ElementsAre("sbatch", "-n", "2", "--export=ALL,X=$PWD/y",
                              "script", "JOB"));
}

TEST(DocumentedCommandsTest, WhatIsMissingIsNamed) {
  EXPECT_THAT(ShellBlockUnder(kDoc, "## Kubernetes").status().message(),
              HasSubstr("no heading \"## Kubernetes\""));
  EXPECT_THAT(
      ShellBlockUnder("## Slurm\ntext\n", "## Slurm").status().message(),
      HasSubstr("no ```sh block"));
  EXPECT_THAT(ShellBlockUnder("## Slurm\n```sh\nsbatch\n", "## Slurm")
                  .status()
                  .message(),
              HasSubstr("never ends"));
  EXPECT_THAT(CommandStartingWith({"a b"}, "sbatch ").status().message(),
              HasSubstr("\"sbatch \""));
}

}  // namespace
}  // namespace ringleader::testing
