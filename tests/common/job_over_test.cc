#include "common/job_over.h"

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace ringleader {
namespace {

TEST(JobOverTest, TheStateComesBackFromTheRefusal) {
  for (v1::JobState state : {v1::JOB_STATE_SUCCEEDED, v1::JOB_STATE_FAILED,
                             v1::JOB_STATE_CANCELLED}) {
    const absl::Status s = JobOverError("\"job-1\"", state);
    EXPECT_TRUE(absl::IsFailedPrecondition(s));
    EXPECT_EQ(JobOverState(s), state) << s;
  }
}

TEST(JobOverTest, APrefixedMessageStillNamesTheState) {
  const absl::Status s = JobOverError("j", v1::JOB_STATE_SUCCEEDED);
  const absl::Status wrapped = absl::FailedPreconditionError(
      absl::StrCat("join rendezvous: ", s.message()));
  EXPECT_EQ(JobOverState(wrapped), v1::JOB_STATE_SUCCEEDED);
}

TEST(JobOverTest, OtherRefusalsNameNoState) {
  EXPECT_EQ(JobOverState(absl::OkStatus()), std::nullopt);
  // The same words under another code are not this refusal.
  EXPECT_EQ(JobOverState(absl::AbortedError("job j is JOB_STATE_SUCCEEDED")),
            std::nullopt);
  EXPECT_EQ(JobOverState(absl::FailedPreconditionError(
                "job j is JOB_STATE_NOT_A_STATE")),
            std::nullopt);
  EXPECT_EQ(JobOverState(absl::FailedPreconditionError("it is JOB_STATE_")),
            std::nullopt);
  EXPECT_EQ(
      JobOverState(absl::FailedPreconditionError("worker w is not a member")),
      std::nullopt);
}

// Over: the three states a job never leaves; every other state is not.
TEST(JobOverTest, OnlySucceededFailedAndCancelledAreOver) {
  EXPECT_TRUE(IsJobOver(v1::JOB_STATE_SUCCEEDED));
  EXPECT_TRUE(IsJobOver(v1::JOB_STATE_FAILED));
  EXPECT_TRUE(IsJobOver(v1::JOB_STATE_CANCELLED));
  for (v1::JobState s : {v1::JOB_STATE_UNSPECIFIED, v1::JOB_STATE_PENDING,
                         v1::JOB_STATE_RENDEZVOUS, v1::JOB_STATE_RUNNING,
                         v1::JOB_STATE_RESTARTING, v1::JOB_STATE_PREEMPTED}) {
    EXPECT_FALSE(IsJobOver(s)) << v1::JobState_Name(s);
  }
}

}  // namespace
}  // namespace ringleader
