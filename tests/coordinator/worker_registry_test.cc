#include "coordinator/worker_registry.h"

#include "common/fake_clock.h"
#include "gtest/gtest.h"

namespace ringleader {
namespace {

v1::RegisterRequest Req(const std::string& host, int pid,
                        const std::string& device = "cpu") {
  v1::RegisterRequest r;
  r.set_hostname(host);
  r.set_pid(pid);
  r.set_device(device);
  r.set_address("127.0.0.1");
  return r;
}

class WorkerRegistryTest : public ::testing::Test {
 protected:
  FakeClock clock_;
  WorkerRegistry registry_{&clock_, {absl::Seconds(3), absl::Seconds(1), 4}};
};

TEST_F(WorkerRegistryTest, RegisterGivesLeaseAndUniqueIds) {
  auto a = registry_.Register(Req("h", 1));
  auto b = registry_.Register(Req("h", 2));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->response.worker_id(), b->response.worker_id());
  EXPECT_EQ(a->response.lease_ms(), 3000);
  EXPECT_EQ(a->response.heartbeat_interval_ms(), 1000);
  EXPECT_EQ(registry_.List().size(), 2u);
  EXPECT_EQ(registry_.List()[0].state(), v1::WORKER_STATE_IDLE);
}

TEST_F(WorkerRegistryTest, LeaseExpiresWithoutHeartbeat) {
  auto a = registry_.Register(Req("h", 1));
  auto b = registry_.Register(Req("h", 2));
  clock_.Advance(absl::Seconds(2));
  ASSERT_TRUE(registry_.Heartbeat(b->response.worker_id()).ok());
  EXPECT_TRUE(registry_.ExpireLeases().empty());
  clock_.Advance(absl::Seconds(1));
  auto dead = registry_.ExpireLeases();
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].worker_id(), a->response.worker_id());
  EXPECT_TRUE(
      absl::IsNotFound(registry_.Heartbeat(a->response.worker_id()).status()));
  EXPECT_TRUE(registry_.Heartbeat(b->response.worker_id()).ok());
}

TEST_F(WorkerRegistryTest, AKeptWorkerStaysSilentUntilItIsHeardOrDropped) {
  auto a = registry_.Register(Req("h", 1));
  const std::string id = a->response.worker_id();
  ASSERT_TRUE(registry_.SetJob(id, "job-1").ok());
  clock_.Advance(absl::Seconds(4));
  bool keep = true;
  int asked = 0;
  auto judge = [&](const v1::WorkerInfo& w, bool replaced) {
    EXPECT_FALSE(replaced);
    ++asked;
    EXPECT_EQ(w.worker_id(), id);
    return keep;
  };
  EXPECT_TRUE(registry_.ExpireLeases(judge).empty());
  EXPECT_EQ(registry_.Get(id)->state(), v1::WORKER_STATE_SILENT);
  EXPECT_TRUE(registry_.Authenticate(id, a->response.worker_token(), "").ok());
  // Heard again: busy with its job, its lease renewed, no longer asked.
  ASSERT_TRUE(registry_.Heartbeat(id).ok());
  EXPECT_EQ(registry_.Get(id)->state(), v1::WORKER_STATE_BUSY);
  EXPECT_TRUE(registry_.ExpireLeases(judge).empty());
  EXPECT_EQ(asked, 1);
  // Silent again, and this time the evidence runs out.
  clock_.Advance(absl::Seconds(4));
  keep = false;
  std::vector<v1::WorkerInfo> dead = registry_.ExpireLeases(judge);
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].worker_id(), id);
  EXPECT_TRUE(absl::IsNotFound(registry_.Get(id).status()));
}

TEST_F(WorkerRegistryTest, SameProcessRegisteringAgainReplacesItself) {
  auto a = registry_.Register(Req("h", 7));
  ASSERT_TRUE(registry_.SetJob(a->response.worker_id(), "job-1").ok());
  auto again = registry_.Register(Req("h", 7));
  ASSERT_TRUE(again.ok());
  ASSERT_EQ(again->replaced.size(), 1u);
  EXPECT_EQ(again->replaced[0].job_id(), "job-1");
  EXPECT_EQ(registry_.List().size(), 1u);
}

TEST_F(WorkerRegistryTest, RejectsBadRegistrationsAndEnforcesLimit) {
  EXPECT_TRUE(absl::IsInvalidArgument(registry_.Register(Req("", 1)).status()));
  EXPECT_TRUE(
      absl::IsInvalidArgument(registry_.Register(Req("h", 0)).status()));
  EXPECT_TRUE(
      absl::IsInvalidArgument(registry_.Register(Req("h", 1, "gpu")).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(
      registry_.Register(Req("h", 1, "cuda:x")).status()));
  EXPECT_TRUE(registry_.Register(Req("h", 1, "cuda:3")).ok());
  for (int pid = 2; pid <= 4; ++pid) {
    ASSERT_TRUE(registry_.Register(Req("h", pid)).ok());
  }
  EXPECT_TRUE(
      absl::IsResourceExhausted(registry_.Register(Req("h", 5)).status()));
}

TEST_F(WorkerRegistryTest, SetJobAndRemove) {
  auto a = registry_.Register(Req("h", 1));
  const std::string id = a->response.worker_id();
  ASSERT_TRUE(registry_.SetJob(id, "j").ok());
  EXPECT_EQ(registry_.Get(id)->state(), v1::WORKER_STATE_BUSY);
  EXPECT_EQ(registry_.Get(id)->job_id(), "j");
  ASSERT_TRUE(registry_.Remove(id).ok());
  EXPECT_TRUE(absl::IsNotFound(registry_.Remove(id).status()));
  EXPECT_TRUE(absl::IsNotFound(registry_.SetJob(id, "j")));
}

}  // namespace
}  // namespace ringleader
