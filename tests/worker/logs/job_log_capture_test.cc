#include "worker/logs/job_log_capture.h"

#include <string>
#include <vector>

#include "glog/logging.h"
#include "gtest/gtest.h"

namespace ringleader {
namespace {

std::vector<std::string> Texts(const JobLogBatch& batch) {
  std::vector<std::string> out;
  for (const v1::LogLine& line : batch.lines) out.push_back(line.text());
  return out;
}

TEST(JobLogCaptureTest, KeepsOnlyTheLinesLoggedWhileServingAJob) {
  JobLogCapture capture({});
  LOG(INFO) << "before any job";
  capture.BeginJob("job-1");
  LOG(INFO) << "loading data";
  capture.SetRank(3, 1);
  LOG(WARNING) << "rank 1 here";
  capture.EndJob();
  LOG(INFO) << "idle again";
  std::optional<JobLogBatch> batch = capture.Take(100, 1 << 20);
  ASSERT_TRUE(batch.has_value());
  EXPECT_EQ(batch->job_id, "job-1");
  EXPECT_EQ(Texts(*batch),
            (std::vector<std::string>{"loading data", "rank 1 here"}));
  EXPECT_EQ(batch->lines[0].rank(), -1);
  EXPECT_EQ(batch->lines[1].rank(), 1);
  EXPECT_EQ(batch->lines[1].generation(), 3);
  EXPECT_EQ(batch->lines[1].severity(), "WARNING");
  EXPECT_GT(batch->lines[1].time_ms(), 1'600'000'000'000);
  EXPECT_FALSE(capture.Take(100, 1 << 20).has_value());
}

TEST(JobLogCaptureTest, AMessageOfSeveralLinesIsSeveralLines) {
  JobLogCapture capture({});
  capture.BeginJob("job");
  LOG(INFO) << "first\nsecond\n";
  EXPECT_EQ(Texts(*capture.Take(100, 1 << 20)),
            (std::vector<std::string>{"first", "second"}));
}

TEST(JobLogCaptureTest, LinesAreValidUtf8AndCut) {
  EXPECT_EQ(JobLogCapture::CleanLine("ok \xC3\xA9", 5), "ok \xC3\xA9");
  // A stray continuation byte, an overlong '/', a surrogate, a cut sequence.
  const std::string bad =
      "a\x80"
      "b\xC0\xAF"
      "c\xED\xA0\x80"
      "d\xE2\x82";
  EXPECT_EQ(JobLogCapture::CleanLine(bad.data(), bad.size()),
            "a\xEF\xBF\xBD"
            "b\xEF\xBF\xBD\xEF\xBF\xBD"
            "c\xEF\xBF\xBD\xEF\xBF\xBD"
            "\xEF\xBF\xBD"
            "d\xEF\xBF\xBD\xEF\xBF\xBD");
  const std::string long_line(10000, 'x');
  const std::string cut = JobLogCapture::CleanLine(long_line.data(), 10000);
  EXPECT_LE(cut.size(), 4096u);
  EXPECT_EQ(cut.substr(cut.size() - 3), "...");
}

TEST(JobLogCaptureTest, PastItsBoundTheOldestGoAndAreCounted) {
  JobLogCapture capture({/*max_lines=*/3, /*max_bytes=*/1 << 20});
  capture.BeginJob("job");
  for (int i = 0; i < 5; ++i) LOG(INFO) << "line " << i;
  EXPECT_EQ(capture.queued(), 3);
  EXPECT_EQ(capture.dropped_total(), 2);
  std::optional<JobLogBatch> batch = capture.Take(100, 1 << 20);
  EXPECT_EQ(Texts(*batch),
            (std::vector<std::string>{"line 2", "line 3", "line 4"}));
  EXPECT_EQ(batch->dropped, 2);
  // The count went with that batch.
  LOG(INFO) << "line 5";
  EXPECT_EQ(capture.Take(100, 1 << 20)->dropped, 0);
}

TEST(JobLogCaptureTest, ABatchIsOneJobsAndOneNotTakenGoesBackFirst) {
  JobLogCapture capture({});
  capture.BeginJob("a");
  LOG(INFO) << "a1";
  LOG(INFO) << "a2";
  capture.BeginJob("b");
  LOG(INFO) << "b1";
  std::optional<JobLogBatch> first = capture.Take(1, 1 << 20);
  EXPECT_EQ(Texts(*first), std::vector<std::string>{"a1"});
  capture.PutBack(*std::move(first));
  std::optional<JobLogBatch> again = capture.Take(100, 1 << 20);
  EXPECT_EQ(again->job_id, "a");
  EXPECT_EQ(Texts(*again), (std::vector<std::string>{"a1", "a2"}));
  std::optional<JobLogBatch> next = capture.Take(100, 1 << 20);
  EXPECT_EQ(next->job_id, "b");
  EXPECT_EQ(Texts(*next), std::vector<std::string>{"b1"});
}

TEST(JobLogCaptureTest, PuttingBackIntoAFullQueueDropsTheOldest) {
  JobLogCapture capture({/*max_lines=*/2, /*max_bytes=*/1 << 20});
  capture.BeginJob("job");
  LOG(INFO) << "old";
  std::optional<JobLogBatch> batch = capture.Take(100, 1 << 20);
  LOG(INFO) << "new 1";
  LOG(INFO) << "new 2";
  capture.PutBack(*std::move(batch));
  std::optional<JobLogBatch> kept = capture.Take(100, 1 << 20);
  EXPECT_EQ(Texts(*kept), (std::vector<std::string>{"new 1", "new 2"}));
  EXPECT_EQ(kept->dropped, 1);
}

}  // namespace
}  // namespace ringleader
