#include "worker/logs/job_log_shipper.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "glog/logging.h"
#include "gtest/gtest.h"

namespace ringleader {
namespace {

// The coordinator's side of AppendLogs, answering each call with the next
// of `answers` (then OK) and keeping the lines of the calls it accepted.
class FakeCoordinator {
 public:
  explicit FakeCoordinator(std::vector<absl::Status> answers = {})
      : answers_(std::move(answers)) {}

  absl::Status Append(v1::AppendLogsRequest& r) {
    absl::MutexLock lock(&mu_);
    r.set_worker_id("w");
    ++calls_;
    absl::Status answer;
    if (next_ < answers_.size()) answer = answers_[next_++];
    if (!answer.ok()) return answer;
    dropped_ += r.dropped();
    largest_call_ = std::max(largest_call_, r.lines_size());
    for (const v1::LogLine& line : r.lines()) {
      if (line.text().rfind("t", 0) == 0) texts_.push_back(line.text());
    }
    return absl::OkStatus();
  }
  std::vector<std::string> texts() const {
    absl::MutexLock lock(&mu_);
    return texts_;
  }
  int largest_call() const {
    absl::MutexLock lock(&mu_);
    return largest_call_;
  }
  int calls() const {
    absl::MutexLock lock(&mu_);
    return calls_;
  }

 private:
  mutable absl::Mutex mu_;
  std::vector<absl::Status> answers_;
  size_t next_ = 0;
  int calls_ = 0;
  int largest_call_ = 0;
  int64_t dropped_ = 0;
  std::vector<std::string> texts_;
};

JobLogShipper::Send To(FakeCoordinator& c) {
  return [&c](v1::AppendLogsRequest& r) { return c.Append(r); };
}

// A shipper whose rounds only Flush starts (a long interval).
JobLogShipper::Options Manual() {
  JobLogShipper::Options o;
  o.interval = absl::Hours(1);
  return o;
}

TEST(JobLogShipperTest, FlushSendsWhatWasLogged) {
  JobLogCapture capture({});
  FakeCoordinator coordinator;
  JobLogShipper shipper(&capture, To(coordinator), Manual());
  capture.BeginJob("job");
  LOG(INFO) << "t1";
  LOG(INFO) << "t2";
  ASSERT_TRUE(shipper.Flush(absl::Seconds(30)));
  EXPECT_EQ(coordinator.texts(), (std::vector<std::string>{"t1", "t2"}));
  EXPECT_EQ(shipper.sent_lines(), 2);
}

TEST(JobLogShipperTest, LinesWaitThroughAnOutageInOrder) {
  JobLogCapture capture({});
  FakeCoordinator coordinator(
      {absl::UnavailableError("down"), absl::DeadlineExceededError("slow")});
  JobLogShipper shipper(&capture, To(coordinator), Manual());
  capture.BeginJob("job");
  LOG(INFO) << "t1";
  // A flush waits two rounds: down, then slow; the line stays queued.
  EXPECT_FALSE(shipper.Flush(absl::Seconds(30)));
  EXPECT_TRUE(coordinator.texts().empty());
  LOG(INFO) << "t2";
  ASSERT_TRUE(shipper.Flush(absl::Seconds(30)));
  EXPECT_EQ(coordinator.texts(), (std::vector<std::string>{"t1", "t2"}));
  EXPECT_EQ(shipper.discarded_lines(), 0);
}

TEST(JobLogShipperTest, ABatchRefusedForGoodIsDiscarded) {
  JobLogCapture capture({});
  FakeCoordinator coordinator({absl::FailedPreconditionError("never yours")});
  JobLogShipper shipper(&capture, To(coordinator), Manual());
  capture.BeginJob("job");
  LOG(INFO) << "t1";
  ASSERT_TRUE(shipper.Flush(absl::Seconds(30)));
  EXPECT_TRUE(coordinator.texts().empty());
  EXPECT_EQ(shipper.discarded_lines(), 1);
  LOG(INFO) << "t2";
  ASSERT_TRUE(shipper.Flush(absl::Seconds(30)));
  EXPECT_EQ(coordinator.texts(), std::vector<std::string>{"t2"});
}

TEST(JobLogShipperTest, AnUnknownWorkerIsGivenAFewRoundsToRegisterAgain) {
  JobLogCapture capture({});
  std::vector<absl::Status> answers(3, absl::NotFoundError("unknown worker"));
  FakeCoordinator coordinator(answers);
  JobLogShipper::Options o = Manual();
  o.refusals_before_discard = 5;
  JobLogShipper shipper(&capture, To(coordinator), o);
  capture.BeginJob("job");
  LOG(INFO) << "t1";
  EXPECT_FALSE(shipper.Flush(absl::Seconds(30)));  // Two refusals.
  ASSERT_TRUE(shipper.Flush(absl::Seconds(30)));   // A third, then taken.
  EXPECT_EQ(coordinator.texts(), std::vector<std::string>{"t1"});
}

TEST(JobLogShipperTest, RefusedTooOftenTheBatchGoes) {
  JobLogCapture capture({});
  FakeCoordinator coordinator(
      std::vector<absl::Status>(2, absl::UnauthenticatedError("who")));
  JobLogShipper::Options o = Manual();
  o.refusals_before_discard = 2;
  JobLogShipper shipper(&capture, To(coordinator), o);
  capture.BeginJob("job");
  LOG(INFO) << "t1";
  // The flush's two rounds: refused, refused again and discarded.
  ASSERT_TRUE(shipper.Flush(absl::Seconds(30)));
  EXPECT_TRUE(coordinator.texts().empty());
  EXPECT_EQ(shipper.discarded_lines(), 1);
}

TEST(JobLogShipperTest, ManyLinesGoInCallsOfAtMostTheLimit) {
  JobLogCapture capture({});
  FakeCoordinator coordinator;
  JobLogShipper::Options o = Manual();
  o.max_lines = 10;
  JobLogShipper shipper(&capture, To(coordinator), o);
  capture.BeginJob("job");
  for (int i = 0; i < 35; ++i) LOG(INFO) << "t" << i;
  ASSERT_TRUE(shipper.Flush(absl::Seconds(30)));
  EXPECT_EQ(coordinator.texts().size(), 35u);
  EXPECT_GE(coordinator.calls(), 4);
  EXPECT_LE(coordinator.largest_call(), 10);
}

}  // namespace
}  // namespace ringleader
