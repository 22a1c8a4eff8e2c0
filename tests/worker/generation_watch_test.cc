// GenerationWatch against a real in-process coordinator: the worker hears
// the end of its generation from the stream; a coordinator that does not
// serve the call is not asked again; a generation the coordinator refuses
// is retried a bounded number of times; Stop cancels an open stream.
#include "worker/generation_watch.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "ringleader/v1/user_service.grpc.pb.h"
#include "tests/testing/form_generation.h"
#include "tests/testing/in_process_coordinator.h"
#include "tests/testing/job_specs.h"

namespace ringleader {
namespace {

constexpr absl::Duration kWait = absl::Seconds(30);

class GenerationWatchTest : public ::testing::Test {
 protected:
  void Form(bool push = true) {
    CoordinatorServerConfig config = testing::InProcessCoordinator::Config();
    config.options.push_generation_end = push;
    auto c = testing::InProcessCoordinator::Start(config);
    ASSERT_TRUE(c.ok()) << c.status();
    coordinator_ = *std::move(c);
    // Rank 1 leaving ends the generation, not the job: rank 0 rejoins.
    v1::JobSpec spec = testing::MinimalJobSpec("watched", 1, 2);
    spec.set_max_restarts(3);
    spec.set_rendezvous_last_call_ms(60000);  // Forms at max_workers.
    testing::FormedJob formed = testing::SubmitAndForm(*coordinator_, spec, 2);
    job_ = formed.job_id;
    stubs_ = std::move(formed.stubs);
    formed_ = formed.formed;
  }

  // The watch of the worker holding rank 0.
  std::unique_ptr<GenerationWatch> NewWatch() {
    GenerationWatch::Options o;
    o.channel = [this] { return coordinator_->NewChannel(); };
    o.credential = [this] { return formed_.credential_by_rank[0]; };
    o.on_ended = [this](const v1::GenerationAbort& a) {
      ended_ = a;
      heard_.Notify();
    };
    o.first_backoff = absl::Milliseconds(10);
    return std::make_unique<GenerationWatch>(std::move(o));
  }

  GenerationWatchers& watchers() {
    return coordinator_->server().coordinator().generation_watchers();
  }

  void LeaveRank1() {
    v1::LeaveRequest req;
    req.set_worker_id(formed_.worker_by_rank[1]);
    v1::LeaveResponse resp;
    ASSERT_TRUE(
        stubs_[formed_.stub_by_rank[1]]
            ->Leave(testing::ClientContext(formed_.credential_by_rank[1]).get(),
                    req, &resp)
            .ok());
  }

  // Rank 0 sends its final report: it may now leave the generation
  // without ending it (a member's watch that goes away otherwise reads as
  // its process gone, and ends the generation).
  void FinishRank0() {
    v1::ReportProgressRequest req;
    req.set_job_id(job_);
    req.set_generation(formed_.generation);
    req.set_rank(0);
    req.set_step(1);
    req.set_loss(0.5);
    req.set_finished(true);
    v1::ReportProgressResponse resp;
    ASSERT_TRUE(
        stubs_[formed_.stub_by_rank[0]]
            ->ReportProgress(
                testing::ClientContext(formed_.credential_by_rank[0]).get(),
                req, &resp)
            .ok());
  }

  std::unique_ptr<testing::InProcessCoordinator> coordinator_;
  std::vector<std::unique_ptr<v1::WorkerService::Stub>> stubs_;
  std::string job_;
  testing::FormedGeneration formed_;
  absl::Notification heard_;
  v1::GenerationAbort ended_;  // Written before heard_ is notified.
};

TEST_F(GenerationWatchTest, HearsTheEndOfItsGeneration) {
  Form();
  ASSERT_FALSE(HasFailure());
  auto watch = NewWatch();
  watch->Set(job_, formed_.generation);
  ASSERT_TRUE(watchers().AwaitWatching(formed_.worker_by_rank[0], kWait));
  LeaveRank1();
  ASSERT_TRUE(heard_.WaitForNotificationWithTimeout(kWait));
  EXPECT_EQ(ended_.job_id(), job_);
  EXPECT_EQ(ended_.generation(), formed_.generation);
  EXPECT_TRUE(ended_.rejoin());
  // One stream, and none again for the generation that ended.
  EXPECT_TRUE(watch->AwaitIdle(kWait));
  EXPECT_EQ(watch->opened(), 1);
  EXPECT_FALSE(watch->unsupported());
}

TEST_F(GenerationWatchTest, AnOlderCoordinatorIsNotAskedAgain) {
  Form(/*push=*/false);
  ASSERT_FALSE(HasFailure());
  auto watch = NewWatch();
  watch->Set(job_, formed_.generation);
  ASSERT_TRUE(watch->AwaitIdle(kWait));
  EXPECT_TRUE(watch->unsupported());
  watch->Set(job_, formed_.generation + 1);  // Not even for the next one.
  EXPECT_TRUE(watch->AwaitIdle(kWait));
  EXPECT_EQ(watch->opened(), 1);
  EXPECT_FALSE(heard_.HasBeenNotified());
}

TEST_F(GenerationWatchTest, RefusedWatchesAreRetriedBoundedly) {
  Form();
  ASSERT_FALSE(HasFailure());
  auto watch = NewWatch();
  // Not formed: FAILED_PRECONDITION at each try.
  watch->Set(job_, formed_.generation + 5);
  ASSERT_TRUE(watch->AwaitIdle(kWait));
  EXPECT_EQ(watch->opened(), GenerationWatch::kMaxTries);
  EXPECT_FALSE(watch->unsupported());
  EXPECT_FALSE(heard_.HasBeenNotified());
}

TEST_F(GenerationWatchTest, StopAndRetargetCancelTheOpenStream) {
  Form();
  ASSERT_FALSE(HasFailure());
  FinishRank0();
  ASSERT_FALSE(HasFailure());
  auto watch = NewWatch();
  watch->Set(job_, formed_.generation);
  ASSERT_TRUE(watchers().AwaitWatching(formed_.worker_by_rank[0], kWait));
  watch->Set(job_, 0);  // Out of the generation: the stream goes.
  EXPECT_TRUE(watch->AwaitIdle(kWait));
  EXPECT_TRUE(watchers().AwaitSizeAtMost(0, kWait));
  watch->Set(job_, formed_.generation);
  ASSERT_TRUE(watchers().AwaitWatching(formed_.worker_by_rank[0], kWait));
  watch->Stop();  // Returns with the stream open: it is cancelled.
  EXPECT_TRUE(watchers().AwaitSizeAtMost(0, kWait));
  EXPECT_EQ(watch->opened(), 2);
  EXPECT_FALSE(heard_.HasBeenNotified());
  // A finished member's streams ended nothing.
  EXPECT_TRUE(coordinator_->server()
                  .coordinator()
                  .rendezvous()
                  .CheckMember(job_, formed_.generation, 0)
                  .ok());
}

}  // namespace
}  // namespace ringleader
