// The range checks of progress reports and commits (coordinator/
// report_checks.h): honest numbers pass, up to the bounds an honest worker
// can reach; what no worker sends is INVALID_ARGUMENT naming the field.
#include "coordinator/report_checks.h"

#include <cmath>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tests/testing/job_specs.h"

namespace ringleader {
namespace {

// MinimalJobSpec: 100 synthetic training samples, batches of 10.
constexpr int64_t kTrainSize = 100;

v1::JobSpec Spec() {
  v1::JobSpec spec = testing::MinimalJobSpec("checked", 1, 4);
  spec.set_epochs(2);
  spec.set_checkpoint_dir("/ckpt/job");
  return spec;
}

v1::ReportProgressRequest Report(int64_t epoch, int64_t step) {
  v1::ReportProgressRequest r;
  r.set_generation(1);
  r.set_epoch(epoch);
  r.set_step(step);
  r.set_total_steps(20);
  r.set_step_time_ms(12.5);
  r.set_grad_norm(0.75);
  return r;
}

v1::CommitCheckpointRequest Commit(const std::string& path, int64_t step) {
  v1::CommitCheckpointRequest c;
  c.set_generation(1);
  c.set_epoch(1);
  c.set_step(step);
  c.set_epoch_sample_offset(40);
  c.set_path(path);
  return c;
}

::testing::AssertionResult Refused(const absl::Status& s,
                                   absl::string_view field) {
  if (absl::IsInvalidArgument(s) && absl::StrContains(s.message(), field)) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << s << "; want INVALID_ARGUMENT naming " << field;
}

TEST(ReportChecksTest, TheStepBoundIsEveryEpochAtWorldOnePlusSlack) {
  // (100 / 10 + 1 + generation 1) x 2 epochs.
  EXPECT_EQ(MaxJobSteps(Spec(), kTrainSize, 1), 24);
  EXPECT_EQ(MaxJobSteps(Spec(), -1, 1), kMaxStepsUnknownSize);
  EXPECT_TRUE(CheckProgressNumbers(Spec(), kTrainSize, Report(2, 24)).ok());
  EXPECT_TRUE(Refused(CheckProgressNumbers(Spec(), kTrainSize, Report(2, 25)),
                      "step must be in [0, 24]"));
  EXPECT_TRUE(Refused(CheckProgressNumbers(Spec(), kTrainSize, Report(3, 1)),
                      "epoch must be in [0, 2]"));
  // Before the size is known, only absurd steps are refused.
  EXPECT_TRUE(CheckProgressNumbers(Spec(), -1, Report(1, 1'000'000)).ok());
  EXPECT_TRUE(
      Refused(CheckProgressNumbers(
                  Spec(), -1, Report(1, std::numeric_limits<int64_t>::max())),
              "step must be in"));
}

// A worker never reports a non-finite gradient norm: its trainer fails the
// job instead ("the gradient norm is nan at step N", a fatal report that
// carries no norm; tests/integration/job_errors_test). So one in a report
// is refused rather than averaged into the job's progress, where one NaN
// would hide every other rank's norm.
TEST(ReportChecksTest, NonFiniteGradNormsAndTimesAreRefused) {
  v1::ReportProgressRequest r = Report(1, 5);
  r.set_grad_norm(0);  // None measured yet.
  EXPECT_TRUE(CheckProgressNumbers(Spec(), kTrainSize, r).ok());
  for (double bad :
       {std::nan(""), std::numeric_limits<double>::infinity(), -1.0}) {
    r.set_grad_norm(bad);
    EXPECT_TRUE(Refused(CheckProgressNumbers(Spec(), kTrainSize, r),
                        "grad_norm must be finite and >= 0"))
        << bad;
  }
  r = Report(1, 5);
  r.set_step_time_ms(std::numeric_limits<double>::infinity());
  EXPECT_TRUE(Refused(CheckProgressNumbers(Spec(), kTrainSize, r),
                      "step_time_ms must be finite"));
  r = Report(1, 5);
  r.set_final_train_loss(-0.5);  // A loss may be negative, not NaN.
  EXPECT_TRUE(CheckProgressNumbers(Spec(), kTrainSize, r).ok());
  r.set_final_train_loss(std::nan(""));
  EXPECT_TRUE(Refused(CheckProgressNumbers(Spec(), kTrainSize, r),
                      "final_train_loss must be finite"));
}

TEST(ReportChecksTest, CommitsLieInsideTheCheckpointDir) {
  EXPECT_TRUE(
      CheckCommitNumbers(Spec(), kTrainSize, Commit("/ckpt/job/s10.ckpt", 10))
          .ok());
  for (const char* path :
       {"/ckpt/job/", "/ckpt/jobs/s10.ckpt", "/ckpt/job/../other/s10.ckpt",
        "ckpt/job/s10.ckpt", "/etc/passwd"}) {
    EXPECT_TRUE(Refused(
        CheckCommitNumbers(Spec(), kTrainSize, Commit(path, 10)), "path"))
        << path;
  }
  EXPECT_TRUE(Refused(
      CheckCommitNumbers(Spec(), kTrainSize, Commit("/ckpt/job/s.ckpt", 25)),
      "step must be in [0, 24]"));
  v1::CommitCheckpointRequest past = Commit("/ckpt/job/s.ckpt", 10);
  past.set_epoch_sample_offset(kTrainSize + 1);
  EXPECT_TRUE(Refused(CheckCommitNumbers(Spec(), kTrainSize, past),
                      "epoch_sample_offset must be in [0, 100]"));
  v1::JobSpec no_dir = Spec();
  no_dir.clear_checkpoint_dir();
  EXPECT_TRUE(absl::IsFailedPrecondition(
      CheckCommitNumbers(no_dir, kTrainSize, Commit("/ckpt/job/s.ckpt", 10))));
}

TEST(ReportChecksTest, AJoinTimeIsAtMostAWeek) {
  v1::ReportProgressRequest r = Report(1, 5);
  r.set_join_to_first_step_ms(2500);
  EXPECT_TRUE(CheckProgressNumbers(Spec(), kTrainSize, r).ok());
  for (int64_t bad : {int64_t{-1}, int64_t{8} * 24 * 3600 * 1000}) {
    r.set_join_to_first_step_ms(bad);
    EXPECT_TRUE(Refused(CheckProgressNumbers(Spec(), kTrainSize, r),
                        "join_to_first_step_ms"))
        << bad;
  }
}

}  // namespace
}  // namespace ringleader
