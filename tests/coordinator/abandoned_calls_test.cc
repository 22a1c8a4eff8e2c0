// Calls whose clients go away, over the coordinator's real gRPC service: a
// KV wait, barrier, join or NCCL-id fetch whose call is cancelled or passes
// its deadline is withdrawn at once, its state freed, and the rank may come
// again; the coordinator's reserved KV keys stay its own, and a KV space full
// of a job's keys does not stop the NCCL id exchange.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "coordinator/server/reactor_util.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "ringleader/v1/user_service.grpc.pb.h"
#include "ringleader/v1/worker_service.grpc.pb.h"
#include "tests/testing/call_outcomes.h"
#include "tests/testing/form_generation.h"
#include "tests/testing/in_process_coordinator.h"
#include "tests/testing/job_specs.h"

namespace ringleader {
namespace {

using grpc::StatusCode;

constexpr int64_t kHourMs =
    3'600'000;  // A server-side wait that outlives the test.
constexpr absl::Duration kBound = absl::Seconds(30);
constexpr int kKeyLimit = 64;

using Outcomes = testing::CallOutcomes;

// One async call's context, request and response, kept alive until it ends.
template <typename Req, typename Resp>
struct Pending {
  std::unique_ptr<grpc::ClientContext> ctx;
  Req req;
  Resp resp;
};

class AbandonedCallsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    CoordinatorServerConfig config = testing::InProcessCoordinator::Config();
    config.options.kv_limits.max_keys_per_generation = kKeyLimit;
    auto coordinator = testing::InProcessCoordinator::Start(config);
    ASSERT_TRUE(coordinator.ok()) << coordinator.status();
    coordinator_ = *std::move(coordinator);
  }

  v1::WorkerService::Stub& workers() { return coordinator_->workers(); }
  Coordinator& coord() { return coordinator_->server().coordinator(); }

  std::string Submit(int world) {
    v1::SubmitJobRequest req;
    *req.mutable_spec() = testing::MinimalJobSpec("abandoned", world, world);
    req.mutable_spec()->set_max_restarts(5);
    v1::SubmitJobResponse resp;
    grpc::Status s = coordinator_->users().SubmitJob(
        testing::ClientContext().get(), req, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return resp.job_id();
  }

  testing::FormedGeneration Form(const std::string& job, int world) {
    return testing::FormGeneration(
        std::vector<v1::WorkerService::Stub*>(world, &workers()), job,
        "abandoned-host", 100, 10'000);
  }

  // A heartbeat of `worker` answered OK: the server still serves.
  void ExpectServing(const WorkerCredential& worker) {
    v1::HeartbeatRequest hb;
    hb.set_worker_id(worker.worker_id);
    v1::HeartbeatResponse resp;
    grpc::Status s = workers().Heartbeat(
        testing::ClientContext(worker, absl::Seconds(5)).get(), hb, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
  }

  std::unique_ptr<testing::InProcessCoordinator> coordinator_;
};

TEST_F(AbandonedCallsTest, CancelledKvWaitsAreFreedAtOnce) {
  const std::string job = Submit(1);
  const testing::FormedGeneration g = Form(job, 1);
  ASSERT_EQ(g.worker_by_rank.size(), 1u);
  constexpr int kCalls = 2000;
  std::vector<Pending<v1::KvWaitRequest, v1::KvWaitResponse>> calls(kCalls);
  Outcomes outcomes;
  for (int i = 0; i < kCalls; ++i) {
    auto& c = calls[i];
    c.ctx = testing::ClientContext(g.credential_by_rank[0], kBound);
    c.req.set_job_id(job);
    c.req.set_generation(g.generation);
    c.req.add_keys(absl::StrCat("never-", i));
    c.req.set_timeout_ms(kHourMs);
    workers().async()->KvWait(c.ctx.get(), &c.req, &c.resp, outcomes.Add());
  }
  ASSERT_TRUE(coord().kv().AwaitWaitersBetween(kCalls, kCalls, kBound))
      << coord().kv().waiter_count() << " waits registered";
  for (auto& c : calls) c.ctx->TryCancel();
  const std::vector<grpc::Status> done = outcomes.WaitFor(kCalls, kBound);
  ASSERT_EQ(done.size(), size_t{kCalls});
  for (const grpc::Status& s : done) {
    EXPECT_EQ(s.error_code(), StatusCode::CANCELLED) << s.error_message();
  }
  EXPECT_TRUE(coord().kv().AwaitWaitersBetween(0, 0, kBound))
      << coord().kv().waiter_count() << " cancelled waits still held";
  // And every call's reactor is gone with it.
  EXPECT_TRUE(CancellableReactor::AwaitLiveBetween(0, 0, kBound));
  ExpectServing(g.credential_by_rank[0]);
}

TEST_F(AbandonedCallsTest, KvWaitsPastTheirClientDeadlineAreFreed) {
  const std::string job = Submit(1);
  const testing::FormedGeneration g = Form(job, 1);
  ASSERT_EQ(g.credential_by_rank.size(), 1u);
  constexpr int kCalls = 100;
  std::vector<Pending<v1::KvWaitRequest, v1::KvWaitResponse>> calls(kCalls);
  Outcomes outcomes;
  for (int i = 0; i < kCalls; ++i) {
    auto& c = calls[i];
    c.ctx = testing::ClientContext(g.credential_by_rank[0],
                                   absl::Milliseconds(200));
    c.req.set_job_id(job);
    c.req.set_generation(g.generation);
    c.req.add_keys(absl::StrCat("late-", i));
    c.req.set_timeout_ms(kHourMs);  // The server alone would wait an hour.
    workers().async()->KvWait(c.ctx.get(), &c.req, &c.resp, outcomes.Add());
  }
  const std::vector<grpc::Status> done = outcomes.WaitFor(kCalls, kBound);
  ASSERT_EQ(done.size(), size_t{kCalls});
  for (const grpc::Status& s : done) {
    EXPECT_EQ(s.error_code(), StatusCode::DEADLINE_EXCEEDED)
        << s.error_message();
  }
  EXPECT_TRUE(coord().kv().AwaitWaitersBetween(0, 0, kBound))
      << coord().kv().waiter_count() << " expired waits still held";
}

TEST_F(AbandonedCallsTest, CancelledBarrierLetsTheRankArriveAgain) {
  const std::string job = Submit(2);
  const testing::FormedGeneration g = Form(job, 2);
  ASSERT_EQ(g.worker_by_rank.size(), 2u);
  auto barrier = [&](int32_t rank) {
    Pending<v1::BarrierRequest, v1::BarrierResponse> c;
    c.ctx = testing::ClientContext(g.credential_by_rank[rank], kBound);
    c.req.set_job_id(job);
    c.req.set_generation(g.generation);
    c.req.set_rank(rank);
    c.req.set_name("b");
    c.req.set_timeout_ms(kHourMs);
    return c;
  };
  auto first = barrier(0);
  Outcomes gone;
  workers().async()->Barrier(first.ctx.get(), &first.req, &first.resp,
                             gone.Add());
  ASSERT_TRUE(coord().barriers().AwaitArrivalsBetween(1, 1, kBound));
  first.ctx->TryCancel();
  ASSERT_EQ(gone.WaitFor(1, kBound).size(), 1u);
  ASSERT_TRUE(coord().barriers().AwaitArrivalsBetween(0, 0, kBound))
      << "rank 0 still waits at the barrier after its call was cancelled";
  // Rank 0 again (not "already waits at barrier"), then rank 1: released.
  auto again = barrier(0);
  auto other = barrier(1);
  Outcomes released;
  workers().async()->Barrier(again.ctx.get(), &again.req, &again.resp,
                             released.Add());
  workers().async()->Barrier(other.ctx.get(), &other.req, &other.resp,
                             released.Add());
  const std::vector<grpc::Status> both = released.WaitFor(2, kBound);
  ASSERT_EQ(both.size(), 2u);
  for (const grpc::Status& s : both) EXPECT_TRUE(s.ok()) << s.error_message();
}

TEST_F(AbandonedCallsTest, CancelledJoinsDoNotCountAsWaiting) {
  const std::string job = Submit(2);
  // Two registered, assigned workers; the first joins and leaves 100 times.
  std::vector<WorkerCredential> ids;
  for (int pid : {1, 2}) {
    v1::RegisterRequest reg;
    reg.set_hostname("abandoned-host");
    reg.set_pid(pid);
    reg.set_device("cpu");
    reg.set_address("127.0.0.1");
    v1::RegisterResponse r;
    ASSERT_TRUE(
        workers().Register(testing::ClientContext().get(), reg, &r).ok());
    v1::HeartbeatRequest hb;
    hb.set_worker_id(r.worker_id());
    v1::HeartbeatResponse h;
    ASSERT_TRUE(
        workers()
            .Heartbeat(testing::ClientContext(testing::CredentialOf(r)).get(),
                       hb, &h)
            .ok());
    ASSERT_EQ(h.assignment().job_id(), job);
    ids.push_back(testing::CredentialOf(r));
  }
  for (int i = 0; i < 100; ++i) {
    Pending<v1::JoinRendezvousRequest, v1::JoinRendezvousResponse> c;
    c.ctx = testing::ClientContext(ids[0], kBound);
    c.req.set_job_id(job);
    c.req.set_worker_id(ids[0].worker_id);
    c.req.set_timeout_ms(kHourMs);
    Outcomes left;
    workers().async()->JoinRendezvous(c.ctx.get(), &c.req, &c.resp, left.Add());
    ASSERT_TRUE(coord().rendezvous().AwaitWaitersBetween(1, 1, kBound)) << i;
    c.ctx->TryCancel();
    ASSERT_EQ(left.WaitFor(1, kBound).size(), 1u);
    ASSERT_TRUE(coord().rendezvous().AwaitWaitersBetween(0, 0, kBound))
        << "join " << i << " still counted as waiting after its cancel";
  }
  // The second worker alone does not form a generation with a caller that
  // left: its short join times out.
  v1::JoinRendezvousRequest alone;
  alone.set_job_id(job);
  alone.set_worker_id(ids[1].worker_id);
  alone.set_timeout_ms(300);
  v1::JoinRendezvousResponse resp;
  grpc::Status s = workers().JoinRendezvous(
      testing::ClientContext(ids[1], kBound).get(), alone, &resp);
  EXPECT_EQ(s.error_code(), StatusCode::DEADLINE_EXCEEDED) << s.error_message();
  ExpectServing(ids[1]);
}

TEST_F(AbandonedCallsTest,
       ReservedKeysAreTheCoordinatorsAndAFullSpaceKeepsNccl) {
  const std::string job = Submit(1);
  const testing::FormedGeneration g = Form(job, 1);
  ASSERT_EQ(g.credential_by_rank.size(), 1u);
  const WorkerCredential& rank0 = g.credential_by_rank[0];
  const std::string nccl_key = "__ringleader/nccl_id/0";
  v1::KvSetRequest set;
  set.set_job_id(job);
  set.set_generation(g.generation);
  set.set_key(nccl_key);
  set.set_value("x");
  v1::KvSetResponse set_resp;
  EXPECT_EQ(workers()
                .KvSet(testing::ClientContext(rank0).get(), set, &set_resp)
                .error_code(),
            StatusCode::PERMISSION_DENIED);
  v1::KvAddRequest add;
  add.set_job_id(job);
  add.set_generation(g.generation);
  add.set_key(nccl_key);
  add.set_delta(1);
  v1::KvAddResponse add_resp;
  EXPECT_EQ(workers()
                .KvAdd(testing::ClientContext(rank0).get(), add, &add_resp)
                .error_code(),
            StatusCode::PERMISSION_DENIED);
  // The job fills its KV space to the limit.
  for (int i = 0; i < kKeyLimit; ++i) {
    set.set_key(absl::StrCat("own-", i));
    ASSERT_TRUE(workers()
                    .KvSet(testing::ClientContext(rank0).get(), set, &set_resp)
                    .ok())
        << i;
  }
  set.set_key("one-more");
  EXPECT_EQ(workers()
                .KvSet(testing::ClientContext(rank0).get(), set, &set_resp)
                .error_code(),
            StatusCode::RESOURCE_EXHAUSTED);
  // The NCCL id still goes through, whole.
  v1::PublishNcclIdRequest publish;
  publish.set_job_id(job);
  publish.set_generation(g.generation);
  publish.set_rank(0);
  publish.set_unique_id(std::string(128, 'n'));
  v1::PublishNcclIdResponse pr;
  grpc::Status s = workers().PublishNcclId(testing::ClientContext(rank0).get(),
                                           publish, &pr);
  ASSERT_TRUE(s.ok()) << s.error_message();
  v1::FetchNcclIdRequest fetch;
  fetch.set_job_id(job);
  fetch.set_generation(g.generation);
  fetch.set_rank(0);
  fetch.set_timeout_ms(5000);
  v1::FetchNcclIdResponse fr;
  s = workers().FetchNcclId(testing::ClientContext(rank0).get(), fetch, &fr);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(fr.unique_id(), std::string(128, 'n'));
}

}  // namespace
}  // namespace ringleader
