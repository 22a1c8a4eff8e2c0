// WorkerService.WatchGeneration over real gRPC: a watching member hears the
// moment its generation ends (a member left, the job was cancelled), or at
// once when it has ended already; requests are checked as a heartbeat's;
// one stream per worker; a stream the client cancels withdraws its watch,
// and a member's stream that goes away first ends its generation.
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "ringleader/v1/user_service.grpc.pb.h"
#include "ringleader/v1/worker_service.grpc.pb.h"
#include "tests/testing/form_generation.h"
#include "tests/testing/in_process_coordinator.h"
#include "tests/testing/job_specs.h"

namespace ringleader {
namespace {

using grpc::StatusCode;
using Reader = grpc::ClientReader<v1::GenerationEvent>;

class GenerationWatchTest : public ::testing::Test {
 protected:
  void Form(int world, CoordinatorServerConfig config =
                           testing::InProcessCoordinator::Config()) {
    auto c = testing::InProcessCoordinator::Start(config);
    ASSERT_TRUE(c.ok()) << c.status();
    coordinator_ = *std::move(c);
    // One member leaving ends the generation, not the job: it rejoins.
    v1::JobSpec spec = testing::MinimalJobSpec("watched", 1, world);
    spec.set_max_restarts(3);
    spec.set_rendezvous_last_call_ms(60000);  // Forms at max_workers.
    testing::FormedJob formed =
        testing::SubmitAndForm(*coordinator_, spec, world);
    job_ = formed.job_id;
    stubs_ = std::move(formed.stubs);
    formed_ = formed.formed;
  }

  GenerationWatchers& watchers() {
    return coordinator_->server().coordinator().generation_watchers();
  }

  struct Open {
    std::unique_ptr<grpc::ClientContext> ctx;
    std::unique_ptr<Reader> reader;
  };
  // A watch of `generation` by the worker holding `rank`, with its
  // credential (or `as`, when given).
  Open Watch(int rank, int64_t generation, const std::string& job = "",
             const WorkerCredential* as = nullptr) {
    const WorkerCredential& c =
        as != nullptr ? *as : formed_.credential_by_rank[rank];
    Open o;
    o.ctx = testing::ClientContext(c);
    v1::WatchGenerationRequest req;
    req.set_worker_id(c.worker_id);
    req.set_job_id(job.empty() ? job_ : job);
    req.set_generation(generation);
    o.reader =
        stubs_[formed_.stub_by_rank[rank]]->WatchGeneration(o.ctx.get(), req);
    return o;
  }
  // The one event of an open watch, and the call's end (OK).
  v1::GenerationAbort EventOf(Open& o) {
    v1::GenerationEvent event;
    EXPECT_TRUE(o.reader->Read(&event));
    EXPECT_FALSE(o.reader->Read(&event));
    const grpc::Status s = o.reader->Finish();
    EXPECT_TRUE(s.ok()) << s.error_code() << " " << s.error_message();
    return event.ended();
  }
  // The code a refused watch ends with (no event).
  StatusCode RefusalOf(Open& o) {
    v1::GenerationEvent event;
    EXPECT_FALSE(o.reader->Read(&event));
    return o.reader->Finish().error_code();
  }
  void LeaveAs(int rank) {
    v1::LeaveRequest req;
    req.set_worker_id(formed_.worker_by_rank[rank]);
    req.set_reason("test");
    v1::LeaveResponse resp;
    ASSERT_TRUE(
        stubs_[formed_.stub_by_rank[rank]]
            ->Leave(
                testing::ClientContext(formed_.credential_by_rank[rank]).get(),
                req, &resp)
            .ok());
  }

  std::unique_ptr<testing::InProcessCoordinator> coordinator_;
  std::vector<std::unique_ptr<v1::WorkerService::Stub>> stubs_;
  std::string job_;
  testing::FormedGeneration formed_;
};

TEST_F(GenerationWatchTest, AMemberLeavingIsPushedToTheOthers) {
  Form(3);
  ASSERT_FALSE(HasFailure());
  Open w0 = Watch(0, formed_.generation);
  Open w1 = Watch(1, formed_.generation);
  ASSERT_TRUE(
      watchers().AwaitWatching(formed_.worker_by_rank[0], absl::Seconds(30)));
  ASSERT_TRUE(
      watchers().AwaitWatching(formed_.worker_by_rank[1], absl::Seconds(30)));
  LeaveAs(2);
  for (Open* o : {&w0, &w1}) {
    const v1::GenerationAbort ended = EventOf(*o);
    EXPECT_EQ(ended.job_id(), job_);
    EXPECT_EQ(ended.generation(), formed_.generation);
    EXPECT_TRUE(ended.rejoin());
    EXPECT_NE(ended.reason().find(formed_.worker_by_rank[2]), std::string::npos)
        << ended.reason();
  }
  EXPECT_EQ(watchers().Size(), 0);
}

// A kill -9 closes the worker's connections: its open watch goes away
// before its generation ended. That ends the generation at once (no lease to
// wait out), and the survivors, the only members expected back, form the
// next one without waiting out the last call (60 s here).
TEST_F(GenerationWatchTest, AMembersWatchGoingAwayEndsItsGeneration) {
  Form(3);
  ASSERT_FALSE(HasFailure());
  Open w0 = Watch(0, formed_.generation);
  Open w1 = Watch(1, formed_.generation);
  Open w2 = Watch(2, formed_.generation);
  for (int rank = 0; rank < 3; ++rank) {
    ASSERT_TRUE(watchers().AwaitWatching(formed_.worker_by_rank[rank],
                                         absl::Seconds(30)));
  }
  w2.ctx->TryCancel();  // What the kernel does to a killed process's stream.
  for (Open* o : {&w0, &w1}) {
    const v1::GenerationAbort ended = EventOf(*o);
    EXPECT_EQ(ended.generation(), formed_.generation);
    EXPECT_TRUE(ended.rejoin());
    EXPECT_NE(ended.reason().find(formed_.worker_by_rank[2] +
                                  " on host closed its connection"),
              std::string::npos)
        << ended.reason();
  }
  std::vector<v1::JoinRendezvousResponse> joined(2);
  std::vector<grpc::Status> status(2);
  std::vector<std::thread> joins;
  for (int rank = 0; rank < 2; ++rank) {
    joins.emplace_back([&, rank] {
      v1::JoinRendezvousRequest req;
      req.set_job_id(job_);
      req.set_worker_id(formed_.worker_by_rank[rank]);
      req.set_timeout_ms(20000);
      status[rank] = stubs_[formed_.stub_by_rank[rank]]->JoinRendezvous(
          testing::ClientContext(formed_.credential_by_rank[rank]).get(), req,
          &joined[rank]);
    });
  }
  for (std::thread& t : joins) t.join();
  for (int rank = 0; rank < 2; ++rank) {
    ASSERT_TRUE(status[rank].ok()) << status[rank].error_message();
    EXPECT_EQ(joined[rank].generation(), formed_.generation + 1);
    EXPECT_EQ(joined[rank].world_size(), 2);
  }
}

// The last rank dies after its peers sent their final reports and went
// away: once no member is heard, the leases alone would read it as the
// coordinator's own link down and keep the generation for
// silent_generation_limit (5 min). Its closed stream ends its part at once:
// the generation trained to its end, so the job SUCCEEDS with the finished
// rank's evaluation, saying whose is missing; the finished peer's closed
// stream ended nothing.
TEST_F(GenerationWatchTest, TheLastRankDyingAfterItsPeersFinishedEndsAtOnce) {
  Form(2);
  ASSERT_FALSE(HasFailure());
  Open w0 = Watch(0, formed_.generation);
  Open w1 = Watch(1, formed_.generation);
  for (int rank = 0; rank < 2; ++rank) {
    ASSERT_TRUE(watchers().AwaitWatching(formed_.worker_by_rank[rank],
                                         absl::Seconds(30)));
  }
  v1::ReportProgressRequest final_report;
  final_report.set_job_id(job_);
  final_report.set_generation(formed_.generation);
  final_report.set_rank(1);
  final_report.set_step(10);
  final_report.set_loss(0.5);
  final_report.set_finished(true);
  v1::ReportProgressResponse resp;
  const grpc::Status reported = stubs_[formed_.stub_by_rank[1]]->ReportProgress(
      testing::ClientContext(formed_.credential_by_rank[1]).get(), final_report,
      &resp);
  ASSERT_TRUE(reported.ok()) << reported.error_message();
  w1.ctx->TryCancel();  // The finished rank exits.
  EXPECT_EQ(RefusalOf(w1), StatusCode::CANCELLED);
  EXPECT_TRUE(watchers().AwaitSizeAtMost(1, absl::Seconds(30)));
  v1::GetJobRequest get;
  get.set_job_id(job_);
  v1::Job job;
  ASSERT_TRUE(coordinator_->users()
                  .GetJob(testing::ClientContext().get(), get, &job)
                  .ok());
  EXPECT_EQ(job.state(), v1::JOB_STATE_RUNNING);
  // The job's states as they change (the first snapshot is RUNNING).
  auto watch_ctx = testing::ClientContext();
  watch_ctx->set_deadline(std::chrono::system_clock::now() +
                          std::chrono::seconds(30));
  v1::WatchJobRequest watch_job;
  watch_job.set_job_id(job_);
  auto states = coordinator_->users().WatchJob(watch_ctx.get(), watch_job);
  ASSERT_TRUE(states->Read(&job));
  ASSERT_EQ(job.state(), v1::JOB_STATE_RUNNING);
  w0.ctx->TryCancel();  // Rank 0 is killed before its final report.
  EXPECT_EQ(RefusalOf(w0), StatusCode::CANCELLED);
  for (int n = 0; n < 100 && job.state() == v1::JOB_STATE_RUNNING; ++n) {
    ASSERT_TRUE(states->Read(&job)) << "no state change in 30 s";
  }
  EXPECT_EQ(job.state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(job.restarts(), 0);
  EXPECT_NE(job.message().find("1 of 2 ranks finished"), std::string::npos)
      << job.message();
  EXPECT_NE(job.message().find("rank 0 (worker"), std::string::npos)
      << job.message();
  EXPECT_NE(job.message().find("closed its connection"), std::string::npos)
      << job.message();
  watch_ctx->TryCancel();
  (void)states->Finish();
}

TEST_F(GenerationWatchTest, AGenerationThatEndedIsAnsweredAtOnce) {
  Form(2);
  ASSERT_FALSE(HasFailure());
  LeaveAs(1);
  Open w = Watch(0, formed_.generation);
  const v1::GenerationAbort ended = EventOf(w);
  EXPECT_EQ(ended.generation(), formed_.generation);
  EXPECT_TRUE(ended.rejoin());
  // Told why, as a member watching when it ended is.
  EXPECT_NE(ended.reason().find(formed_.worker_by_rank[1]), std::string::npos)
      << ended.reason();
}

TEST_F(GenerationWatchTest, ACancelledJobIsPushedWithoutRejoin) {
  Form(2);
  ASSERT_FALSE(HasFailure());
  Open w = Watch(0, formed_.generation);
  ASSERT_TRUE(
      watchers().AwaitWatching(formed_.worker_by_rank[0], absl::Seconds(30)));
  v1::CancelJobRequest cancel;
  cancel.set_job_id(job_);
  v1::Job job;
  ASSERT_TRUE(coordinator_->users()
                  .CancelJob(testing::ClientContext().get(), cancel, &job)
                  .ok());
  const v1::GenerationAbort ended = EventOf(w);
  EXPECT_FALSE(ended.rejoin());
  EXPECT_NE(ended.reason().find("CANCELLED"), std::string::npos)
      << ended.reason();
}

TEST_F(GenerationWatchTest, BadRequestsGetTheirCodes) {
  Form(2);
  ASSERT_FALSE(HasFailure());
  Open zero = Watch(0, 0);
  EXPECT_EQ(RefusalOf(zero), StatusCode::INVALID_ARGUMENT);
  Open future = Watch(0, formed_.generation + 1);
  EXPECT_EQ(RefusalOf(future), StatusCode::FAILED_PRECONDITION);
  Open other_job = Watch(0, formed_.generation, "no-such-job");
  EXPECT_EQ(RefusalOf(other_job), StatusCode::FAILED_PRECONDITION);
  const WorkerCredential stranger{"no-such-worker", "00"};
  Open unknown = Watch(0, formed_.generation, "", &stranger);
  EXPECT_EQ(RefusalOf(unknown), StatusCode::NOT_FOUND);
  WorkerCredential forged = formed_.credential_by_rank[0];
  forged.token = "not-the-token";
  Open bad_token = Watch(0, formed_.generation, "", &forged);
  EXPECT_EQ(RefusalOf(bad_token), StatusCode::UNAUTHENTICATED);
  // Without any credential.
  grpc::ClientContext ctx;
  v1::WatchGenerationRequest req;
  req.set_worker_id(formed_.worker_by_rank[0]);
  req.set_job_id(job_);
  req.set_generation(formed_.generation);
  auto reader = stubs_[0]->WatchGeneration(&ctx, req);
  v1::GenerationEvent event;
  EXPECT_FALSE(reader->Read(&event));
  EXPECT_EQ(reader->Finish().error_code(), StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(watchers().Size(), 0);
}

TEST_F(GenerationWatchTest, OneStreamPerWorkerAndCancelWithdraws) {
  Form(2);
  ASSERT_FALSE(HasFailure());
  Open first = Watch(0, formed_.generation);
  ASSERT_TRUE(
      watchers().AwaitWatching(formed_.worker_by_rank[0], absl::Seconds(30)));
  Open second = Watch(0, formed_.generation);
  EXPECT_EQ(RefusalOf(first), StatusCode::ALREADY_EXISTS);
  ASSERT_TRUE(
      watchers().AwaitWatching(formed_.worker_by_rank[0], absl::Seconds(30)));
  EXPECT_EQ(watchers().Size(), 1);
  second.ctx->TryCancel();
  EXPECT_EQ(RefusalOf(second), StatusCode::CANCELLED);
  EXPECT_TRUE(watchers().AwaitSizeAtMost(0, absl::Seconds(30)));
}

TEST_F(GenerationWatchTest, OffItIsUnimplemented) {
  CoordinatorServerConfig config = testing::InProcessCoordinator::Config();
  config.options.push_generation_end = false;
  Form(2, config);
  ASSERT_FALSE(HasFailure());
  Open w = Watch(0, formed_.generation);
  EXPECT_EQ(RefusalOf(w), StatusCode::UNIMPLEMENTED);
}

}  // namespace
}  // namespace ringleader
