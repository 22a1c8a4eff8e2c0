#include "worker/train/progress/progress_window.h"

#include "gtest/gtest.h"

namespace ringleader {
namespace {

TEST(ProgressWindowTest, WindowsAverageAndReset) {
  const absl::Time t0 = absl::FromUnixSeconds(100);
  ProgressWindow w("job-1", 3, 1, 50, 6400, t0);
  w.AddBatch(10);
  w.AddBatch(10);
  w.AddLossSum(2.0 + 4.0);
  w.AddStep();
  w.AddStep();
  v1::ReportProgressRequest r = w.Take(0, 2, t0 + absl::Seconds(2));
  EXPECT_EQ(r.job_id(), "job-1");
  EXPECT_EQ(r.generation(), 3);
  EXPECT_EQ(r.rank(), 1);
  EXPECT_EQ(r.total_steps(), 50);
  EXPECT_EQ(r.train_size(), 6400);
  EXPECT_DOUBLE_EQ(r.loss(), 3.0);
  EXPECT_DOUBLE_EQ(r.samples_per_sec(), 10.0);
  EXPECT_DOUBLE_EQ(r.step_time_ms(), 1000.0);
  EXPECT_EQ(r.eval_epoch(), 0);
  // The next window starts empty.
  r = w.Take(0, 2, t0 + absl::Seconds(3));
  EXPECT_DOUBLE_EQ(r.loss(), 0.0);
  EXPECT_DOUBLE_EQ(r.samples_per_sec(), 0.0);
}

TEST(ProgressWindowTest, LearningRateAndDataWaitShare) {
  const absl::Time t0 = absl::FromUnixSeconds(100);
  ProgressWindow w("j", 1, 0, 10, 640, t0);
  w.AddBatch(4);
  w.AddStep();
  w.SetLearningRate(0.125);
  w.AddDataWait(absl::Milliseconds(500));
  v1::ReportProgressRequest r = w.Take(0, 1, t0 + absl::Seconds(2));
  EXPECT_DOUBLE_EQ(r.learning_rate(), 0.125);
  EXPECT_DOUBLE_EQ(r.data_wait_share(), 0.25);
  // The rate stays on later reports; the wait starts again.
  r = w.Take(0, 1, t0 + absl::Seconds(3));
  EXPECT_DOUBLE_EQ(r.learning_rate(), 0.125);
  EXPECT_DOUBLE_EQ(r.data_wait_share(), 0.0);
}

TEST(ProgressWindowTest, EvaluationIsCarriedOnLaterReports) {
  const absl::Time t0 = absl::FromUnixSeconds(0);
  ProgressWindow w("j", 1, 0, 10, 640, t0);
  MetricSums sums;
  sums.Add("loss", 6.0, 4);
  sums.Add("accuracy", 3.0, 4);
  v1::ReportProgressRequest e = w.Evaluated(1, 5, 0.7, sums);
  EXPECT_EQ(e.eval_epoch(), 1);
  EXPECT_EQ(e.eval_correct(), 3);
  EXPECT_EQ(e.eval_samples(), 4);
  ASSERT_EQ(e.eval_metrics_size(), 2);
  EXPECT_EQ(e.eval_metrics(0).name(), "loss");
  w.AddBatch(1);
  w.AddLossSum(1.0);
  v1::ReportProgressRequest later = w.Take(1, 6, t0 + absl::Seconds(1));
  EXPECT_EQ(later.eval_epoch(), 1);
  EXPECT_EQ(later.eval_metrics_size(), 2);
}

TEST(ProgressWindowTest, TheLatestGradNormIsOnEveryLaterReport) {
  const absl::Time t0 = absl::FromUnixSeconds(0);
  ProgressWindow w("j", 1, 0, 10, 640, t0);
  EXPECT_EQ(w.Take(0, 1, t0).grad_norm(), 0);  // None measured yet.
  w.SetGradNorm(2.5);
  EXPECT_DOUBLE_EQ(w.Take(0, 2, t0 + absl::Seconds(1)).grad_norm(), 2.5);
  // Not measured since: the last value stays, on every kind of report.
  EXPECT_DOUBLE_EQ(w.Take(0, 3, t0 + absl::Seconds(2)).grad_norm(), 2.5);
  w.SetGradNorm(0.75);
  EXPECT_DOUBLE_EQ(w.Evaluated(1, 4, 0.1, MetricSums()).grad_norm(), 0.75);
  EXPECT_DOUBLE_EQ(w.Final(1, 5, 0.1, MetricSums()).grad_norm(), 0.75);
}

TEST(ProgressWindowTest, FinalReportCarriesTestSums) {
  ProgressWindow w("j", 1, 2, 10, 640, absl::FromUnixSeconds(0));
  MetricSums test;
  test.Add("accuracy", 90.0, 100);
  test.Add("top5_accuracy", 99.0, 100);
  const v1::ReportProgressRequest f = w.Final(4, 10, 0.25, test);
  EXPECT_TRUE(f.finished());
  EXPECT_EQ(f.epoch(), 4);
  EXPECT_DOUBLE_EQ(f.final_train_loss(), 0.25);
  EXPECT_EQ(f.test_correct(), 90);
  EXPECT_EQ(f.test_samples(), 100);
  ASSERT_EQ(f.test_metrics_size(), 2);
  EXPECT_EQ(f.test_metrics(1).name(), "top5_accuracy");
  EXPECT_EQ(f.test_metrics(1).count(), 100);
}

TEST(ProgressWindowTest, ANewcomersJoinTimeIsOnEveryLaterReport) {
  const absl::Time t0 = absl::FromUnixSeconds(0);
  ProgressWindow w("j", 1, 0, 10, 640, t0);
  EXPECT_EQ(w.Take(0, 1, t0).join_to_first_step_ms(), 0);
  w.SetJoinToFirstStep(absl::Milliseconds(2345));
  EXPECT_EQ(w.Take(0, 2, t0 + absl::Seconds(1)).join_to_first_step_ms(), 2345);
  EXPECT_EQ(w.Final(1, 5, 0.1, MetricSums()).join_to_first_step_ms(), 2345);
  // Under a millisecond still says "joined".
  w.SetJoinToFirstStep(absl::Microseconds(10));
  EXPECT_EQ(w.Take(0, 3, t0 + absl::Seconds(2)).join_to_first_step_ms(), 1);
}

}  // namespace
}  // namespace ringleader
