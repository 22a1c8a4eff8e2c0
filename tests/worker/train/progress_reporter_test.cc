#include "worker/train/progress_reporter.h"

#include <vector>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace ringleader {
namespace {

v1::ReportProgressRequest Step(int64_t s) {
  v1::ReportProgressRequest r;
  r.set_step(s);
  return r;
}

TEST(ProgressReporterTest, SendsInOrderAndCoalescesWhileBusy) {
  absl::Notification release;
  absl::Mutex mu;
  std::vector<int64_t> sent;
  ProgressReporter reporter([&](const v1::ReportProgressRequest& r) {
    if (r.step() == 1) release.WaitForNotification();  // First send is slow.
    absl::MutexLock lock(&mu);
    sent.push_back(r.step());
    return absl::OkStatus();
  });
  reporter.Submit(Step(1));
  // Submit never blocks, even while a send is stuck.
  for (int s = 2; s <= 100; ++s) reporter.Submit(Step(s));
  release.Notify();
  ASSERT_TRUE(reporter.Flush().ok());
  absl::MutexLock lock(&mu);
  ASSERT_GE(sent.size(), 1u);  // Step 1 may be superseded before it is sent.
  EXPECT_LE(sent.size(), 100u);
  EXPECT_EQ(sent.back(), 100);  // The latest always arrives.
  for (size_t i = 1; i < sent.size(); ++i) EXPECT_LT(sent[i - 1], sent[i]);
}

TEST(ProgressReporterTest, FlushReportsErrors) {
  ProgressReporter reporter([](const v1::ReportProgressRequest&) {
    return absl::UnavailableError("coordinator down");
  });
  reporter.Submit(Step(1));
  EXPECT_TRUE(absl::IsUnavailable(reporter.Flush()));
  EXPECT_TRUE(reporter.Flush().ok());  // Cleared.
}

}  // namespace
}  // namespace ringleader
