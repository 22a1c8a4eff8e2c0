// GrpcKvClient and GlooKvStore against a real coordinator on a loopback port:
// codes and messages survive the RPC, keys are prefixed per communicator, and
// every wait is bounded.
#include "worker/comm/gloo_kv_store.h"

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/worker_credential.h"
#include "coordinator/server/coordinator_server.h"
#include "gloo/common/error.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "ringleader/v1/user_service.grpc.pb.h"
#include "ringleader/v1/worker_service.grpc.pb.h"
#include "tests/testing/job_specs.h"
#include "worker/comm/grpc_kv_client.h"

namespace ringleader {
namespace {

std::vector<char> Bytes(const std::string& s) {
  return std::vector<char>(s.begin(), s.end());
}

class GlooKvStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    CoordinatorServerConfig config;
    config.listen = "127.0.0.1:0";
    config.state_path = ":memory:";
    config.options.lease = absl::Seconds(300);
    config.options.heartbeat_interval = absl::Seconds(100);
    auto server = CoordinatorServer::Start(config);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    channel_ = grpc::CreateChannel(absl::StrCat("127.0.0.1:", server_->port()),
                                   grpc::InsecureChannelCredentials());
    auto users = v1::UserService::NewStub(channel_);
    workers_ = v1::WorkerService::NewStub(channel_);

    v1::SubmitJobRequest sub;
    v1::JobSpec* s = sub.mutable_spec();
    *s = testing::MinimalJobSpec("kv", 1, 1);
    s->set_rendezvous_last_call_ms(0);
    // Leave() then ends the generation and the job restarts: calls for the
    // ended generation are ABORTED (a failed job would answer
    // FAILED_PRECONDITION).
    s->set_max_restarts(3);
    v1::SubmitJobResponse subr;
    ASSERT_TRUE(users->SubmitJob(Ctx().get(), sub, &subr).ok());

    v1::RegisterRequest reg;
    reg.set_hostname("kv-host");
    reg.set_pid(1);
    reg.set_device("cpu");
    reg.set_address("127.0.0.1");
    v1::RegisterResponse rr;
    ASSERT_TRUE(workers_->Register(Ctx().get(), reg, &rr).ok());
    worker_id_ = rr.worker_id();
    credential_ = {rr.worker_id(), rr.worker_token()};
    v1::HeartbeatRequest hb;
    hb.set_worker_id(worker_id_);
    v1::HeartbeatResponse hr;
    ASSERT_TRUE(workers_->Heartbeat(WorkerCtx().get(), hb, &hr).ok());
    ASSERT_EQ(hr.assignment().job_id(), subr.job_id());
    v1::JoinRendezvousRequest jr;
    jr.set_job_id(subr.job_id());
    jr.set_worker_id(worker_id_);
    jr.set_timeout_ms(10000);
    v1::JoinRendezvousResponse gen;
    ASSERT_TRUE(workers_->JoinRendezvous(WorkerCtx().get(), jr, &gen).ok());
    job_id_ = subr.job_id();
    generation_ = gen.generation();
    kv_ = std::make_unique<GrpcKvClient>(channel_, job_id_, generation_,
                                         credential_);
  }

  std::unique_ptr<grpc::ClientContext> Ctx() {
    auto c = std::make_unique<grpc::ClientContext>();
    c->set_deadline(std::chrono::system_clock::now() +
                    std::chrono::seconds(20));
    return c;
  }
  // The same, carrying the worker's credential.
  std::unique_ptr<grpc::ClientContext> WorkerCtx() {
    std::unique_ptr<grpc::ClientContext> c = Ctx();
    AttachWorkerCredential(c.get(), credential_);
    return c;
  }

  void Leave() {
    v1::LeaveRequest req;
    req.set_worker_id(worker_id_);
    v1::LeaveResponse resp;
    ASSERT_TRUE(workers_->Leave(WorkerCtx().get(), req, &resp).ok());
  }

  std::unique_ptr<CoordinatorServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::WorkerService::Stub> workers_;
  std::string worker_id_;
  WorkerCredential credential_;
  std::string job_id_;
  int64_t generation_ = 0;
  std::unique_ptr<GrpcKvClient> kv_;
};

TEST_F(GlooKvStoreTest, ClientSetWaitGetAdd) {
  ASSERT_TRUE(kv_->Set("a", std::string("x\0y", 3)).ok());
  ASSERT_TRUE(kv_->Set("b", "").ok());
  auto values = kv_->Wait({"b", "a"}, absl::Seconds(5));
  ASSERT_TRUE(values.ok()) << values.status();
  EXPECT_EQ(*values, (std::vector<std::string>{"", std::string("x\0y", 3)}));
  auto got = kv_->Get("a");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->value_or("absent"), std::string("x\0y", 3));
  auto missing = kv_->Get("nope");
  ASSERT_TRUE(missing.ok()) << missing.status();
  EXPECT_FALSE(missing->has_value());
  EXPECT_EQ(*kv_->Add("n", 5), 5);
  EXPECT_EQ(*kv_->Add("n", -2), 3);
}

TEST_F(GlooKvStoreTest, ClientKeepsTheCoordinatorsCodeAndMessage) {
  GrpcKvClient future(channel_, job_id_, generation_ + 1, credential_);
  absl::Status s = future.Set("k", "v");
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "has not formed")) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "KvSet")) << s;

  const absl::Time start = absl::Now();
  auto w = kv_->Wait({"never"}, absl::Milliseconds(200));
  EXPECT_TRUE(absl::IsDeadlineExceeded(w.status())) << w.status();
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));

  Leave();  // Ends the generation.
  EXPECT_TRUE(absl::IsAborted(kv_->Set("k", "v")));
  EXPECT_TRUE(absl::IsAborted(kv_->Wait({"k"}, absl::Seconds(5)).status()));
}

TEST_F(GlooKvStoreTest, StorePrefixesKeysPerCommunicator) {
  GlooKvStore zero(kv_.get(), "gloo/0/", absl::Seconds(5));
  GlooKvStore one(kv_.get(), "gloo/1/", absl::Seconds(5));
  zero.set("rank_0", Bytes("addr-of-comm-0"));
  EXPECT_EQ(zero.get("rank_0"), Bytes("addr-of-comm-0"));
  auto raw = kv_->Wait({"gloo/0/rank_0"}, absl::Seconds(5));
  ASSERT_TRUE(raw.ok()) << raw.status();
  EXPECT_EQ(raw->front(), "addr-of-comm-0");

  // The other communicator does not see comm 0's key.
  EXPECT_THROW(one.wait({"rank_0"}, std::chrono::milliseconds(200)),
               ::gloo::IoException);
  EXPECT_TRUE(absl::IsDeadlineExceeded(one.first_error())) << one.first_error();
  EXPECT_TRUE(absl::StrContains(one.first_error().message(), "gloo/1/rank_0"));
  EXPECT_TRUE(zero.first_error().ok());
  one.set("rank_0", Bytes("addr-of-comm-1"));
  EXPECT_EQ(one.get("rank_0"), Bytes("addr-of-comm-1"));
  EXPECT_EQ(zero.get("rank_0"), Bytes("addr-of-comm-0"));
}

TEST_F(GlooKvStoreTest, StoreGetWaitsForTheKey) {
  GlooKvStore store(kv_.get(), "gloo/0/", absl::Seconds(10));
  std::vector<char> got;
  std::thread reader([&] { got = store.get("late"); });
  store.set("late", Bytes("value"));
  reader.join();
  EXPECT_EQ(got, Bytes("value"));
}

TEST_F(GlooKvStoreTest, StoreWaitWithoutTimeoutIsStillBounded) {
  GlooKvStore store(kv_.get(), "gloo/0/", absl::Milliseconds(200));
  const absl::Time start = absl::Now();
  EXPECT_THROW(store.wait({"never"}), ::gloo::IoException);
  EXPECT_THROW(store.get("never"), ::gloo::IoException);
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
}

TEST_F(GlooKvStoreTest, StoreReportsAnEndedGenerationAsAborted) {
  GlooKvStore store(kv_.get(), "gloo/0/", absl::Seconds(5));
  Leave();
  try {
    store.set("k", Bytes("v"));
    ADD_FAILURE() << "set after the generation ended did not throw";
  } catch (const ::gloo::IoException& e) {
    EXPECT_TRUE(absl::StrContains(e.what(), "ABORTED")) << e.what();
  }
  EXPECT_TRUE(absl::IsAborted(store.first_error())) << store.first_error();
}

}  // namespace
}  // namespace ringleader
