#include "worker/train/progress/progress_schedule.h"

#include <vector>

#include "gtest/gtest.h"

namespace ringleader {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1000);

// Steps at which a run of `steps` steps of `step_time` each reports.
std::vector<int64_t> Reports(int every, absl::Duration interval,
                             absl::Duration step_time, int64_t steps) {
  ProgressSchedule schedule(every, interval, kStart);
  std::vector<int64_t> at;
  for (int64_t s = 1; s <= steps; ++s) {
    if (schedule.Due(s, kStart + s * step_time)) at.push_back(s);
  }
  return at;
}

TEST(ProgressScheduleTest, SlowStepsReportEveryNSteps) {
  // 50 ms steps, every 10 steps, at most every 100 ms: the steps decide.
  EXPECT_EQ(Reports(10, absl::Milliseconds(100), absl::Milliseconds(50), 40),
            (std::vector<int64_t>{10, 20, 30, 40}));
}

TEST(ProgressScheduleTest, FastStepsReportAtMostOncePerInterval) {
  // 1 ms steps: every 10 steps would be 100 reports a second; the interval
  // allows 10, each at a multiple of 10 steps.
  std::vector<int64_t> at =
      Reports(10, absl::Milliseconds(100), absl::Milliseconds(1), 1000);
  EXPECT_EQ(at.size(), 10u);
  for (size_t i = 0; i < at.size(); ++i) {
    EXPECT_EQ(at[i] % 10, 0);
    if (i > 0) EXPECT_GE(at[i] - at[i - 1], 100);
  }
  EXPECT_EQ(at.front(), 100);  // Not before one interval from the start.
}

TEST(ProgressScheduleTest, ZeroIntervalIsEveryNSteps) {
  EXPECT_EQ(Reports(3, absl::ZeroDuration(), absl::Microseconds(1), 10),
            (std::vector<int64_t>{3, 6, 9}));
}

TEST(ProgressScheduleTest, NonPositiveEveryMeansEveryStep) {
  EXPECT_EQ(Reports(0, absl::ZeroDuration(), absl::Milliseconds(1), 3),
            (std::vector<int64_t>{1, 2, 3}));
}

}  // namespace
}  // namespace ringleader
