#include "coordinator/caller_checks.h"

#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/coordinator_managers.h"
#include "tests/testing/job_specs.h"

namespace ringleader {
namespace {

class CallerChecksTest : public testing::CoordinatorManagersTest {
 protected:
  void SetUp() override {
    CoordinatorManagersTest::SetUp();
    v1::JobSpec spec = testing::MinimalJobSpec("checks", 2, 2);
    spec.set_max_restarts(3);  // An ended generation leaves the job live.
    job_ = Submit(spec);
    members_ = {Register(), Register()};
    gen_ = Form(job_, members_);
    ASSERT_EQ(gen_.number, 1);
  }

  CallerChecks checks_{workers_, rendezvous_, jobs_};
  std::string job_;
  std::vector<Worker> members_;
  Rendezvous::Generation gen_;
};

TEST_F(CallerChecksTest, OnlyAWorkersOwnCredentialActsForIt) {
  const Worker& w = members_[0];
  EXPECT_TRUE(checks_.CheckWorker(w.caller, w.id).ok());
  EXPECT_TRUE(absl::IsUnauthenticated(checks_.CheckWorker(Caller(), w.id)));
  EXPECT_TRUE(absl::IsUnauthenticated(
      checks_.CheckWorker(Caller::Of(w.id, "not-its-token"), w.id)));
  // An unknown worker is NOT_FOUND: it registers again.
  EXPECT_TRUE(absl::IsNotFound(
      checks_.CheckWorker(Caller::Of("gone", "token"), "gone")));
}

TEST_F(CallerChecksTest, ARankIsActedForByItsHolderOnly) {
  const Worker& holder = Holder(members_, gen_, 0);
  const Worker& other = Holder(members_, gen_, 1);
  EXPECT_TRUE(checks_.CheckRank(holder.caller, job_, 1, 0).ok());
  EXPECT_TRUE(
      absl::IsPermissionDenied(checks_.CheckRank(other.caller, job_, 1, 0)));
  EXPECT_TRUE(absl::IsUnauthenticated(checks_.CheckRank(Caller(), job_, 1, 0)));
  // A lone credential that is no worker's is refused as such.
  EXPECT_TRUE(absl::IsUnauthenticated(
      checks_.CheckRank(Caller::Of("nobody", "token"), job_, 1, 0)));
  EXPECT_TRUE(
      absl::IsInvalidArgument(checks_.CheckRank(holder.caller, job_, 1, 2)));
}

TEST_F(CallerChecksTest, AGenerationsCallsComeFromItsMembers) {
  const Worker outsider = Register();
  EXPECT_TRUE(checks_.CheckGeneration(members_[1].caller, job_, 1).ok());
  EXPECT_TRUE(absl::IsPermissionDenied(
      checks_.CheckGeneration(outsider.caller, job_, 1)));
  // A stream shared by several workers needs one member among them.
  Caller shared = outsider.caller;
  ASSERT_TRUE(
      shared.Add(members_[0].id, *members_[0].caller.TokenOf(members_[0].id))
          .ok());
  EXPECT_TRUE(checks_.CheckGeneration(shared, job_, 1).ok());
}

TEST_F(CallerChecksTest, AnEndedGenerationIsAbortedWhoeverAsks) {
  rendezvous_.RemoveWorker(job_, members_[1].id, "test");
  const Worker& holder = Holder(members_, gen_, 0);
  EXPECT_TRUE(absl::IsAborted(checks_.CheckRank(holder.caller, job_, 1, 0)));
  EXPECT_TRUE(absl::IsAborted(checks_.CheckGeneration(Caller(), job_, 1)));
}

TEST_F(CallerChecksTest, AJobWithoutARendezvousIsNamedWithItsState) {
  ASSERT_TRUE(jobs_.Cancel(job_).ok());
  const absl::Status s = checks_.CheckMember(job_, 1, 0);
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_NE(s.message().find("JOB_STATE_CANCELLED"), std::string::npos) << s;
  EXPECT_TRUE(absl::IsNotFound(checks_.CheckMember("no-such-job", 1, 0)));
  EXPECT_TRUE(absl::IsInvalidArgument(checks_.CheckMember("", 1, 0)));
}

}  // namespace
}  // namespace ringleader
