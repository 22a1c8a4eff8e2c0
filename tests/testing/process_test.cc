#include "tests/testing/process.h"

#include <fstream>

#include "gtest/gtest.h"

namespace ringleader::testing {
namespace {

TEST(RunProcessTest, CapturesOutputAndExitCode) {
  absl::StatusOr<ProcessResult> r = RunProcess(
      {"/bin/sh", "-c", "echo out; echo err >&2; exit 3"}, absl::Seconds(10));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_EQ(r->out, "out\n");
  EXPECT_EQ(r->err, "err\n");
  EXPECT_FALSE(r->timed_out);
}

TEST(RunProcessTest, SetsAndRemovesEnvironment) {
  ProcessOptions options;
  options.env = {{"RL_TEST_SET", "yes"}, {"HOME", std::nullopt}};
  absl::StatusOr<ProcessResult> r =
      RunProcess({"/bin/sh", "-c", "echo \"$RL_TEST_SET-${HOME-unset}\""},
                 absl::Seconds(10), options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->out, "yes-unset\n");
}

TEST(RunProcessTest, KillsAtTheTimeout) {
  const absl::Time start = absl::Now();
  absl::StatusOr<ProcessResult> r =
      RunProcess({"/bin/sh", "-c", "exec sleep 30"}, absl::Milliseconds(200));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->timed_out);
  EXPECT_EQ(r->exit_code, 128 + 9);
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
}

TEST(RunProcessTest, MissingBinaryFailsToStart) {
  absl::StatusOr<ProcessResult> r =
      RunProcess({"/no/such/binary"}, absl::Seconds(5));
  // posix_spawn reports exec failure either as an error or as exit 127.
  if (r.ok()) {
    EXPECT_EQ(r->exit_code, 127);
  }
}

TEST(SubprocessTest, StopTerminatesAndWaitReportsExit) {
  const std::string out = TestTempDir() + "/sub.out";
  ProcessOptions options;
  options.stdout_path = out;
  absl::StatusOr<std::unique_ptr<Subprocess>> p = Subprocess::Start(
      {"/bin/sh", "-c", "echo ready; exec sleep 30"}, options);
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_TRUE(WaitForFileContaining(out, "ready", absl::Seconds(10)).ok());
  EXPECT_TRUE((*p)->Running());
  EXPECT_EQ((*p)->Wait(absl::Milliseconds(50)), std::nullopt);
  EXPECT_EQ((*p)->Stop(), 128 + 15);
  EXPECT_FALSE((*p)->Running());
}

TEST(SubprocessTest, WaitForFileFailsFastWhenTheProcessDies) {
  absl::StatusOr<std::unique_ptr<Subprocess>> p =
      Subprocess::Start({"/bin/sh", "-c", "exit 4"});
  ASSERT_TRUE(p.ok()) << p.status();
  const absl::Time start = absl::Now();
  absl::StatusOr<int> port = WaitForPortFile(TestTempDir() + "/never-written",
                                             absl::Seconds(30), p->get());
  EXPECT_EQ(port.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
}

TEST(WaitForPortFileTest, ReadsThePortOrTimesOut) {
  const std::string path = TestTempDir() + "/port";
  std::ofstream(path) << "43210\n";
  EXPECT_EQ(*WaitForPortFile(path, absl::Seconds(1)), 43210);
  EXPECT_EQ(
      WaitForPortFile(path + ".none", absl::Milliseconds(50)).status().code(),
      absl::StatusCode::kDeadlineExceeded);
  std::ofstream(path) << "junk\n";
  EXPECT_EQ(WaitForPortFile(path, absl::Seconds(1)).status().code(),
            absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace ringleader::testing
