// WorkerService.WatchGeneration over real gRPC: a watching member hears the
// moment its generation ends (a member left, the job was cancelled), or at
// once when it has ended already; requests are checked as a heartbeat's;
// one stream per worker; a stream the client cancels withdraws its watch.
#include <memory>
#include <string>
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

TEST_F(GenerationWatchTest, AGenerationThatEndedIsAnsweredAtOnce) {
  Form(2);
  ASSERT_FALSE(HasFailure());
  LeaveAs(1);
  Open w = Watch(0, formed_.generation);
  const v1::GenerationAbort ended = EventOf(w);
  EXPECT_EQ(ended.generation(), formed_.generation);
  EXPECT_TRUE(ended.rejoin());
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
