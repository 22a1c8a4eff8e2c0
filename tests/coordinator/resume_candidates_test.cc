// Over real gRPC: a new generation is offered the last committed checkpoints
// newest first; its ranks tell GetShard (tools) or rank 0's commits (the
// workers) which one they loaded, which fixes the epoch's start offset, must
// be the same on every rank, and moves the job back to it; a rank that
// cannot go on fails the job with its reason.
#include <thread>

#include "common/worker_credential.h"
#include "coordinator/server/coordinator_server.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "ringleader/v1/user_service.grpc.pb.h"
#include "ringleader/v1/worker_service.grpc.pb.h"
#include "tests/testing/job_specs.h"

namespace ringleader {
namespace {

std::unique_ptr<grpc::ClientContext> Ctx() {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() +
                    std::chrono::seconds(30));
  return ctx;
}

// The same, carrying `worker`'s credential.
std::unique_ptr<grpc::ClientContext> Ctx(const WorkerCredential& worker) {
  std::unique_ptr<grpc::ClientContext> ctx = Ctx();
  AttachWorkerCredential(ctx.get(), worker);
  return ctx;
}

class ResumeCandidatesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    CoordinatorServerConfig config;
    config.listen = "127.0.0.1:0";
    config.state_path = ":memory:";
    auto server = CoordinatorServer::Start(config);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    auto channel =
        grpc::CreateChannel("127.0.0.1:" + std::to_string(server_->port()),
                            grpc::InsecureChannelCredentials());
    workers_ = v1::WorkerService::NewStub(channel);
    users_ = v1::UserService::NewStub(channel);
    v1::JobSpec spec = testing::MinimalJobSpec("fallback", 2, 2);
    spec.mutable_dataset()->set_synthetic_train_size(1000);
    spec.set_epochs(3);
    spec.set_max_restarts(5);
    spec.set_checkpoint_dir("/tmp/ckpt");
    spec.set_rendezvous_last_call_ms(0);
    v1::SubmitJobRequest req;
    *req.mutable_spec() = spec;
    v1::SubmitJobResponse resp;
    ASSERT_TRUE(users_->SubmitJob(Ctx().get(), req, &resp).ok());
    job_ = resp.job_id();
    for (int i = 0; i < 2; ++i) {
      v1::RegisterRequest reg;
      reg.set_hostname("sim");
      reg.set_pid(100 + i);
      reg.set_device("cpu");
      v1::RegisterResponse rr;
      ASSERT_TRUE(workers_->Register(Ctx().get(), reg, &rr).ok());
      v1::HeartbeatRequest hb;
      hb.set_worker_id(rr.worker_id());
      v1::HeartbeatResponse hr;
      const WorkerCredential worker{rr.worker_id(), rr.worker_token()};
      ASSERT_TRUE(workers_->Heartbeat(Ctx(worker).get(), hb, &hr).ok());
      ASSERT_EQ(hr.assignment().job_id(), job_);
      ids_.push_back(rr.worker_id());
      credentials_.push_back(worker);
    }
  }

  // Both workers join; returns the responses indexed by rank.
  std::vector<v1::JoinRendezvousResponse> JoinBoth() {
    std::vector<v1::JoinRendezvousResponse> got(2);
    std::vector<grpc::Status> status(2);
    std::vector<std::thread> threads;
    for (int i = 0; i < 2; ++i) {
      threads.emplace_back([&, i] {
        v1::JoinRendezvousRequest req;
        req.set_job_id(job_);
        req.set_worker_id(ids_[i]);
        req.set_timeout_ms(20000);
        status[i] =
            workers_->JoinRendezvous(Ctx(credentials_[i]).get(), req, &got[i]);
      });
    }
    for (auto& t : threads) t.join();
    for (const auto& s : status) EXPECT_TRUE(s.ok()) << s.error_message();
    holder_.assign(2, WorkerCredential());
    for (int i = 0; i < 2; ++i) {
      if (got[i].rank() >= 0 && got[i].rank() < 2) {
        holder_[got[i].rank()] = credentials_[i];
      }
    }
    if (got[0].rank() == 1) std::swap(got[0], got[1]);
    return got;
  }

  // `resumed`: the checkpoint the committing generation resumed from (0:
  // not said).
  grpc::Status Commit(int64_t gen, int64_t epoch, int64_t step, int64_t offset,
                      int64_t resumed = 0) {
    v1::CommitCheckpointRequest c;
    c.set_resumed_checkpoint_id(resumed);
    c.set_job_id(job_);
    c.set_generation(gen);
    c.set_rank(0);
    c.set_epoch(epoch);
    c.set_step(step);
    c.set_epoch_sample_offset(offset);
    c.set_path("/tmp/ckpt/fallback-step" + std::to_string(step) + ".ckpt");
    v1::CommitCheckpointResponse r;
    return workers_->CommitCheckpoint(Ctx(holder_[0]).get(), c, &r);
  }

  grpc::Status Shard(int64_t gen, int rank, int64_t epoch, int64_t resumed,
                     v1::ShardAssignment* out) {
    v1::GetShardRequest r;
    r.set_job_id(job_);
    r.set_generation(gen);
    r.set_rank(rank);
    r.set_epoch(epoch);
    r.set_dataset_size(1000);
    r.set_resume_checkpoint_id(resumed);
    return workers_->GetShard(Ctx(holder_[rank]).get(), r, out);
  }

  v1::Job Job() {
    v1::GetJobRequest r;
    r.set_job_id(job_);
    v1::Job job;
    EXPECT_TRUE(users_->GetJob(Ctx().get(), r, &job).ok());
    return job;
  }

  std::unique_ptr<CoordinatorServer> server_;
  std::unique_ptr<v1::WorkerService::Stub> workers_;
  std::unique_ptr<v1::UserService::Stub> users_;
  std::string job_;
  std::vector<std::string> ids_;
  std::vector<WorkerCredential> credentials_;  // Indexed like ids_.
  std::vector<WorkerCredential> holder_;       // By rank, since JoinBoth.
};

TEST_F(ResumeCandidatesTest, RanksResumeFromAnOlderCandidateTogether) {
  std::vector<v1::JoinRendezvousResponse> g1 = JoinBoth();
  EXPECT_EQ(g1[0].resume_candidates_size(), 0);
  EXPECT_EQ(g1[0].resume_from().checkpoint_id(), 0);
  const int64_t gen1 = g1[0].generation();
  ASSERT_TRUE(Commit(gen1, 0, 10, 200).ok());
  ASSERT_TRUE(Commit(gen1, 0, 20, 400).ok());
  ASSERT_TRUE(Commit(gen1, 1, 30, 0).ok());
  ASSERT_TRUE(Commit(gen1, 1, 40, 200).ok());

  // Joining again ends generation 1; generation 2 is offered the three
  // newest, newest first, resume_from being the newest.
  std::vector<v1::JoinRendezvousResponse> g2 = JoinBoth();
  const int64_t gen2 = g2[0].generation();
  ASSERT_GT(gen2, gen1);
  for (const auto& g : g2) {
    ASSERT_EQ(g.resume_candidates_size(), 3);
    EXPECT_EQ(g.resume_candidates(0).step(), 40);
    EXPECT_EQ(g.resume_candidates(1).step(), 30);
    EXPECT_EQ(g.resume_candidates(2).step(), 20);
    EXPECT_EQ(g.resume_from().checkpoint_id(),
              g.resume_candidates(0).checkpoint_id());
  }
  const v1::CheckpointRecord torn = g2[0].resume_candidates(0);
  const v1::CheckpointRecord older = g2[0].resume_candidates(2);  // Step 20.

  v1::ShardAssignment shard;
  // Not a candidate of this generation.
  EXPECT_EQ(Shard(gen2, 0, 0, 999, &shard).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  // Rank 1 loaded step 20 (epoch 0, offset 400): that offset, in epoch 0.
  ASSERT_TRUE(Shard(gen2, 1, 0, older.checkpoint_id(), &shard).ok());
  EXPECT_EQ(shard.start_offset(), 400);
  ASSERT_TRUE(Shard(gen2, 1, 1, older.checkpoint_id(), &shard).ok());
  EXPECT_EQ(shard.start_offset(), 0);
  // Rank 0 claiming another one is a disagreement.
  grpc::Status s = Shard(gen2, 0, 0, torn.checkpoint_id(), &shard);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(s.error_message().find("every rank must read the same"),
            std::string::npos)
      << s.error_message();
  ASSERT_TRUE(Shard(gen2, 0, 0, older.checkpoint_id(), &shard).ok());
  EXPECT_EQ(shard.start_offset(), 400);

  // The job went back to step 20: the generation's commits from there on
  // are accepted, and the skipped ones are never offered again.
  EXPECT_EQ(Job().last_checkpoint().checkpoint_id(), older.checkpoint_id());
  ASSERT_TRUE(Commit(gen2, 0, 25, 500).ok());
  std::vector<v1::JoinRendezvousResponse> g3 = JoinBoth();
  ASSERT_EQ(g3[0].resume_candidates_size(), 3);  // 40 and 30 are bad.
  EXPECT_EQ(g3[0].resume_candidates(0).step(), 25);
  EXPECT_EQ(g3[0].resume_candidates(1).step(), 20);
  EXPECT_EQ(g3[0].resume_candidates(2).step(), 10);
  // A worker that names none resumed from the first (older workers).
  ASSERT_TRUE(Shard(g3[0].generation(), 0, 0, 0, &shard).ok());
  EXPECT_EQ(shard.start_offset(), 500);
}

TEST_F(ResumeCandidatesTest,
       ACommitNamesTheCheckpointItsGenerationResumedFrom) {
  // Workers plan their shards themselves and never call GetShard: rank 0's
  // queued commits tell the coordinator where the generation resumed.
  const int64_t gen1 = JoinBoth()[0].generation();
  ASSERT_TRUE(Commit(gen1, 0, 10, 200).ok());
  ASSERT_TRUE(Commit(gen1, 0, 20, 400).ok());
  ASSERT_TRUE(Commit(gen1, 1, 30, 0).ok());
  ASSERT_TRUE(Commit(gen1, 1, 40, 200).ok());
  std::vector<v1::JoinRendezvousResponse> g2 = JoinBoth();
  const int64_t gen2 = g2[0].generation();
  ASSERT_EQ(g2[0].resume_candidates_size(), 3);
  const v1::CheckpointRecord older = g2[0].resume_candidates(2);  // Step 20.
  // Without the resume choice, a commit older than the job's last is
  // refused; naming no candidate is a mistake.
  EXPECT_EQ(Commit(gen2, 0, 25, 500).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(Commit(gen2, 0, 25, 500, 999).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  ASSERT_TRUE(Commit(gen2, 0, 25, 500, older.checkpoint_id()).ok());
  EXPECT_EQ(Job().last_checkpoint().step(), 25);
  // Sent again (its answer was lost): the same, once.
  ASSERT_TRUE(Commit(gen2, 0, 25, 500, older.checkpoint_id()).ok());
  // A rank naming another candidate is a disagreement, as in GetShard.
  v1::ShardAssignment shard;
  EXPECT_EQ(
      Shard(gen2, 1, 0, g2[0].resume_candidates(0).checkpoint_id(), &shard)
          .error_code(),
      grpc::StatusCode::FAILED_PRECONDITION);
  // The unreadable 40 and 30 are never offered again.
  std::vector<v1::JoinRendezvousResponse> g3 = JoinBoth();
  ASSERT_EQ(g3[0].resume_candidates_size(), 3);
  EXPECT_EQ(g3[0].resume_candidates(0).step(), 25);
  EXPECT_EQ(g3[0].resume_candidates(1).step(), 20);
  EXPECT_EQ(g3[0].resume_candidates(2).step(), 10);
}

TEST_F(ResumeCandidatesTest, AFatalReportFailsTheJobWithItsReason) {
  std::vector<v1::JoinRendezvousResponse> g = JoinBoth();
  v1::ReportProgressRequest r;
  r.set_job_id(job_);
  r.set_generation(g[1].generation());
  r.set_rank(1);
  r.set_fatal_error(std::string(5000, 'x'));
  v1::ReportProgressResponse resp;
  EXPECT_EQ(workers_->ReportProgress(Ctx(holder_[r.rank()]).get(), r, &resp)
                .error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(Job().state(), v1::JOB_STATE_RUNNING);
  r.set_fatal_error("no committed checkpoint could be read");
  ASSERT_TRUE(
      workers_->ReportProgress(Ctx(holder_[r.rank()]).get(), r, &resp).ok());
  const v1::Job job = Job();
  EXPECT_EQ(job.state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(job.message(), "rank 1: no committed checkpoint could be read");
  // The other rank's identical report finds the job over.
  r.set_rank(0);
  EXPECT_EQ(workers_->ReportProgress(Ctx(holder_[r.rank()]).get(), r, &resp)
                .error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
}

}  // namespace
}  // namespace ringleader
