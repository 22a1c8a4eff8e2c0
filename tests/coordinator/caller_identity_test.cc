// Issue 17, point 7, over the real gRPC service: a client that never
// registered, a worker of another job or another rank, and a wrong token
// cannot act for a rank; commits outside the job's checkpoint_dir, at an
// absurd epoch or step are refused and leave honest commits working.
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/form_generation.h"
#include "tests/testing/in_process_coordinator.h"
#include "tests/testing/job_specs.h"

namespace ringleader {
namespace {

using grpc::StatusCode;
using testing::ClientContext;
using testing::InProcessCoordinator;

constexpr char kDir[] = "/tmp/ringleader-identity";

class CallerIdentityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto c = InProcessCoordinator::Start();
    ASSERT_TRUE(c.ok()) << c.status();
    coord_ = *std::move(c);
  }

  // A 2-rank job of two epochs, formed over `n` fresh channels.
  testing::FormedGeneration Form(const std::string& name, int first_pid) {
    v1::SubmitJobRequest sub;
    *sub.mutable_spec() = testing::MinimalJobSpec(name, 2, 2);
    sub.mutable_spec()->set_epochs(2);
    sub.mutable_spec()->set_checkpoint_dir(kDir);
    v1::SubmitJobResponse job;
    EXPECT_TRUE(
        coord_->users().SubmitJob(ClientContext().get(), sub, &job).ok());
    job_ids_.push_back(job.job_id());
    std::vector<v1::WorkerService::Stub*> stubs;
    for (int i = 0; i < 2; ++i) {
      stubs_.push_back(v1::WorkerService::NewStub(coord_->NewChannel()));
      stubs.push_back(stubs_.back().get());
    }
    return testing::FormGeneration(stubs, job.job_id(), "host", first_pid,
                                   10'000);
  }

  grpc::Status Report(const std::string& job, int64_t gen, int32_t rank,
                      std::unique_ptr<grpc::ClientContext> ctx) {
    v1::ReportProgressRequest r;
    r.set_job_id(job);
    r.set_generation(gen);
    r.set_rank(rank);
    r.set_step(1);
    r.set_finished(true);
    v1::ReportProgressResponse out;
    return coord_->workers().ReportProgress(ctx.get(), r, &out);
  }

  grpc::Status Commit(const std::string& job, int64_t gen,
                      const WorkerCredential& who, const std::string& path,
                      int64_t epoch, int64_t step) {
    v1::CommitCheckpointRequest c;
    c.set_job_id(job);
    c.set_generation(gen);
    c.set_rank(0);
    c.set_epoch(epoch);
    c.set_step(step);
    c.set_path(path);
    v1::CommitCheckpointResponse out;
    return coord_->workers().CommitCheckpoint(ClientContext(who).get(), c,
                                              &out);
  }

  v1::JobState State(const std::string& job) {
    v1::GetJobRequest r;
    r.set_job_id(job);
    v1::Job out;
    EXPECT_TRUE(coord_->users().GetJob(ClientContext().get(), r, &out).ok());
    return out.state();
  }

  std::unique_ptr<InProcessCoordinator> coord_;
  std::vector<std::unique_ptr<v1::WorkerService::Stub>> stubs_;
  std::vector<std::string> job_ids_;
};

TEST_F(CallerIdentityTest, AnUnregisteredClientCannotFinishAJob) {
  testing::FormedGeneration g = Form("unregistered", 100);
  const std::string& job = job_ids_[0];
  for (int32_t rank = 0; rank < 2; ++rank) {
    EXPECT_EQ(Report(job, g.generation, rank, ClientContext()).error_code(),
              StatusCode::UNAUTHENTICATED);
  }
  EXPECT_EQ(State(job), v1::JOB_STATE_RUNNING);
}

TEST_F(CallerIdentityTest, OnlyTheRankHolderWithItsTokenActsForTheRank) {
  testing::FormedGeneration a = Form("job-a", 200);
  testing::FormedGeneration b = Form("job-b", 300);
  const std::string& job = job_ids_[0];
  // The other rank of the same job, and a worker of another job.
  EXPECT_EQ(Report(job, a.generation, 0, ClientContext(a.credential_by_rank[1]))
                .error_code(),
            StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(Report(job, a.generation, 0, ClientContext(b.credential_by_rank[0]))
                .error_code(),
            StatusCode::PERMISSION_DENIED);
  WorkerCredential forged = a.credential_by_rank[0];
  forged.token = std::string(32, '0');
  EXPECT_EQ(Report(job, a.generation, 0, ClientContext(forged)).error_code(),
            StatusCode::UNAUTHENTICATED);
  // Nobody may keep another's lease alive or make it leave.
  v1::LeaveRequest leave;
  leave.set_worker_id(a.worker_by_rank[0]);
  v1::LeaveResponse left;
  EXPECT_EQ(
      coord_->workers()
          .Leave(ClientContext(b.credential_by_rank[0]).get(), leave, &left)
          .error_code(),
      StatusCode::UNAUTHENTICATED);
  // KV calls: members only.
  v1::KvSetRequest set;
  set.set_job_id(job);
  set.set_generation(a.generation);
  set.set_key("k");
  v1::KvSetResponse set_out;
  EXPECT_EQ(
      coord_->workers()
          .KvSet(ClientContext(b.credential_by_rank[1]).get(), set, &set_out)
          .error_code(),
      StatusCode::PERMISSION_DENIED);
  EXPECT_TRUE(
      coord_->workers()
          .KvSet(ClientContext(a.credential_by_rank[1]).get(), set, &set_out)
          .ok());
  EXPECT_EQ(State(job), v1::JOB_STATE_RUNNING);
  // The holders themselves finish it.
  for (int32_t rank = 0; rank < 2; ++rank) {
    grpc::Status s = Report(job, a.generation, rank,
                            ClientContext(a.credential_by_rank[rank]));
    EXPECT_TRUE(s.ok()) << s.error_message();
  }
  EXPECT_EQ(State(job), v1::JOB_STATE_SUCCEEDED);
}

TEST_F(CallerIdentityTest, AbsurdCommitsAreRefusedAndHonestOnesStillWork) {
  testing::FormedGeneration g = Form("commits", 400);
  const std::string& job = job_ids_[0];
  const WorkerCredential& rank0 = g.credential_by_rank[0];
  const std::string dir = kDir;
  for (const auto& [path, epoch, step] :
       {std::make_tuple(dir + "/../../../etc/passwd", int64_t{0}, int64_t{1}),
        std::make_tuple(std::string("/etc/passwd"), int64_t{0}, int64_t{1}),
        std::make_tuple(std::string("../../../etc/passwd"), int64_t{0},
                        int64_t{1}),
        std::make_tuple(dir + "/a.ckpt", int64_t{1'000'000'000'000},
                        int64_t{1}),
        std::make_tuple(dir + "/b.ckpt", int64_t{0}, INT64_MAX)}) {
    grpc::Status s = Commit(job, g.generation, rank0, path, epoch, step);
    EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT)
        << path << " " << epoch << " " << step << ": " << s.error_message();
  }
  // Rank 1 commits nothing, whatever it sends.
  EXPECT_EQ(
      Commit(job, g.generation, g.credential_by_rank[1], dir + "/c.ckpt", 0, 1)
          .error_code(),
      StatusCode::PERMISSION_DENIED);
  grpc::Status honest =
      Commit(job, g.generation, rank0, dir + "/s5.ckpt", 0, 5);
  EXPECT_TRUE(honest.ok()) << honest.error_message();
}

}  // namespace
}  // namespace ringleader
