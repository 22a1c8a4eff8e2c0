#include "coordinator/user_calls.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/coordinator_managers.h"
#include "tests/testing/job_specs.h"

namespace ringleader {
namespace {

class UserCallsTest : public testing::CoordinatorManagersTest {
 protected:
  absl::StatusOr<std::string> SubmitCall(const std::string& name) {
    v1::SubmitJobRequest r;
    *r.mutable_spec() = testing::MinimalJobSpec(name, 1, 1);
    absl::StatusOr<v1::SubmitJobResponse> out = calls_.SubmitJob(r);
    if (!out.ok()) return out.status();
    return out->job_id();
  }

  absl::Status open_status_;
  std::vector<std::string> opened_;
  UserCalls calls_{jobs_, workers_, [this](const v1::Job& job) {
                     opened_.push_back(job.job_id());
                     return open_status_;
                   }};
};

TEST_F(UserCallsTest, ASubmittedJobIsOpened) {
  absl::StatusOr<std::string> id = SubmitCall("opened");
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(opened_, std::vector<std::string>{*id});
  v1::GetJobRequest get;
  get.set_job_id(*id);
  EXPECT_EQ(calls_.GetJob(get)->state(), v1::JOB_STATE_PENDING);
}

TEST_F(UserCallsTest, AJobThatCannotOpenFailsWithTheReason) {
  open_status_ = absl::InvalidArgumentError("no such rendezvous");
  absl::StatusOr<std::string> id = SubmitCall("refused");
  EXPECT_TRUE(absl::IsInvalidArgument(id.status()));
  ASSERT_EQ(opened_.size(), 1u);
  EXPECT_EQ(Job(opened_[0]).state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(Job(opened_[0]).message(), "no such rendezvous");
}

TEST_F(UserCallsTest, JobsAreListedByStateAndCancelledAndDeleted) {
  const std::string first = *SubmitCall("first");
  const std::string second = *SubmitCall("second");
  v1::CancelJobRequest cancel;
  cancel.set_job_id(first);
  EXPECT_EQ(calls_.CancelJob(cancel)->state(), v1::JOB_STATE_CANCELLED);
  v1::ListJobsRequest list;
  list.add_states(v1::JOB_STATE_PENDING);
  absl::StatusOr<v1::ListJobsResponse> pending = calls_.ListJobs(list);
  ASSERT_TRUE(pending.ok()) << pending.status();
  ASSERT_EQ(pending->jobs_size(), 1);
  EXPECT_EQ(pending->jobs(0).job_id(), second);
  list.mutable_states()->Add(999);  // No such state.
  EXPECT_TRUE(absl::IsInvalidArgument(calls_.ListJobs(list).status()));
  v1::DeleteJobRequest del;
  del.set_job_id(second);
  EXPECT_TRUE(absl::IsFailedPrecondition(calls_.DeleteJob(del).status()));
  del.set_job_id(first);
  EXPECT_TRUE(calls_.DeleteJob(del).ok());
  EXPECT_TRUE(absl::IsNotFound(jobs_.Get(first).status()));
}

TEST_F(UserCallsTest, AnEmptyJobIdIsInvalid) {
  EXPECT_TRUE(absl::IsInvalidArgument(calls_.GetJob({}).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(calls_.CancelJob({}).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(calls_.DeleteJob({}).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(
      calls_.WatchJob("", [](const v1::Job&, uint64_t) {}).status()));
}

TEST_F(UserCallsTest, AWatcherSeesEveryChangeUntilUnwatched) {
  const std::string id = *SubmitCall("watched");
  std::vector<v1::JobState> seen;
  absl::StatusOr<uint64_t> token = calls_.WatchJob(
      id, [&](const v1::Job& job, uint64_t) { seen.push_back(job.state()); });
  ASSERT_TRUE(token.ok());
  v1::CancelJobRequest cancel;
  cancel.set_job_id(id);
  ASSERT_TRUE(calls_.CancelJob(cancel).ok());
  calls_.UnwatchJob(id, *token);
  EXPECT_EQ(seen, (std::vector<v1::JobState>{v1::JOB_STATE_PENDING,
                                             v1::JOB_STATE_CANCELLED}));
}

TEST_F(UserCallsTest, TheRegisteredWorkersAreListed) {
  const Worker a = Register(), b = Register();
  const v1::ListWorkersResponse out = calls_.ListWorkers();
  ASSERT_EQ(out.workers_size(), 2);
}

}  // namespace
}  // namespace ringleader
