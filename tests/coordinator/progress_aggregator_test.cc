#include "coordinator/progress_aggregator.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace ringleader {
namespace {

void AddSum(google::protobuf::RepeatedPtrField<v1::MetricSum>* list,
            const std::string& name, double sum, int64_t count) {
  v1::MetricSum* m = list->Add();
  m->set_name(name);
  m->set_sum(sum);
  m->set_count(count);
}

// A rank's final report: `correct` of 50 test samples and the same as
// metric sums, with the summed loss.
v1::ReportProgressRequest Final(int rank, int correct, double loss_sum) {
  v1::ReportProgressRequest r;
  r.set_rank(rank);
  r.set_epoch(1);
  r.set_step(10);
  r.set_total_steps(10);
  r.set_finished(true);
  r.set_final_train_loss(0.5);
  r.set_test_correct(correct);
  r.set_test_samples(50);
  AddSum(r.mutable_test_metrics(), "accuracy", correct, 50);
  AddSum(r.mutable_test_metrics(), "loss", loss_sum, 50);
  return r;
}

// A rank's report after evaluating `epoch` (1-based).
v1::ReportProgressRequest Evaluated(int rank, int64_t epoch, int correct,
                                    double loss_sum) {
  v1::ReportProgressRequest r;
  r.set_rank(rank);
  r.set_epoch(epoch);
  r.set_step(5 * epoch);
  r.set_eval_epoch(epoch);
  r.set_eval_correct(correct);
  r.set_eval_samples(50);
  AddSum(r.mutable_eval_metrics(), "accuracy", correct, 50);
  AddSum(r.mutable_eval_metrics(), "loss", loss_sum, 50);
  return r;
}

std::vector<std::pair<std::string, double>> Pairs(
    const google::protobuf::RepeatedPtrField<v1::Metric>& metrics) {
  std::vector<std::pair<std::string, double>> out;
  for (const v1::Metric& m : metrics) out.emplace_back(m.name(), m.value());
  return out;
}

v1::TaskSpec Task(v1::TaskKind kind) {
  v1::TaskSpec t;
  t.set_kind(kind);
  return t;
}

TEST(ProgressAggregatorTest, TestMetricsArePooledOnceEveryRankFinished) {
  ProgressAggregator agg;
  const v1::TaskSpec task = Task(v1::TASK_KIND_CLASSIFICATION);
  v1::JobProgress p;
  agg.Add(Final(0, 40, 10), "w0", 1000);
  agg.Combine(2, task, &p);
  EXPECT_FALSE(p.has_final_metrics());
  EXPECT_EQ(p.test_metrics_size(), 0);
  // Each rank's sums are kept in its progress, as its counts are.
  ASSERT_EQ(p.ranks_size(), 1);
  ASSERT_EQ(p.ranks(0).test_metrics_size(), 2);
  EXPECT_EQ(p.ranks(0).test_metrics(1).name(), "loss");
  EXPECT_DOUBLE_EQ(p.ranks(0).test_metrics(1).sum(), 10);
  agg.Add(Final(1, 45, 20), "w1", 2000);
  agg.Combine(2, task, &p);
  EXPECT_TRUE(p.has_final_metrics());
  EXPECT_DOUBLE_EQ(p.test_accuracy(), 0.85);
  const auto got = Pairs(p.test_metrics());
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].first, "accuracy");
  EXPECT_DOUBLE_EQ(got[0].second, 0.85);
  EXPECT_EQ(got[1].first, "loss");
  EXPECT_DOUBLE_EQ(got[1].second, 0.3);
  // Combining again does not append a second copy.
  agg.Combine(2, task, &p);
  EXPECT_EQ(p.test_metrics_size(), 2);
}

// A report held back by a partition arrives after newer ones: it changes
// nothing, and a rank's final report is never undone.
TEST(ProgressAggregatorTest, AStaleReportChangesNothing) {
  ProgressAggregator agg;
  const v1::TaskSpec task = Task(v1::TASK_KIND_CLASSIFICATION);
  EXPECT_TRUE(agg.Add(Evaluated(0, 1, 40, 10), "w0", 1000));  // Step 5.
  v1::ReportProgressRequest older = Evaluated(0, 1, 30, 10);
  older.set_step(4);
  EXPECT_FALSE(agg.Add(older, "w0", 2000));
  v1::JobProgress p;
  agg.Combine(1, task, &p);
  ASSERT_EQ(p.ranks_size(), 1);
  EXPECT_EQ(p.ranks(0).step(), 5);
  EXPECT_EQ(p.ranks(0).eval_correct(), 40);
  EXPECT_EQ(p.ranks(0).report_time_ms(), 1000);

  EXPECT_TRUE(agg.Add(Final(0, 40, 10), "w0", 3000));  // Step 10.
  v1::ReportProgressRequest same_step = Final(0, 40, 10);
  same_step.set_finished(false);
  EXPECT_FALSE(agg.Add(same_step, "w0", 4000));
  EXPECT_TRUE(agg.WorkerFinished("w0"));
  EXPECT_TRUE(agg.AllFinished(1));
  // The final report sent again (its answer was lost) is the same report.
  EXPECT_TRUE(agg.Add(Final(0, 40, 10), "w0", 5000));
  EXPECT_TRUE(agg.AllFinished(1));
}

TEST(ProgressAggregatorTest, CountsPastInt64MaxSaturateInsteadOfWrapping) {
  // The coordinator refuses such reports (job_manager); a restored or old
  // state could still hold them: the pooled sums saturate, so the accuracy
  // is not the 0.0 (or negative) a wrapped sum gave.
  ProgressAggregator agg;
  const v1::TaskSpec task = Task(v1::TASK_KIND_CLASSIFICATION);
  constexpr int64_t kNear = std::numeric_limits<int64_t>::max() - 10;
  for (int rank = 0; rank < 2; ++rank) {
    v1::ReportProgressRequest r = Final(rank, 0, 0);
    r.clear_test_metrics();
    r.set_test_correct(kNear);
    r.set_test_samples(kNear);
    r.set_eval_epoch(1);
    agg.Add(r, "w", 1000);
  }
  v1::JobProgress p;
  agg.Combine(2, task, &p);
  ASSERT_TRUE(p.has_final_metrics());
  EXPECT_DOUBLE_EQ(p.test_accuracy(), 1.0);
  // Epoch 1's evaluation (eval_epoch, no sums) and the final one after it.
  ASSERT_EQ(p.evaluations_size(), 2);
  EXPECT_EQ(p.evaluations(1).epoch(), 2);
  EXPECT_DOUBLE_EQ(p.evaluations(1).test_accuracy(), 1.0);
}

TEST(ProgressAggregatorTest, LanguageModelGetsPerplexityAndBitsPerToken) {
  ProgressAggregator agg;
  v1::JobProgress p;
  agg.Add(Final(0, 10, 50 * 2.0), "w0", 1000);
  agg.Add(Final(1, 20, 50 * 1.0), "w1", 1000);
  agg.Combine(2, Task(v1::TASK_KIND_LANGUAGE_MODEL), &p);
  const auto got = Pairs(p.test_metrics());
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[1].first, "loss");
  EXPECT_DOUBLE_EQ(got[1].second, 1.5);
  EXPECT_EQ(got[2].first, "perplexity");
  EXPECT_DOUBLE_EQ(got[2].second, std::exp(1.5));
  EXPECT_EQ(got[3].first, "bits_per_token");
  EXPECT_DOUBLE_EQ(got[3].second, 1.5 / std::log(2.0));
}

TEST(ProgressAggregatorTest, OldWorkersWithoutSumsKeepTheAccuracy) {
  ProgressAggregator agg;
  v1::JobProgress p;
  v1::ReportProgressRequest a = Final(0, 40, 1), b = Final(1, 45, 1);
  a.clear_test_metrics();
  b.clear_test_metrics();
  agg.Add(a, "w0", 1000);
  agg.Add(b, "w1", 1000);
  agg.Combine(2, v1::TaskSpec(), &p);
  EXPECT_DOUBLE_EQ(p.test_accuracy(), 0.85);
  EXPECT_EQ(p.test_metrics_size(), 0);
  ASSERT_EQ(p.evaluations_size(), 1);
  EXPECT_EQ(p.evaluations(0).metrics_size(), 0);
}

TEST(ProgressAggregatorTest, EpochEvaluationsCarryTheirMetrics) {
  ProgressAggregator agg;
  const v1::TaskSpec task = Task(v1::TASK_KIND_CLASSIFICATION);
  v1::JobProgress p;
  agg.Add(Evaluated(0, 1, 30, 25), "w0", 1000);
  EXPECT_FALSE(agg.Combine(2, task, &p));
  agg.Add(Evaluated(1, 1, 40, 15), "w1", 2000);
  ASSERT_TRUE(agg.Combine(2, task, &p));
  ASSERT_EQ(p.evaluations_size(), 1);
  EXPECT_DOUBLE_EQ(p.evaluations(0).test_accuracy(), 0.7);
  auto got = Pairs(p.evaluations(0).metrics());
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], std::make_pair(std::string("accuracy"), 0.7));
  EXPECT_EQ(got[1].first, "loss");
  EXPECT_DOUBLE_EQ(got[1].second, 0.4);
  // A later report that carries no evaluation keeps the rank's sums.
  v1::ReportProgressRequest plain;
  plain.set_rank(0);
  plain.set_epoch(1);
  plain.set_step(7);
  agg.Add(plain, "w0", 2500);
  EXPECT_FALSE(agg.Combine(2, task, &p));
  EXPECT_EQ(p.ranks(0).eval_metrics_size(), 2);
  // The final evaluation pools the finished ranks' test sums.
  v1::ReportProgressRequest f0 = Final(0, 45, 5), f1 = Final(1, 46, 5);
  agg.Add(f0, "w0", 3000);
  agg.Add(f1, "w1", 3000);
  ASSERT_TRUE(agg.Combine(2, task, &p));
  ASSERT_EQ(p.evaluations_size(), 2);
  EXPECT_EQ(p.evaluations(1).epoch(), 2);
  got = Pairs(p.evaluations(1).metrics());
  ASSERT_EQ(got.size(), 2u);
  EXPECT_DOUBLE_EQ(got[0].second, 0.91);
  EXPECT_DOUBLE_EQ(got[1].second, 0.1);
}

TEST(ProgressAggregatorTest, OneRanksSecondEvaluationBeforeAnothersFirst) {
  // Through a coordinator outage each rank queues its reports; once it
  // goes on, rank 0's evaluations of epochs 1 and 2 can both arrive before
  // rank 1's first. Neither epoch is lost.
  ProgressAggregator agg;
  const v1::TaskSpec task = Task(v1::TASK_KIND_CLASSIFICATION);
  v1::JobProgress p;
  agg.Add(Evaluated(0, 1, 30, 25), "w0", 1000);
  agg.Add(Evaluated(0, 2, 35, 20), "w0", 1001);
  EXPECT_FALSE(agg.Combine(2, task, &p));
  agg.Add(Evaluated(1, 1, 40, 15), "w1", 1002);
  ASSERT_TRUE(agg.Combine(2, task, &p));
  ASSERT_EQ(p.evaluations_size(), 1);
  EXPECT_EQ(p.evaluations(0).epoch(), 1);
  EXPECT_DOUBLE_EQ(p.evaluations(0).test_accuracy(), 0.7);
  agg.Add(Evaluated(1, 2, 45, 10), "w1", 1003);
  ASSERT_TRUE(agg.Combine(2, task, &p));
  ASSERT_EQ(p.evaluations_size(), 2);
  EXPECT_EQ(p.evaluations(1).epoch(), 2);
  EXPECT_DOUBLE_EQ(p.evaluations(1).test_accuracy(), 0.8);
  EXPECT_EQ(p.evaluations(1).time_ms(), 1003);
  EXPECT_FALSE(agg.Combine(2, task, &p));  // Each epoch once.
}

TEST(ProgressAggregatorTest, BothRanksFarAheadRecordEveryEpochAtOnce) {
  ProgressAggregator agg;
  const v1::TaskSpec task = Task(v1::TASK_KIND_CLASSIFICATION);
  v1::JobProgress p;
  for (int rank = 0; rank < 2; ++rank) {
    for (int epoch = 1; epoch <= 3; ++epoch) {
      agg.Add(Evaluated(rank, epoch, 10 * epoch, 1), "w", 1000);
    }
  }
  ASSERT_TRUE(agg.Combine(2, task, &p));
  ASSERT_EQ(p.evaluations_size(), 3);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(p.evaluations(i).epoch(), i + 1);
}

TEST(ProgressAggregatorTest, AMetricOneRankLacksIsLeftOutOfTheEvaluation) {
  ProgressAggregator agg;
  v1::JobProgress p;
  v1::ReportProgressRequest a = Evaluated(0, 1, 30, 25);
  a.mutable_eval_metrics()->RemoveLast();  // No loss from rank 0.
  agg.Add(a, "w0", 1000);
  agg.Add(Evaluated(1, 1, 40, 15), "w1", 1000);
  ASSERT_TRUE(agg.Combine(2, v1::TaskSpec(), &p));
  const auto got = Pairs(p.evaluations(0).metrics());
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].first, "accuracy");
}

TEST(ProgressAggregatorTest, RestoredRanksKeepTheirSums) {
  ProgressAggregator before;
  v1::JobProgress p;
  before.Add(Final(0, 40, 10), "w0", 1000);
  before.Combine(2, v1::TaskSpec(), &p);
  // The coordinator restarts: the stored progress is all there is.
  ProgressAggregator after;
  after.Restore(p);
  after.Add(Final(1, 45, 20), "w1", 2000);
  after.Combine(2, v1::TaskSpec(), &p);
  const auto got = Pairs(p.test_metrics());
  ASSERT_EQ(got.size(), 2u);
  EXPECT_DOUBLE_EQ(got[0].second, 0.85);
  EXPECT_DOUBLE_EQ(got[1].second, 0.3);
}

// The gradient norm: the ranks' mean (ranks at the same step agree), kept
// through a new generation until one of its ranks measures one.
TEST(ProgressAggregatorTest, GradNormIsTheRanksMeanAndOutlivesAGeneration) {
  auto report = [](int rank, int64_t step, double norm) {
    v1::ReportProgressRequest r;
    r.set_rank(rank);
    r.set_step(step);
    r.set_grad_norm(norm);
    return r;
  };
  ProgressAggregator agg;
  v1::JobProgress p;
  agg.Add(report(0, 10, 2.0), "w0", 1);
  agg.Combine(2, v1::TaskSpec(), &p);
  EXPECT_DOUBLE_EQ(p.grad_norm(), 2.0);
  agg.Add(report(1, 20, 3.0), "w1", 2);
  agg.Combine(2, v1::TaskSpec(), &p);
  EXPECT_DOUBLE_EQ(p.grad_norm(), 2.5);
  // A report without a norm (none measured yet) does not count as 0.
  agg.Add(report(1, 21, 0), "w1", 3);
  agg.Combine(2, v1::TaskSpec(), &p);
  EXPECT_DOUBLE_EQ(p.grad_norm(), 2.5);
  // A new generation: the last known norm stays until a rank reports one.
  agg.Reset();
  agg.Add(report(0, 0, 0), "w0", 4);
  agg.Combine(1, v1::TaskSpec(), &p);
  EXPECT_DOUBLE_EQ(p.grad_norm(), 2.5);
  agg.Add(report(0, 30, 0.5), "w0", 5);
  agg.Combine(1, v1::TaskSpec(), &p);
  EXPECT_DOUBLE_EQ(p.grad_norm(), 0.5);
  // After a coordinator restart: the stored progress keeps it.
  ProgressAggregator restored;
  restored.Restore(p);
  v1::JobProgress q = p;
  restored.Combine(1, v1::TaskSpec(), &q);
  EXPECT_DOUBLE_EQ(q.grad_norm(), 0.5);
}

TEST(ProgressAggregatorTest, ANewcomersJoinTimeStaysOnItsRank) {
  ProgressAggregator agg;
  v1::ReportProgressRequest r;
  r.set_rank(1);
  r.set_step(3);
  r.set_join_to_first_step_ms(1800);
  agg.Add(r, "w-1", 0);
  r.set_step(13);
  r.clear_join_to_first_step_ms();  // A report that does not say it again.
  agg.Add(r, "w-1", 0);
  v1::TaskSpec task;
  v1::JobProgress p;
  agg.Combine(2, task, &p);
  ASSERT_EQ(p.ranks_size(), 1);
  EXPECT_EQ(p.ranks(0).join_to_first_step_ms(), 1800);
}

// A rank gone after its generation trained to the end (issue 31): the job
// is final once the others finished, its shard left out; its report, if it
// comes after all, counts.
TEST(ProgressAggregatorTest, AGoneRankIsLeftOutOfTheFinalMetrics) {
  ProgressAggregator agg;
  v1::TaskSpec task;
  v1::JobProgress progress;
  agg.Add(Final(0, 40, 10.0), "w0", 1);
  agg.MarkGone(1, "w1", "missed its lease");
  EXPECT_FALSE(agg.AllFinished(3));
  agg.Add(Final(2, 30, 10.0), "w2", 2);
  EXPECT_TRUE(agg.AllFinished(3));
  agg.Combine(3, task, &progress);
  EXPECT_TRUE(progress.has_final_metrics());
  EXPECT_DOUBLE_EQ(progress.test_accuracy(), 70.0 / 100.0);
  EXPECT_EQ(progress.step(), 10);  // Not the gone rank's 0.
  ASSERT_EQ(agg.Gone(3).size(), 1u);
  EXPECT_EQ(agg.Gone(3)[0]->rank(), 1);
  EXPECT_EQ(agg.Gone(3)[0]->gone(), "missed its lease");
  // Back after all, and its report is in.
  agg.Add(Final(1, 50, 10.0), "w1", 3);
  EXPECT_TRUE(agg.Gone(3).empty());
  agg.Combine(3, task, &progress);
  EXPECT_DOUBLE_EQ(progress.test_accuracy(), 120.0 / 150.0);
  // A finished rank is never marked gone.
  agg.MarkGone(0, "w0", "closed its connection");
  EXPECT_TRUE(agg.Gone(3).empty());
}

TEST(ProgressAggregatorTest, EveryRankGoneIsNotFinished) {
  ProgressAggregator agg;
  agg.MarkGone(0, "w0", "gone");
  agg.MarkGone(1, "w1", "gone");
  EXPECT_FALSE(agg.AllFinished(2));
}

}  // namespace
}  // namespace ringleader

namespace ringleader {
namespace {

TEST(ProgressAggregatorTest, SkippedSamplesAndClassNamesOutliveTheGeneration) {
  ProgressAggregator agg;
  v1::ReportProgressRequest r0;
  r0.set_rank(0);
  r0.set_skipped_samples(2);
  r0.add_class_names("cat");
  r0.add_class_names("dog");
  v1::ReportProgressRequest r1;
  r1.set_rank(1);
  r1.set_skipped_samples(3);
  agg.Add(r0, "w0", 1);
  agg.Add(r1, "w1", 1);
  v1::JobProgress p;
  agg.Combine(2, v1::TaskSpec(), &p);
  EXPECT_EQ(p.skipped_samples(), 3);
  ASSERT_EQ(p.class_names_size(), 2);
  EXPECT_EQ(p.class_names(1), "dog");
  agg.Reset();  // A new generation reports less: the job keeps the most.
  r1.set_skipped_samples(1);
  agg.Add(r1, "w1", 2);
  agg.Combine(2, v1::TaskSpec(), &p);
  EXPECT_EQ(p.skipped_samples(), 3);
  EXPECT_EQ(p.class_names_size(), 2);
}

}  // namespace
}  // namespace ringleader
