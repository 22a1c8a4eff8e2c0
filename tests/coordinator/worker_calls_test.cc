#include "coordinator/worker_calls.h"

#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/coordinator_managers.h"
#include "tests/testing/job_specs.h"

namespace ringleader {
namespace {

class WorkerCallsTest : public testing::CoordinatorManagersTest {
 protected:
  v1::RegisterRequest Process(int pid) {
    v1::RegisterRequest r;
    r.set_hostname("host");
    r.set_pid(pid);
    r.set_device("cpu");
    return r;
  }

  absl::StatusOr<v1::HeartbeatResponse> Beat(const Caller& caller,
                                             const std::string& worker_id,
                                             const std::string& job_id = "",
                                             int64_t generation = 0,
                                             int64_t step = 0) {
    v1::HeartbeatRequest r;
    r.set_worker_id(worker_id);
    r.set_job_id(job_id);
    r.set_generation(generation);
    r.set_step(step);
    return calls_.Heartbeat(caller, r);
  }

  CallerChecks checks_{workers_, rendezvous_, jobs_};
  MemberLiveness liveness_{{kLease}};
  HeartbeatConnections connections_;
  JobAssigner assigner_{workers_, jobs_, rendezvous_};
  StallWatch stalls_{StallWatch::Options()};
  std::vector<std::pair<std::string, std::string>> gone_;
  std::vector<int64_t> steps_;
  WorkerCalls calls_{
      checks_,
      workers_,
      rendezvous_,
      liveness_,
      connections_,
      assigner_,
      stalls_,
      &clock_,
      kLease,
      {[this](const v1::WorkerInfo& w, const std::string& why) {
         gone_.emplace_back(w.worker_id(), why);
       },
       [this](const std::string&, int64_t, const std::string&, int64_t step,
              int64_t) { steps_.push_back(step); }}};
};

TEST_F(WorkerCallsTest, ARegisteredWorkersHeartbeatRenewsItsLeaseAndAssigns) {
  const std::string job = Submit(testing::MinimalJobSpec("beat", 1, 1));
  absl::StatusOr<v1::RegisterResponse> reg =
      calls_.Register(Caller(), Process(1));
  ASSERT_TRUE(reg.ok()) << reg.status();
  const Caller caller = Caller::Of(reg->worker_id(), reg->worker_token());
  absl::StatusOr<v1::HeartbeatResponse> out = Beat(caller, reg->worker_id());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->lease_ms(), absl::ToInt64Milliseconds(kLease));
  EXPECT_EQ(out->assignment().job_id(), job);
  EXPECT_TRUE(
      absl::IsUnauthenticated(Beat(Caller(), reg->worker_id()).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(Beat(caller, "").status()));
  EXPECT_TRUE(
      absl::IsInvalidArgument(Beat(caller, reg->worker_id(), "", -1).status()));
}

TEST_F(WorkerCallsTest, AMembersHeartbeatIsEvidence) {
  const std::string job = Submit(testing::MinimalJobSpec("evidence", 1, 1));
  const Worker a = Register();
  Form(job, {a});
  liveness_.StartGeneration(job, 1, {a.id}, clock_.Now());
  Caller over = a.caller;
  over.peer_address = "ipv4:10.0.0.1:5000";
  ASSERT_TRUE(Beat(over, a.id, job, 1, 42).ok());
  EXPECT_EQ(steps_, std::vector<int64_t>{42});
  EXPECT_TRUE(
      connections_.OnlyOver(a.id, over.peer_address, clock_.Now(), kLease));
  // Idle (its part done) it is heard, but reports no step.
  ASSERT_TRUE(Beat(over, a.id).ok());
  EXPECT_EQ(steps_, std::vector<int64_t>{42});
}

TEST_F(WorkerCallsTest, TheSameProcessKeepsItsIdAndAnotherReplacesIt) {
  absl::StatusOr<v1::RegisterResponse> first =
      calls_.Register(Caller(), Process(7));
  ASSERT_TRUE(first.ok());
  const Caller previous = Caller::Of(first->worker_id(), first->worker_token());
  absl::StatusOr<v1::RegisterResponse> again =
      calls_.Register(previous, Process(7));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->worker_id(), first->worker_id());
  EXPECT_TRUE(gone_.empty());
  // Without its credential the same host, pid and device is a restarted
  // process: the old worker is gone.
  absl::StatusOr<v1::RegisterResponse> restarted =
      calls_.Register(Caller(), Process(7));
  ASSERT_TRUE(restarted.ok());
  EXPECT_NE(restarted->worker_id(), first->worker_id());
  ASSERT_EQ(gone_.size(), 1u);
  EXPECT_EQ(gone_[0].first, first->worker_id());
  EXPECT_EQ(gone_[0].second, "worker " + first->worker_id() +
                                 " registered again as " +
                                 restarted->worker_id());
}

TEST_F(WorkerCallsTest, AWorkerThatLeavesIsGone) {
  const Worker a = Register();
  v1::LeaveRequest r;
  r.set_worker_id(a.id);
  r.set_reason("preempted");
  EXPECT_TRUE(absl::IsUnauthenticated(calls_.Leave(Caller(), r)));
  ASSERT_TRUE(calls_.Leave(a.caller, r).ok());
  ASSERT_EQ(gone_.size(), 1u);
  EXPECT_EQ(gone_[0].second, "worker \"" + a.id + "\" left: preempted");
  EXPECT_TRUE(absl::IsNotFound(workers_.Get(a.id).status()));
}

TEST_F(WorkerCallsTest, AWorkerRegisteredAgainGoesBackToItsJob) {
  const std::string job = Submit(testing::MinimalJobSpec("resume", 1, 1));
  v1::RegisterRequest r = Process(9);
  r.set_resume_job_id(job);
  absl::StatusOr<v1::RegisterResponse> reg = calls_.Register(Caller(), r);
  ASSERT_TRUE(reg.ok());
  EXPECT_EQ(workers_.Get(reg->worker_id())->job_id(), job);
}

}  // namespace
}  // namespace ringleader
