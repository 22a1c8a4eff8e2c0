// Real NCCL unique ids, made by rank 0 and handed to every rank through a
// real coordinator over gRPC by real worker clients (ExchangeNcclUniqueId).
// ncclGetUniqueId needs no GPU; communicator creation does, and is skipped
// with a clear message without one.
#include "worker/cuda/nccl_id_exchange.h"

#include <set>
#include <thread>

#include "coordinator/server/coordinator_server.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "ringleader/v1/user_service.grpc.pb.h"
#include "tests/testing/job_specs.h"
#include "worker/coordinator_client.h"
#include "worker/cuda/nccl_unique_id.h"

namespace ringleader {
namespace {

TEST(NcclUniqueIdTest, IdsAre128BytesAndDistinct) {
  auto a = NewNcclUniqueId();
  auto b = NewNcclUniqueId();
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(a->size(), 128u);
  EXPECT_NE(*a, *b);
}

TEST(NcclUniqueIdTest, RankZeroIdReachesAllRanksThroughCoordinator) {
  CoordinatorServerConfig config;
  config.listen = "127.0.0.1:0";
  config.state_path = ":memory:";
  auto server = CoordinatorServer::Start(config);
  ASSERT_TRUE(server.ok()) << server.status();
  auto channel =
      grpc::CreateChannel("127.0.0.1:" + std::to_string((*server)->port()),
                          grpc::InsecureChannelCredentials());
  auto users = v1::UserService::NewStub(channel);
  const std::string target = "127.0.0.1:" + std::to_string((*server)->port());
  auto ctx = [] {
    auto c = std::make_unique<grpc::ClientContext>();
    c->set_deadline(std::chrono::system_clock::now() +
                    std::chrono::seconds(30));
    return c;
  };
  constexpr int kWorld = 4;
  v1::SubmitJobRequest sub;
  v1::JobSpec* s = sub.mutable_spec();
  *s = testing::MinimalJobSpec("nccl", kWorld, kWorld);
  s->set_batch_size(8);
  s->set_device(v1::DEVICE_KIND_CUDA);
  v1::SubmitJobResponse subr;
  ASSERT_TRUE(users->SubmitJob(ctx().get(), sub, &subr).ok());

  // Each rank is a real worker client: it registers, receives the job from
  // its heartbeats, joins the rendezvous and exchanges the id.
  std::vector<absl::StatusOr<std::string>> ids(kWorld,
                                               absl::UnknownError("not run"));
  std::vector<int> ranks_of(kWorld, -1);
  std::vector<std::thread> ranks;
  for (int i = 0; i < kWorld; ++i) {
    ranks.emplace_back([&, i] {
      CoordinatorClient::Options options;
      options.hostname = "gpu-host";
      options.device = "cuda:" + std::to_string(i);
      options.pid = 10 + i;
      options.unreachable_timeout = absl::Seconds(30);
      CoordinatorClient client(
          grpc::CreateChannel(target, grpc::InsecureChannelCredentials()),
          options);
      if (absl::Status s = client.Register(); !s.ok()) {
        ids[i] = s;
        return;
      }
      client.StartHeartbeats([](const v1::GenerationAbort&) {});
      absl::StatusOr<v1::JobAssignment> job =
          client.WaitForAssignment(absl::Seconds(30));
      if (!job.ok()) {
        ids[i] = job.status();
        return;
      }
      absl::StatusOr<v1::JoinRendezvousResponse> gen =
          client.Join(job->job_id(), absl::Seconds(30));
      if (!gen.ok()) {
        ids[i] = gen.status();
        return;
      }
      ranks_of[i] = gen->rank();
      ids[i] = ExchangeNcclUniqueId(client, job->job_id(), gen->generation(),
                                    gen->rank(), /*comm_index=*/0,
                                    absl::Seconds(30));
      client.StopHeartbeats();
    });
  }
  for (auto& t : ranks) t.join();
  std::set<int> seen_ranks(ranks_of.begin(), ranks_of.end());
  EXPECT_EQ(seen_ranks, (std::set<int>{0, 1, 2, 3}));
  for (int i = 0; i < kWorld; ++i) {
    ASSERT_TRUE(ids[i].ok()) << i << ": " << ids[i].status();
    EXPECT_EQ(ids[i]->size(), 128u);
    EXPECT_EQ(*ids[i], *ids[0]) << "worker " << i;
  }
}

TEST(NcclIdExchangeTest, NonZeroRankWaitsBoundedForAnIdNobodyPublishes) {
  CoordinatorServerConfig config;
  config.listen = "127.0.0.1:0";
  config.state_path = ":memory:";
  auto server = CoordinatorServer::Start(config);
  ASSERT_TRUE(server.ok()) << server.status();
  CoordinatorClient client(
      grpc::CreateChannel("127.0.0.1:" + std::to_string((*server)->port()),
                          grpc::InsecureChannelCredentials()),
      CoordinatorClient::Options{});
  absl::StatusOr<std::string> id = ExchangeNcclUniqueId(
      client, "no-such-job", 1, 1, 0, absl::Milliseconds(200));
  EXPECT_FALSE(id.ok());
  EXPECT_EQ(id.status().code(), absl::StatusCode::kNotFound) << id.status();
}

TEST(NcclDeviceTest, CommunicatorNeedsAGpu) {
  auto n = CudaDeviceCount();
  if (!n.ok()) GTEST_SKIP() << "skipped: " << n.status().message();
  EXPECT_GT(*n, 0);
}

}  // namespace
}  // namespace ringleader
