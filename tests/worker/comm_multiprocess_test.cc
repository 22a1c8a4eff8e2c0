// The CPU communicators (Gloo over TCP, shared memory) between real
// processes: this test runs a coordinator in process, submits a job, and
// starts one comm_peer process per rank (with posix_spawn), each of which
// registers, joins, bootstraps its communicator through the coordinator's KV
// store and checks collectives (see comm_peer_main.cc). Every test runs once
// per transport. Children are waited for with a bound and killed past it.
#include <sys/wait.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "coordinator/server/coordinator_server.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "ringleader/v1/user_service.grpc.pb.h"
#include "tests/testing/job_specs.h"
#include "tests/worker/child_process.h"

namespace ringleader {
namespace {

constexpr absl::Duration kChildBound = absl::Seconds(60);

v1::JobSpec Spec(int world) {
  v1::JobSpec s =
      testing::MinimalJobSpec(absl::StrCat("gloo-", world), world, world);
  s.mutable_dataset()->set_synthetic_train_size(1000);
  s.mutable_dataset()->set_synthetic_test_size(100);
  s.set_rendezvous_last_call_ms(0);
  // A peer that leaves ends the generation and the job restarts (instead of
  // failing), so the survivor's calls for the old generation are ABORTED.
  s.set_max_restarts(3);
  return s;
}

class CommMultiProcessTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    CoordinatorServerConfig config;
    config.listen = "127.0.0.1:0";
    config.state_path = ":memory:";
    // The peers do not heartbeat after joining: leases outlast the test.
    config.options.lease = absl::Seconds(300);
    config.options.heartbeat_interval = absl::Seconds(100);
    auto server = CoordinatorServer::Start(config);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    target_ = absl::StrCat("127.0.0.1:", server_->port());
    users_ = v1::UserService::NewStub(
        grpc::CreateChannel(target_, grpc::InsecureChannelCredentials()));
  }

  void Submit(int world) {
    v1::SubmitJobRequest req;
    *req.mutable_spec() = Spec(world);
    v1::SubmitJobResponse resp;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::seconds(10));
    grpc::Status s = users_->SubmitJob(&ctx, req, &resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }

  void Spawn(int n, const std::vector<std::string>& extra) {
    for (int i = 0; i < n; ++i) {
      std::vector<std::string> args = {absl::StrCat("--coordinator=", target_),
                                       absl::StrCat("--pid_tag=", i)};
      // gloo_3lanes: Gloo with 3 buckets in flight (lanes).
      if (GetParam() == std::string("gloo_3lanes")) {
        args.push_back("--transport=gloo");
        args.push_back("--lanes=3");
      } else {
        args.push_back(absl::StrCat("--transport=", GetParam()));
      }
      args.insert(args.end(), extra.begin(), extra.end());
      auto child = ChildProcess::Start(RunfilePath("tests/worker/comm_peer"),
                                       args, &latch_);
      ASSERT_TRUE(child.ok()) << child.status();
      children_.push_back(*std::move(child));
    }
  }

  // Waits for every child (all within one bound), kills the late ones, and
  // expects each to have exited 0.
  void ExpectAllSucceed() {
    const absl::Time deadline = absl::Now() + kChildBound;
    for (size_t i = 0; i < children_.size(); ++i) {
      std::optional<int> status = children_[i]->WaitFor(deadline - absl::Now());
      if (!status.has_value()) {
        ADD_FAILURE() << "peer " << i << " still running after " << kChildBound
                      << "; killing it";
        children_[i]->Kill();
        continue;
      }
      EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0)
          << "peer " << i << ": " << children_[i]->Describe();
    }
  }

  std::unique_ptr<CoordinatorServer> server_;
  std::string target_;
  std::unique_ptr<v1::UserService::Stub> users_;
  ExitLatch latch_;
  // Destroyed before latch_ (declared after it): killed and reaped.
  std::vector<std::unique_ptr<ChildProcess>> children_;
};

TEST_P(CommMultiProcessTest, TwoPeersAllReduceBroadcastAndAsyncOrder) {
  Submit(2);
  Spawn(2, {"--mode=collectives", "--bench_iters=20"});
  ExpectAllSucceed();
}

// Small shared-memory slots: every collective spans many chunks, the last
// one short, and slices of uneven length.
TEST_P(CommMultiProcessTest, ThreePeersAllReduceBroadcastAndAsyncOrder) {
  Submit(3);
  Spawn(3, {"--mode=collectives", "--shm_slot_bytes=65472"});
  ExpectAllSucceed();
}

// Rank 1 leaves without joining an all-reduce that rank 0 started; rank 0
// aborts when the coordinator says the generation ended, and its pending work
// must fail within seconds (its Gloo timeout is 120 s). Rank 1 blocks on
// stdin until some peer exited, so its sockets stay open meanwhile.
TEST_P(CommMultiProcessTest, AbortFailsPendingAllReduceWithoutHanging) {
  Submit(2);
  Spawn(2, {"--mode=abort"});
  EXPECT_TRUE(latch_.WaitFor(1, kChildBound)) << "no peer finished";
  for (auto& child : children_) child->CloseStdin();
  ExpectAllSucceed();
}

// A peer that dies mid-collective fails the survivor's work by itself (TCP:
// the connection closes; shared memory: the peer's lock is gone), long before
// the 120 s timeout.
TEST_P(CommMultiProcessTest, PeerExitFailsPendingAllReduce) {
  Submit(2);
  Spawn(2, {"--mode=peer_exits"});
  ExpectAllSucceed();
}

INSTANTIATE_TEST_SUITE_P(Transports, CommMultiProcessTest,
                         ::testing::Values("gloo", "gloo_3lanes", "shm"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace ringleader
