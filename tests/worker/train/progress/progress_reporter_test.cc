#include "worker/train/progress/progress_reporter.h"

#include <atomic>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace ringleader {
namespace {

constexpr absl::Duration kWait = absl::Seconds(30);

v1::ReportProgressRequest Step(int64_t s, int64_t eval_epoch = 0) {
  v1::ReportProgressRequest r;
  r.set_step(s);
  r.set_eval_epoch(eval_epoch);
  return r;
}

// What a send saw, and a gate that holds sends back (a coordinator that
// does not answer) until it opens.
class Coordinator {
 public:
  ProgressReporter::Send Send() {
    return [this](const v1::ReportProgressRequest& r,
                  const std::atomic<bool>* cancel) {
      absl::MutexLock lock(&mu_);
      ++attempts_;
      auto open = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return open_; };
      // Tries with a deadline each, as the client's, until cancelled.
      while (!mu_.AwaitWithTimeout(absl::Condition(&open),
                                   absl::Milliseconds(10))) {
        if (cancel->load()) return absl::DeadlineExceededError("no answer");
      }
      received_.push_back(r);
      return answer_;
    };
  }
  void Open(absl::Status answer = absl::OkStatus()) {
    absl::MutexLock lock(&mu_);
    answer_ = answer;
    open_ = true;
  }
  // Blocks until `n` sends were attempted.
  void WaitForAttempts(int n) {
    absl::MutexLock lock(&mu_);
    auto reached = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return attempts_ >= n;
    };
    ASSERT_TRUE(mu_.AwaitWithTimeout(absl::Condition(&reached), kWait));
  }
  std::vector<v1::ReportProgressRequest> received() {
    absl::MutexLock lock(&mu_);
    return received_;
  }

 private:
  absl::Mutex mu_;
  bool open_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status answer_ ABSL_GUARDED_BY(mu_);
  int attempts_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<v1::ReportProgressRequest> received_ ABSL_GUARDED_BY(mu_);
};

std::vector<int64_t> Steps(const std::vector<v1::ReportProgressRequest>& rs) {
  std::vector<int64_t> out;
  for (const auto& r : rs) out.push_back(r.step());
  return out;
}

TEST(ProgressReporterTest, SendsInOrderAndCoalescesWhileBusy) {
  Coordinator coordinator;
  ProgressReporter reporter(coordinator.Send());
  reporter.Submit(Step(1));
  coordinator.WaitForAttempts(1);
  // Submit never blocks, even while a send is stuck.
  for (int s = 2; s <= 100; ++s) reporter.Submit(Step(s));
  coordinator.Open();
  ASSERT_TRUE(reporter.Flush(kWait).ok());
  // The one in flight, then only the latest.
  EXPECT_EQ(Steps(coordinator.received()), (std::vector<int64_t>{1, 100}));
  EXPECT_EQ(reporter.sent(), 2);
}

TEST(ProgressReporterTest, EvaluationsAndTheFinalReportAreNeverDropped) {
  Coordinator coordinator;
  ProgressReporter reporter(coordinator.Send());
  reporter.Submit(Step(1));
  coordinator.WaitForAttempts(1);
  // The coordinator is away across two epochs' evaluations: each later
  // report repeats only the latest evaluation, so each must go through.
  reporter.Submit(Step(2));
  reporter.Submit(Step(3, /*eval_epoch=*/1));
  reporter.Submit(Step(4, 1));
  reporter.Submit(Step(5, 1));
  reporter.Submit(Step(6, 2));
  reporter.Submit(Step(7, 2));
  v1::ReportProgressRequest final_report = Step(8, 2);
  final_report.set_finished(true);
  reporter.Submit(final_report);
  reporter.Submit(Step(9, 2));  // Nothing replaces the final one either.
  coordinator.Open();
  ASSERT_TRUE(reporter.Flush(kWait).ok());
  EXPECT_EQ(Steps(coordinator.received()),
            (std::vector<int64_t>{1, 2, 3, 5, 6, 7, 8, 9}));
}

TEST(ProgressReporterTest, DeliverWaitsForItsOwnOutcome) {
  Coordinator coordinator;
  ProgressReporter reporter(coordinator.Send());
  reporter.Submit(Step(1));
  coordinator.WaitForAttempts(1);
  // Not answered in time: DEADLINE_EXCEEDED, and the report stays queued.
  EXPECT_TRUE(absl::IsDeadlineExceeded(
      reporter.Deliver(Step(2), absl::Milliseconds(50))));
  coordinator.Open();
  EXPECT_TRUE(reporter.Deliver(Step(3), kWait).ok());
  EXPECT_EQ(Steps(coordinator.received()), (std::vector<int64_t>{1, 2, 3}));
  coordinator.Open(absl::FailedPreconditionError("job is FAILED"));
  EXPECT_TRUE(absl::IsFailedPrecondition(reporter.Deliver(Step(4), kWait)));
}

TEST(ProgressReporterTest, FlushReportsErrors) {
  Coordinator coordinator;
  coordinator.Open(absl::UnavailableError("coordinator down"));
  ProgressReporter reporter(coordinator.Send());
  reporter.Submit(Step(1));
  EXPECT_TRUE(absl::IsUnavailable(reporter.Flush(kWait)));
  EXPECT_TRUE(reporter.Flush(kWait).ok());  // Cleared.
}

TEST(ProgressReporterTest, GoingAwayCancelsTheSendInFlight) {
  Coordinator coordinator;
  {
    ProgressReporter reporter(coordinator.Send());
    reporter.Submit(Step(1));
    coordinator.WaitForAttempts(1);
    reporter.Submit(Step(2));
  }  // Returns although the coordinator never answers.
  EXPECT_TRUE(coordinator.received().empty());
}

}  // namespace
}  // namespace ringleader
