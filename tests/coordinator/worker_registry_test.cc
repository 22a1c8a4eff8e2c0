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

// Issue 48: two containers on one host sharing its network and name are
// both PID 1; their incarnations tell them apart, and one of them
// registering again is still itself.
TEST_F(WorkerRegistryTest, TwoPidOnesOfOneHostAreTwoWorkers) {
  v1::RegisterRequest first = Req("node", 1);
  first.set_process_id("aaaa");
  v1::RegisterRequest second = Req("node", 1);
  second.set_process_id("bbbb");
  auto a = registry_.Register(first);
  auto b = registry_.Register(second);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE(b->replaced.empty());
  EXPECT_NE(a->response.worker_id(), b->response.worker_id());
  EXPECT_EQ(registry_.List().size(), 2u);
  auto again = registry_.Register(second);
  ASSERT_TRUE(again.ok());
  ASSERT_EQ(again->replaced.size(), 1u);
  EXPECT_EQ(again->replaced[0].worker_id(), b->response.worker_id());
  EXPECT_EQ(registry_.List().size(), 2u);
  v1::RegisterRequest long_id = Req("node", 1);
  long_id.set_process_id(std::string(65, 'x'));
  EXPECT_TRUE(absl::IsInvalidArgument(registry_.Register(long_id).status()));
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

// ---- One process, one worker across registrations (issue 31) ----

WorkerRegistry::Credential CredentialOf(const WorkerRegistry::Registration& r) {
  return {r.response.worker_id(), r.response.worker_token()};
}

TEST_F(WorkerRegistryTest, TheSameProcessWithItsCredentialKeepsItsId) {
  auto a = registry_.Register(Req("h", 1));
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(registry_.SetJob(a->response.worker_id(), "job").ok());
  const WorkerRegistry::Credential old = CredentialOf(*a);
  // Registered still: the same worker, its job kept, a new token.
  auto again = registry_.Register(Req("h", 1), "", &old);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->kept_id);
  EXPECT_TRUE(again->replaced.empty());
  EXPECT_EQ(again->response.worker_id(), old.first);
  EXPECT_NE(again->response.worker_token(), old.second);
  EXPECT_EQ(registry_.Get(old.first)->job_id(), "job");
  EXPECT_FALSE(registry_.Authenticate(old.first, old.second, "").ok());
  EXPECT_TRUE(
      registry_.Authenticate(old.first, again->response.worker_token(), "")
          .ok());
  // Removed (its lease ran out), then back within keep_removed: same id,
  // idle.
  clock_.Advance(absl::Seconds(4));
  ASSERT_EQ(registry_.ExpireLeases().size(), 1u);
  const WorkerRegistry::Credential second = CredentialOf(*again);
  EXPECT_TRUE(
      registry_.AuthenticateRecent(second.first, second.second, "").ok());
  auto back = registry_.Register(Req("h", 1), "", &second);
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(back->kept_id);
  EXPECT_EQ(back->response.worker_id(), old.first);
  EXPECT_EQ(registry_.Get(old.first)->job_id(), "");
}

TEST_F(WorkerRegistryTest, AnotherProcessOrAWrongTokenGetsANewId) {
  auto a = registry_.Register(Req("h", 1));
  ASSERT_TRUE(a.ok());
  const WorkerRegistry::Credential old = CredentialOf(*a);
  // Another pid showing the credential: a new worker; the first stays.
  auto other = registry_.Register(Req("h", 2), "", &old);
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(other->kept_id);
  EXPECT_NE(other->response.worker_id(), old.first);
  // The same process with a wrong token: a new worker replacing the old.
  const WorkerRegistry::Credential forged = {old.first, "0123"};
  auto wrong = registry_.Register(Req("h", 1), "", &forged);
  ASSERT_TRUE(wrong.ok());
  EXPECT_FALSE(wrong->kept_id);
  EXPECT_NE(wrong->response.worker_id(), old.first);
  ASSERT_EQ(wrong->replaced.size(), 1u);
  EXPECT_EQ(wrong->replaced[0].worker_id(), old.first);
  // Another certificate identity: a new worker too.
  const WorkerRegistry::Credential latest = CredentialOf(*wrong);
  auto impostor = registry_.Register(Req("h", 1), "someone-else", &latest);
  ASSERT_TRUE(impostor.ok());
  EXPECT_FALSE(impostor->kept_id);
}

TEST_F(WorkerRegistryTest, ARemovedWorkerIsForgottenAfterKeepRemoved) {
  auto a = registry_.Register(Req("h", 1));
  ASSERT_TRUE(a.ok());
  const WorkerRegistry::Credential old = CredentialOf(*a);
  ASSERT_TRUE(registry_.Remove(old.first).ok());
  clock_.Advance(registry_.options().keep_removed + absl::Seconds(1));
  EXPECT_FALSE(registry_.AuthenticateRecent(old.first, old.second, "").ok());
  auto late = registry_.Register(Req("h", 1), "", &old);
  ASSERT_TRUE(late.ok());
  EXPECT_FALSE(late->kept_id);
  EXPECT_NE(late->response.worker_id(), old.first);
}

}  // namespace
}  // namespace ringleader
