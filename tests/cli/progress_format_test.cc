#include "cli/progress_format.h"

#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "gtest/gtest.h"

namespace ringleader::cli {
namespace {

v1::Job RunningJob(int64_t step, int64_t total, double samples_per_sec) {
  v1::Job job;
  job.set_job_id("mnist-3");
  job.set_state(v1::JOB_STATE_RUNNING);
  job.set_generation(2);
  job.set_world_size(4);
  job.mutable_spec()->set_epochs(10);
  job.mutable_spec()->set_batch_size(32);
  job.mutable_spec()->set_gradient_accumulation_steps(1);
  v1::JobProgress* p = job.mutable_progress();
  p->set_epoch(2);
  p->set_step(step);
  p->set_total_steps(total);
  p->set_loss(0.34126);
  p->set_samples_per_sec(samples_per_sec);
  return job;
}

TEST(ProgressBarTest, FillsProportionally) {
  EXPECT_EQ(ProgressBar(0, 10), "[----------]");
  EXPECT_EQ(ProgressBar(0.5, 10), "[#####-----]");
  EXPECT_EQ(ProgressBar(0.99, 10), "[#########-]");
  EXPECT_EQ(ProgressBar(1, 10), "[##########]");
}

TEST(ProgressBarTest, ClampsOutOfRangeAndNan) {
  EXPECT_EQ(ProgressBar(-1, 4), "[----]");
  EXPECT_EQ(ProgressBar(7, 4), "[####]");
  EXPECT_EQ(ProgressBar(std::nan(""), 4), "[----]");
  EXPECT_EQ(ProgressBar(0.5, 0), "[-]");
}

TEST(FormatPercentTest, FixedWidthAndClamped) {
  EXPECT_EQ(FormatPercent(0, 10), "  0.0%");
  EXPECT_EQ(FormatPercent(1, 3), " 33.3%");
  EXPECT_EQ(FormatPercent(10, 10), "100.0%");
  EXPECT_EQ(FormatPercent(12, 10), "100.0%");
  EXPECT_EQ(FormatPercent(5, 0), "  0.0%");
}

TEST(EstimateEtaTest, FromSamplesPerSecond) {
  // 1200 steps left x (32 x 4) samples / 1280 samples/s = 120 s.
  v1::Job job = RunningJob(1200, 2400, 1280);
  EXPECT_EQ(EstimateEta(job, 0), absl::Seconds(120));
  // The reported throughput wins over the observed step rate.
  EXPECT_EQ(EstimateEta(job, 1000), absl::Seconds(120));
}

TEST(EstimateEtaTest, CountsGradientAccumulation) {
  v1::Job job = RunningJob(1200, 2400, 1280);
  job.mutable_spec()->set_gradient_accumulation_steps(2);
  EXPECT_EQ(EstimateEta(job, 0), absl::Seconds(240));
}

TEST(EstimateEtaTest, FallsBackToObservedStepRate) {
  v1::Job job = RunningJob(100, 400, 0);
  EXPECT_EQ(EstimateEta(job, 10), absl::Seconds(30));
}

TEST(EstimateEtaTest, RoundsUp) {
  v1::Job job = RunningJob(0, 10, 0);
  EXPECT_EQ(EstimateEta(job, 3), absl::Seconds(4));
}

TEST(EstimateEtaTest, UnknownWithoutTotalOrRate) {
  EXPECT_EQ(EstimateEta(RunningJob(100, 0, 1280), 10), std::nullopt);
  EXPECT_EQ(EstimateEta(RunningJob(100, 400, 0), 0), std::nullopt);
  v1::Job no_world = RunningJob(100, 400, 1280);
  no_world.set_world_size(0);
  EXPECT_EQ(EstimateEta(no_world, 0), std::nullopt);
}

TEST(EstimateEtaTest, ZeroWhenDone) {
  EXPECT_EQ(EstimateEta(RunningJob(400, 400, 0), 0), absl::ZeroDuration());
  EXPECT_EQ(EstimateEta(RunningJob(500, 400, 0), 0), absl::ZeroDuration());
}

TEST(StepRateTrackerTest, RateOverWindow) {
  StepRateTracker t(/*window=*/3);
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  EXPECT_EQ(t.StepsPerSecond(), 0);
  t.Observe(0, t0);
  EXPECT_EQ(t.StepsPerSecond(), 0);
  t.Observe(10, t0 + absl::Seconds(1));
  EXPECT_DOUBLE_EQ(t.StepsPerSecond(), 10);
  t.Observe(30, t0 + absl::Seconds(2));
  EXPECT_DOUBLE_EQ(t.StepsPerSecond(), 15);
  // The first observation leaves the window of 3: (60 - 10) / 2 s.
  t.Observe(60, t0 + absl::Seconds(3));
  EXPECT_DOUBLE_EQ(t.StepsPerSecond(), 25);
}

TEST(StepRateTrackerTest, StepGoingBackStartsOver) {
  StepRateTracker t;
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  t.Observe(100, t0);
  t.Observe(200, t0 + absl::Seconds(1));
  t.Observe(50, t0 + absl::Seconds(2));  // Restarted from a checkpoint.
  EXPECT_EQ(t.StepsPerSecond(), 0);
  t.Observe(70, t0 + absl::Seconds(4));
  EXPECT_DOUBLE_EQ(t.StepsPerSecond(), 10);
}

TEST(StepRateTrackerTest, NoRateWithoutElapsedTimeOrProgress) {
  StepRateTracker t;
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  t.Observe(5, t0);
  t.Observe(9, t0);
  EXPECT_EQ(t.StepsPerSecond(), 0);
  StepRateTracker u;
  u.Observe(5, t0);
  u.Observe(5, t0 + absl::Seconds(3));
  EXPECT_EQ(u.StepsPerSecond(), 0);
}

// A snapshot in `state` at `step`, for the pacer, which reads no more.
v1::Job At(v1::JobState state, int64_t step) {
  v1::Job job = RunningJob(step, 100, 0);
  job.set_state(state);
  return job;
}

const absl::Time kStart = absl::FromUnixSeconds(1700000000);

absl::Time AfterMs(int64_t ms) { return kStart + absl::Milliseconds(ms); }

TEST(LogLinePacerTest, FirstUpdateAlwaysPrints) {
  LogLinePacer pacer;
  EXPECT_TRUE(pacer.ShouldPrint(At(v1::JOB_STATE_PENDING, 0), kStart));
}

TEST(LogLinePacerTest, RepeatsOfTheSameStepAndStateNeverPrint) {
  // Every rank reports each step: the later reports change nothing shown.
  LogLinePacer pacer;
  ASSERT_TRUE(pacer.ShouldPrint(At(v1::JOB_STATE_RUNNING, 10), kStart));
  EXPECT_FALSE(pacer.ShouldPrint(At(v1::JOB_STATE_RUNNING, 10), AfterMs(1)));
  EXPECT_FALSE(
      pacer.ShouldPrint(At(v1::JOB_STATE_RUNNING, 10), AfterMs(60000)));
}

TEST(LogLinePacerTest, StepChangesPrintAtMostOncePerInterval) {
  LogLinePacer pacer(absl::Seconds(1));
  ASSERT_TRUE(pacer.ShouldPrint(At(v1::JOB_STATE_RUNNING, 1), kStart));
  EXPECT_FALSE(pacer.ShouldPrint(At(v1::JOB_STATE_RUNNING, 2), AfterMs(400)));
  EXPECT_FALSE(pacer.ShouldPrint(At(v1::JOB_STATE_RUNNING, 3), AfterMs(999)));
  EXPECT_TRUE(pacer.ShouldPrint(At(v1::JOB_STATE_RUNNING, 4), AfterMs(1000)));
  // The interval counts from the last line printed, not the last update.
  EXPECT_FALSE(pacer.ShouldPrint(At(v1::JOB_STATE_RUNNING, 5), AfterMs(1999)));
  EXPECT_TRUE(pacer.ShouldPrint(At(v1::JOB_STATE_RUNNING, 6), AfterMs(2000)));
}

TEST(LogLinePacerTest, AHeldBackStepPrintsOnTheNextUpdateAfterTheInterval) {
  // The step compared is the printed line's: a step held back is still
  // news when its repeat arrives later.
  LogLinePacer pacer(absl::Seconds(1));
  ASSERT_TRUE(pacer.ShouldPrint(At(v1::JOB_STATE_RUNNING, 0), kStart));
  EXPECT_FALSE(pacer.ShouldPrint(At(v1::JOB_STATE_RUNNING, 5), AfterMs(10)));
  EXPECT_TRUE(pacer.ShouldPrint(At(v1::JOB_STATE_RUNNING, 5), AfterMs(1500)));
}

TEST(LogLinePacerTest, StateChangesAlwaysPrint) {
  LogLinePacer pacer(absl::Seconds(1));
  ASSERT_TRUE(pacer.ShouldPrint(At(v1::JOB_STATE_PENDING, 0), kStart));
  EXPECT_TRUE(pacer.ShouldPrint(At(v1::JOB_STATE_RENDEZVOUS, 0), AfterMs(1)));
  EXPECT_TRUE(pacer.ShouldPrint(At(v1::JOB_STATE_RUNNING, 0), AfterMs(2)));
  EXPECT_FALSE(pacer.ShouldPrint(At(v1::JOB_STATE_RUNNING, 7), AfterMs(3)));
  EXPECT_TRUE(pacer.ShouldPrint(At(v1::JOB_STATE_SUCCEEDED, 8), AfterMs(4)));
}

TEST(LogLinePacerTest, AClockThatWentBackDoesNotSilenceTheLog) {
  LogLinePacer pacer(absl::Seconds(1));
  ASSERT_TRUE(pacer.ShouldPrint(At(v1::JOB_STATE_RUNNING, 1), kStart));
  EXPECT_TRUE(
      pacer.ShouldPrint(At(v1::JOB_STATE_RUNNING, 2), kStart - absl::Hours(1)));
  // Paced again from the new reading.
  EXPECT_FALSE(pacer.ShouldPrint(At(v1::JOB_STATE_RUNNING, 3),
                                 kStart - absl::Hours(1) + absl::Seconds(0.5)));
}

TEST(LogLinePacerTest, StepLinesAreBoundedByElapsedTime) {
  // Two ranks reporting 1000 steps over 10 s: the state line plus at most
  // one step line per second.
  LogLinePacer pacer(absl::Seconds(1));
  int lines = 0;
  for (int step = 0; step < 1000; ++step) {
    for (int rank = 0; rank < 2; ++rank) {
      lines += pacer.ShouldPrint(At(v1::JOB_STATE_RUNNING, step),
                                 AfterMs(10 * step + rank));
    }
  }
  // One per second, and one at each quarter of the 100 planned steps
  // (steps 25, 50, 75 at 0.25, 0.5 and 0.75 s).
  EXPECT_EQ(lines, 13);
}

TEST(LogLinePacerTest, AJobShorterThanTheIntervalShowsItsQuarters) {
  // 100 steps in 100 ms: the first line, then one as each quarter passes,
  // then the final state.
  LogLinePacer pacer(absl::Seconds(1));
  std::vector<int64_t> printed;
  for (int step = 0; step <= 100; ++step) {
    if (pacer.ShouldPrint(At(v1::JOB_STATE_RUNNING, step), AfterMs(step))) {
      printed.push_back(step);
    }
  }
  EXPECT_EQ(printed, (std::vector<int64_t>{0, 25, 50, 75, 100}));
  EXPECT_TRUE(
      pacer.ShouldPrint(At(v1::JOB_STATE_SUCCEEDED, 100), AfterMs(101)));
}

TEST(FormatWatchLineTest, RunningJobShowsEverything) {
  EXPECT_EQ(FormatWatchLine(RunningJob(1200, 2400, 1534.23), absl::Seconds(72),
                            /*max_width=*/0, /*bar_width=*/10),
            "RUNNING gen 2 world 4 epoch 3/10 [#####-----]  50.0% 1200/2400 "
            "loss 0.3413 1534.2 samples/s ETA 1m12s");
}

TEST(FormatWatchLineTest, TheGradNormOnceReported) {
  v1::Job job = RunningJob(1200, 2400, 0);
  job.mutable_progress()->set_grad_norm(0.98765);
  EXPECT_EQ(FormatWatchLine(job, std::nullopt, 0, 10),
            "RUNNING gen 2 world 4 epoch 3/10 [#####-----]  50.0% 1200/2400 "
            "loss 0.3413 grad norm 0.9877");
}

TEST(FormatWatchLineTest, PendingJobShowsOnlyTheState) {
  v1::Job job;
  job.set_state(v1::JOB_STATE_PENDING);
  EXPECT_EQ(FormatWatchLine(job, std::nullopt), "PENDING");
}

TEST(FormatWatchLineTest, UnknownTotalHasNoBar) {
  EXPECT_EQ(FormatWatchLine(RunningJob(40, 0, 0), std::nullopt),
            "RUNNING gen 2 world 4 epoch 3/10 40/? loss 0.3413");
}

TEST(FormatWatchLineTest, RestartingShowsWhy) {
  v1::Job job = RunningJob(10, 100, 0);
  job.set_state(v1::JOB_STATE_RESTARTING);
  job.set_message("generation 2 ended: worker w-3 died");
  const std::string line = FormatWatchLine(job, std::nullopt);
  EXPECT_EQ(line.rfind("RESTARTING gen 2", 0), 0u) << line;
  EXPECT_NE(line.find("(generation 2 ended: worker w-3 died)"),
            std::string::npos)
      << line;
}

TEST(FormatWatchLineTest, PreemptedShowsWhyAndKeepsWaiting) {
  v1::Job job = RunningJob(40, 100, 0);
  job.set_state(v1::JOB_STATE_PREEMPTED);
  job.set_message(
      "generation 2 preempted: every member was stopped; rank 0 committed a "
      "checkpoint at step 40");
  const std::string line = FormatWatchLine(job, std::nullopt);
  EXPECT_EQ(line.rfind("PREEMPTED gen 2", 0), 0u) << line;
  EXPECT_NE(line.find("checkpoint at step 40)"), std::string::npos) << line;
}

TEST(FormatWatchLineTest, FinalStateDropsEta) {
  v1::Job job = RunningJob(2400, 2400, 0);
  job.set_state(v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(FormatWatchLine(job, absl::ZeroDuration()).find("ETA"),
            std::string::npos);
}

TEST(FormatWatchLineTest, CutToTerminalWidth) {
  const std::string line =
      FormatWatchLine(RunningJob(1200, 2400, 1534.2), absl::Seconds(72), 30);
  EXPECT_EQ(line.size(), 30u);
  EXPECT_EQ(line, "RUNNING gen 2 world 4 epoch 3/");
}

TEST(FormatFinalSummaryTest, SucceededWithMetrics) {
  v1::Job job = RunningJob(2400, 2400, 0);
  job.set_state(v1::JOB_STATE_SUCCEEDED);
  job.set_message("all ranks finished");
  job.mutable_progress()->set_has_final_metrics(true);
  job.mutable_progress()->set_final_train_loss(0.23456);
  job.mutable_progress()->set_test_accuracy(0.91234);
  EXPECT_EQ(FormatFinalSummary(job),
            "job mnist-3 SUCCEEDED: all ranks finished\n"
            "final train loss 0.2346, test accuracy 91.23%\n");
}

void AddMetric(google::protobuf::RepeatedPtrField<v1::Metric>* list,
               const std::string& name, double value) {
  v1::Metric* m = list->Add();
  m->set_name(name);
  m->set_value(value);
}

TEST(FormatFinalSummaryTest, ClassificationShowsEveryMetricByName) {
  v1::Job job = RunningJob(2400, 2400, 0);
  job.set_state(v1::JOB_STATE_SUCCEEDED);
  job.set_message("all ranks finished");
  v1::JobProgress* p = job.mutable_progress();
  p->set_has_final_metrics(true);
  p->set_final_train_loss(1.2345);
  p->set_test_accuracy(0.91234);
  AddMetric(p->mutable_test_metrics(), "accuracy", 0.91234);
  AddMetric(p->mutable_test_metrics(), "top5_accuracy", 0.998);
  AddMetric(p->mutable_test_metrics(), "loss", 0.25123);
  EXPECT_EQ(FormatFinalSummary(job),
            "job mnist-3 SUCCEEDED: all ranks finished\n"
            "final train loss 1.2345, test accuracy 91.23%, top5_accuracy "
            "99.80%, loss 0.2512\n");
}

TEST(FormatFinalSummaryTest, LanguageModel) {
  v1::Job job = RunningJob(2400, 2400, 0);
  job.set_state(v1::JOB_STATE_SUCCEEDED);
  v1::JobProgress* p = job.mutable_progress();
  p->set_has_final_metrics(true);
  p->set_final_train_loss(1.2345);
  AddMetric(p->mutable_test_metrics(), "loss", 1.31);
  AddMetric(p->mutable_test_metrics(), "perplexity", std::exp(1.31));
  AddMetric(p->mutable_test_metrics(), "bits_per_token", 1.31 / std::log(2.0));
  EXPECT_EQ(FormatFinalSummary(job),
            "job mnist-3 SUCCEEDED\n"
            "final train loss 1.2345, test loss 1.310, perplexity 3.706, "
            "bits_per_token 1.890\n");
}

TEST(FormatFinalSummaryTest, FailedWithATracebackShowsItsFirstLine) {
  v1::Job job;
  job.set_job_id("lm-2");
  job.set_state(v1::JOB_STATE_FAILED);
  job.set_message(
      "rank 0: forward failed: The following operation failed in the "
      "TorchScript interpreter.\nTraceback of TorchScript (most recent call "
      "last):\n  File \"model.py\", line 12\n");
  EXPECT_EQ(FormatFinalSummary(job),
            "job lm-2 FAILED: rank 0: forward failed: The following operation "
            "failed in the TorchScript interpreter....\n");
}

TEST(FormatWatchLineTest, RestartReasonIsOneLine) {
  v1::Job job = RunningJob(1200, 2400, 0);
  job.set_state(v1::JOB_STATE_RESTARTING);
  job.set_message("generation 2 ended: rank 1 failed\nwith details");
  EXPECT_NE(FormatWatchLine(job, std::nullopt)
                .find("(generation 2 ended: rank 1 failed...)"),
            std::string::npos);
}

TEST(FormatFinalSummaryTest, CancelledWithoutMetrics) {
  v1::Job job;
  job.set_job_id("a-1");
  job.set_state(v1::JOB_STATE_CANCELLED);
  job.set_message("cancelled by user");
  EXPECT_EQ(FormatFinalSummary(job), "job a-1 CANCELLED: cancelled by user\n");
}

}  // namespace
}  // namespace ringleader::cli
