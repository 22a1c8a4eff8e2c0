// Real NCCL unique ids, made by rank 0 and handed to every rank through a
// real coordinator over gRPC. ncclGetUniqueId needs no GPU; communicator
// creation does, and is skipped with a clear message without one.
#include <thread>

#include "coordinator/coordinator_server.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "ringleader/v1/user_service.grpc.pb.h"
#include "ringleader/v1/worker_service.grpc.pb.h"
#include "tests/testing/job_specs.h"
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
  auto workers = v1::WorkerService::NewStub(channel);
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

  std::vector<std::string> fetched(kWorld);
  std::string published;
  std::vector<std::thread> ranks;
  for (int i = 0; i < kWorld; ++i) {
    ranks.emplace_back([&, i] {
      v1::RegisterRequest reg;
      reg.set_hostname("gpu-host");
      reg.set_pid(10 + i);
      reg.set_device("cuda:" + std::to_string(i));
      v1::RegisterResponse rr;
      ASSERT_TRUE(workers->Register(ctx().get(), reg, &rr).ok());
      v1::HeartbeatRequest hb;
      hb.set_worker_id(rr.worker_id());
      v1::HeartbeatResponse hr;
      ASSERT_TRUE(workers->Heartbeat(ctx().get(), hb, &hr).ok());
      ASSERT_EQ(hr.assignment().job_id(), subr.job_id());
      v1::JoinRendezvousRequest jr;
      jr.set_job_id(subr.job_id());
      jr.set_worker_id(rr.worker_id());
      v1::JoinRendezvousResponse gen;
      ASSERT_TRUE(workers->JoinRendezvous(ctx().get(), jr, &gen).ok());
      if (gen.rank() == 0) {
        auto id = NewNcclUniqueId();
        ASSERT_TRUE(id.ok()) << id.status();
        published = *id;
        v1::PublishNcclIdRequest p;
        p.set_job_id(subr.job_id());
        p.set_generation(gen.generation());
        p.set_rank(0);
        p.set_comm_index(0);
        p.set_unique_id(*id);
        v1::PublishNcclIdResponse pr;
        ASSERT_TRUE(workers->PublishNcclId(ctx().get(), p, &pr).ok());
        fetched[0] = *id;
        return;
      }
      v1::FetchNcclIdRequest f;
      f.set_job_id(subr.job_id());
      f.set_generation(gen.generation());
      f.set_rank(gen.rank());
      f.set_comm_index(0);
      f.set_timeout_ms(20000);
      v1::FetchNcclIdResponse fr;
      grpc::Status st = workers->FetchNcclId(ctx().get(), f, &fr);
      ASSERT_TRUE(st.ok()) << st.error_message();
      fetched[gen.rank()] = fr.unique_id();
    });
  }
  for (auto& t : ranks) t.join();
  ASSERT_EQ(published.size(), 128u);
  for (int r = 0; r < kWorld; ++r) EXPECT_EQ(fetched[r], published) << r;
}

TEST(NcclDeviceTest, CommunicatorNeedsAGpu) {
  auto n = CudaDeviceCount();
  if (!n.ok()) GTEST_SKIP() << "skipped: " << n.status().message();
  EXPECT_GT(*n, 0);
}

}  // namespace
}  // namespace ringleader
