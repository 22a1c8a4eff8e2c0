#include "cli/job_format.h"

#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace ringleader::cli {
namespace {

const absl::Time kNow = absl::FromUnixSeconds(1700000000);

v1::Job SampleJob() {
  v1::Job job;
  job.set_job_id("mnist-3");
  job.set_state(v1::JOB_STATE_RUNNING);
  job.set_generation(2);
  job.set_world_size(4);
  job.set_restarts(1);
  job.set_create_time_ms(absl::ToUnixMillis(kNow - absl::Minutes(5)));
  job.set_update_time_ms(absl::ToUnixMillis(kNow - absl::Seconds(2)));
  v1::JobSpec* spec = job.mutable_spec();
  spec->set_name("mnist");
  spec->set_epochs(10);
  spec->set_batch_size(64);
  spec->set_min_workers(2);
  spec->set_max_workers(4);
  spec->set_max_restarts(3);
  spec->mutable_model()->set_arch(v1::MODEL_ARCH_MLP);
  spec->mutable_model()->add_hidden_sizes(256);
  spec->mutable_model()->add_hidden_sizes(128);
  spec->mutable_dataset()->set_format(v1::DATASET_FORMAT_IDX);
  spec->mutable_dataset()->set_path("/data/fashion");
  spec->mutable_dataset()->set_shuffle(true);
  spec->mutable_optimizer()->set_kind(v1::OPTIMIZER_KIND_SGD);
  spec->mutable_optimizer()->set_learning_rate(0.05);
  spec->mutable_optimizer()->set_momentum(0.9);
  v1::JobProgress* p = job.mutable_progress();
  p->set_epoch(2);
  p->set_step(1200);
  p->set_total_steps(2400);
  p->set_loss(0.5);
  p->set_samples_per_sec(1534.25);
  return job;
}

TEST(JobStateNameTest, StripsPrefix) {
  EXPECT_EQ(JobStateName(v1::JOB_STATE_RUNNING), "RUNNING");
  EXPECT_EQ(JobStateName(v1::JOB_STATE_CANCELLED), "CANCELLED");
  EXPECT_EQ(JobStateName(static_cast<v1::JobState>(99)), "99");
  EXPECT_EQ(WorkerStateName(v1::WORKER_STATE_BUSY), "BUSY");
}

TEST(JobStateNameTest, PreemptedIsNamed) {
  EXPECT_EQ(JobStateName(v1::JOB_STATE_PREEMPTED), "PREEMPTED");
}

TEST(ParseJobStatesTest, NamesInAnyCaseWithOrWithoutPrefix) {
  absl::StatusOr<std::vector<v1::JobState>> s =
      ParseJobStates("running, PENDING,job_state_failed");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(*s, (std::vector<v1::JobState>{v1::JOB_STATE_RUNNING,
                                           v1::JOB_STATE_PENDING,
                                           v1::JOB_STATE_FAILED}));
  EXPECT_TRUE(ParseJobStates("")->empty());
}

TEST(ParseJobStatesTest, UnknownNameIsNamed) {
  absl::StatusOr<std::vector<v1::JobState>> s = ParseJobStates("running,done");
  ASSERT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("\"done\""), std::string::npos);
  EXPECT_NE(s.status().message().find("succeeded"), std::string::npos);
  EXPECT_FALSE(ParseJobStates("unspecified").ok());
}

TEST(HumanDurationTest, TwoUnitsAtMost) {
  EXPECT_EQ(HumanDuration(absl::ZeroDuration()), "0s");
  EXPECT_EQ(HumanDuration(absl::Milliseconds(999)), "0s");
  EXPECT_EQ(HumanDuration(absl::Seconds(42)), "42s");
  EXPECT_EQ(HumanDuration(absl::Seconds(185)), "3m05s");
  EXPECT_EQ(HumanDuration(absl::Minutes(123)), "2h03m");
  EXPECT_EQ(HumanDuration(absl::Hours(76)), "3d04h");
  EXPECT_EQ(HumanDuration(absl::Seconds(-5)), "0s");
  EXPECT_EQ(HumanDuration(absl::InfiniteDuration()), "-");
}

TEST(ProgressPiecesTest, DashesBeforeTheFirstStep) {
  v1::Job job;
  job.mutable_spec()->set_epochs(3);
  EXPECT_EQ(FormatStepTotal(job.progress()), "-");
  EXPECT_EQ(FormatLoss(job.progress()), "-");
  EXPECT_EQ(FormatEpoch(job), "-");
  EXPECT_EQ(FormatSamplesPerSec(0), "-");
  job.mutable_progress()->set_step(7);
  EXPECT_EQ(FormatStepTotal(job.progress()), "7/?");
  EXPECT_EQ(FormatEpoch(job), "1/3");
  EXPECT_EQ(FormatLoss(job.progress()), "0.0000");
}

TEST(FormatJobsTableTest, OneRowPerJob) {
  v1::Job pending;
  pending.set_job_id("b-4");
  pending.set_state(v1::JOB_STATE_PENDING);
  EXPECT_EQ(
      FormatJobsTable({SampleJob(), pending}),
      "ID       STATE    GEN  WORKERS  EPOCH  STEP/TOTAL  LOSS    SAMPLES/S  "
      "RESTARTS\n"
      "mnist-3  RUNNING  2    4        3/10   1200/2400   0.5000  1534.2     "
      "1\n"
      "b-4      PENDING  0    0        -      -           -       -          "
      "0\n");
}

TEST(FormatJobDetailTest, KeyFacts) {
  v1::Job job = SampleJob();
  job.mutable_progress()->set_has_final_metrics(true);
  job.mutable_progress()->set_final_train_loss(0.25);
  job.mutable_progress()->set_test_accuracy(0.9);
  job.mutable_last_checkpoint()->set_checkpoint_id(3);
  job.mutable_last_checkpoint()->set_step(1000);
  job.mutable_last_checkpoint()->set_epoch(1);
  job.mutable_last_checkpoint()->set_path("/ck/mnist/3.ckpt");
  const std::string text = FormatJobDetail(job, kNow);
  for (const char* want : {
           "ID          mnist-3\n",
           "STATE       RUNNING\n",
           "WORKERS     4 (min 2, max 4)\n",
           "RESTARTS    1 of 3 allowed\n",
           "EPOCH       3/10\n",
           "STEP        1200/2400 (50.0%)\n",
           "LOSS        0.5000\n",
           "FINAL       train loss 0.2500, test accuracy 90.00%\n",
           "CHECKPOINT  #3 at step 1000 (epoch 2) /ck/mnist/3.ckpt\n",
           "MODEL       mlp 256,128\n",
           "DATASET     idx /data/fashion, shuffled\n",
           "OPTIMIZER   sgd lr 0.05 momentum 0.9\n",
           "CREATED     2023-11-14 22:08:20 UTC (5m00s ago)\n",
           "UPDATED     2023-11-14 22:13:18 UTC (2s ago)\n",
       }) {
    EXPECT_NE(text.find(want), std::string::npos) << want << "in\n" << text;
  }
}

TEST(FormatJobDetailTest, StalledNamesTheRankTheOthersWaitFor) {
  v1::Job job = SampleJob();
  EXPECT_EQ(FormatJobDetail(job, kNow).find("STALLED"), std::string::npos);
  v1::WaitingFor& w = *job.mutable_waiting_for();
  w.set_waited_ms(12345);
  w.set_wait_phase(v1::WORKER_PHASE_ALLREDUCE_WAIT);
  w.set_step(4711);
  w.set_rank(2);
  w.set_host("h3");
  w.set_phase(v1::WORKER_PHASE_DATA_LOADING);
  w.set_phase_ms(12400);
  const std::string text = FormatJobDetail(job, kNow);
  EXPECT_NE(text.find("STALLED     waiting 12.3 s in all-reduce of step 4711 "
                      "for rank 2 (host h3): data loading for 12.4 s\n"),
            std::string::npos)
      << text;
  w.set_silent_ms(3050);
  w.set_phase(v1::WORKER_PHASE_BACKWARD);
  EXPECT_NE(FormatJobDetail(job, kNow).find(
                "for rank 2 (host h3): no heartbeat for 3.0 s, last "
                "seen in backward\n"),
            std::string::npos);
}

TEST(FormatJobDetailTest, ImageDataSkippedSamplesAndClassNames) {
  v1::Job job;
  job.set_job_id("img-1");
  job.mutable_spec()->mutable_dataset()->set_format(
      v1::DATASET_FORMAT_IMAGE_FOLDER);
  job.mutable_spec()->mutable_dataset()->set_train_root("/d/train");
  const std::string plain = FormatJobDetail(job, absl::UnixEpoch());
  EXPECT_EQ(plain.find("SKIPPED"), std::string::npos) << plain;
  EXPECT_NE(plain.find("image_folder train /d/train, 224px"), std::string::npos)
      << plain;
  job.mutable_spec()->mutable_dataset()->set_skip_corrupt(true);
  job.mutable_progress()->set_skipped_samples(3);
  for (int c = 0; c < 10; ++c) {
    job.mutable_progress()->add_class_names(absl::StrCat("c", c));
  }
  const std::string text = FormatJobDetail(job, absl::UnixEpoch());
  EXPECT_NE(text.find("3 unreadable samples (skip_corrupt)"), std::string::npos)
      << text;
  EXPECT_NE(text.find("10: c0, c1, c2, c3, c4, c5, c6, c7, ..."),
            std::string::npos)
      << text;
}

TEST(FormatJobDetailTest, GradNormScheduleAndTheNewOptimizerSettings) {
  v1::Job job = SampleJob();
  EXPECT_NE(FormatJobDetail(job, kNow).find("GRAD NORM   -\n"),
            std::string::npos);
  EXPECT_EQ(FormatJobDetail(job, kNow).find("SCHEDULE"), std::string::npos);
  job.mutable_progress()->set_grad_norm(1.23456);
  v1::JobSpec* spec = job.mutable_spec();
  spec->set_clip_grad_norm(1);
  v1::OptimizerSpec* o = spec->mutable_optimizer();
  o->set_kind(v1::OPTIMIZER_KIND_ADAMW);
  o->set_momentum(0);
  o->set_learning_rate(0.0006);
  o->set_beta2(0.95);
  o->set_weight_decay(0.1);
  o->set_no_decay_bias_and_norm(true);
  v1::LrSchedule* l = spec->mutable_lr_schedule();
  l->set_kind(v1::LR_SCHEDULE_KIND_COSINE);
  l->set_warmup_steps(100);
  l->set_min_lr(6e-5);
  l->set_decay_steps(5000);
  const std::string text = FormatJobDetail(job, kNow);
  for (const char* want : {
           "GRAD NORM   1.235 (clipped to 1)\n",
           "OPTIMIZER   adamw lr 0.0006 betas (0.9, 0.95) weight decay 0.1 "
           "(not on biases, norms)\n",
           "SCHEDULE    cosine, warmup 100, min lr 6e-05, to step 5000; clip "
           "grad norm 1\n",
       }) {
    EXPECT_NE(text.find(want), std::string::npos) << want << "in\n" << text;
  }
  spec->clear_lr_schedule();
  spec->set_clip_grad_norm(0);
  o->set_kind(v1::OPTIMIZER_KIND_SGD);
  o->set_momentum(0.9);
  o->set_nesterov(true);
  o->clear_beta2();
  o->set_weight_decay(0);
  l = spec->mutable_lr_schedule();
  l->set_kind(v1::LR_SCHEDULE_KIND_STEP);
  l->set_step_size(30);
  const std::string sgd = FormatJobDetail(job, kNow);
  for (const char* want : {
           "GRAD NORM   1.235\n",
           "OPTIMIZER   sgd lr 0.0006 momentum 0.9 nesterov\n",
           "SCHEDULE    step, x0.1 every 30\n",
       }) {
    EXPECT_NE(sgd.find(want), std::string::npos) << want << "in\n" << sgd;
  }
}

TEST(FormatJobDetailTest, StateCarriesTheMessage) {
  v1::Job job = SampleJob();
  job.set_state(v1::JOB_STATE_FAILED);
  job.set_message("restart budget spent");
  EXPECT_NE(FormatJobDetail(job, kNow).find(
                "STATE       FAILED (restart budget spent)\n"),
            std::string::npos);
}

void AddMetric(google::protobuf::RepeatedPtrField<v1::Metric>* list,
               const std::string& name, double value) {
  v1::Metric* m = list->Add();
  m->set_name(name);
  m->set_value(value);
}

TEST(FormatJobMessageTest, ShortMessagesStayAsTheyAre) {
  EXPECT_EQ(FormatJobMessage("restart budget spent"), "restart budget spent");
  EXPECT_EQ(FormatJobMessage(""), "");
  EXPECT_EQ(FormatJobMessage(std::string(300, 'x')), std::string(300, 'x'));
}

TEST(FormatJobMessageTest, FirstLineOfSeveral) {
  EXPECT_EQ(FormatJobMessage("rank 1: cannot read /d/x.npy: not a .npy "
                             "file\n  at LoadNpy\n  at Trainer::Run\n"),
            "rank 1: cannot read /d/x.npy: not a .npy file...");
  // Blank lines before the text and a trailing newline alone cut nothing.
  EXPECT_EQ(FormatJobMessage("\n\n  rank 0: out of memory\r\n"),
            "rank 0: out of memory");
}

TEST(FormatJobMessageTest, LongLinesAreCut) {
  EXPECT_EQ(FormatJobMessage(std::string(301, 'x')),
            std::string(300, 'x') + "...");
  EXPECT_EQ(FormatJobMessage("abcdef", 3), "abc...");
  // "é" is two bytes: a cut between them backs off to before it.
  EXPECT_EQ(FormatJobMessage("ab\xc3\xa9z", 3), "ab...");
  EXPECT_EQ(FormatJobMessage("ab\xc3\xa9z", 4), "ab\xc3\xa9...");
}

TEST(FormatJobMessageTest, ControlBytesBecomeSpaces) {
  EXPECT_EQ(FormatJobMessage("red \x1b[31mERROR\x1b[0m\tdone"),
            "red  [31mERROR [0m done");
}

TEST(FormatMetricValueTest, AccuraciesArePercentagesOthersFourDigits) {
  v1::Metric m;
  m.set_name("accuracy");
  m.set_value(0.91234);
  EXPECT_EQ(FormatMetricValue(m), "91.23%");
  m.set_name("top5_accuracy");
  m.set_value(0.998);
  EXPECT_EQ(FormatMetricValue(m), "99.80%");
  m.set_name("loss");
  m.set_value(0.25123);
  EXPECT_EQ(FormatMetricValue(m), "0.2512");
  m.set_name("bits_per_token");
  m.set_value(1.31 / std::log(2.0));
  EXPECT_EQ(FormatMetricValue(m), "1.890");
  m.set_name("perplexity");
  m.set_value(std::exp(1.31));
  EXPECT_EQ(FormatMetricValue(m), "3.706");
  m.set_value(50257.4);
  EXPECT_EQ(FormatMetricValue(m), "50257");
  m.set_name("mse");
  m.set_value(0);
  EXPECT_EQ(FormatMetricValue(m), "0.000");
  m.set_value(1.5e-5);
  EXPECT_EQ(FormatMetricValue(m), "1.500e-05");
}

TEST(FormatTestMetricsTest, EveryMetricByNameOrTheOldAccuracy) {
  google::protobuf::RepeatedPtrField<v1::Metric> metrics;
  EXPECT_EQ(FormatTestMetrics(metrics, 0.875), "test accuracy 87.50%");
  AddMetric(&metrics, "accuracy", 0.9123);
  AddMetric(&metrics, "top5_accuracy", 0.998);
  AddMetric(&metrics, "loss", 0.2512);
  EXPECT_EQ(FormatTestMetrics(metrics, 0.9123),
            "test accuracy 91.23%, top5_accuracy 99.80%, loss 0.2512");
}

TEST(FormatJobDetailTest, MetricsEvaluationsTaskAndExport) {
  v1::Job job = SampleJob();
  job.set_state(v1::JOB_STATE_SUCCEEDED);
  v1::JobSpec* spec = job.mutable_spec();
  spec->mutable_model()->set_arch(v1::MODEL_ARCH_TORCHSCRIPT);
  spec->mutable_model()->clear_hidden_sizes();
  spec->mutable_model()->set_torchscript_path("/m/gpt.pt");
  v1::DatasetSpec* d = spec->mutable_dataset();
  d->Clear();
  d->set_format(v1::DATASET_FORMAT_TOKENS);
  d->set_train_tokens("/d/train.bin");
  d->set_test_tokens("/d/val.bin");
  d->set_token_dtype(v1::TOKEN_DTYPE_UINT16);
  d->set_block_size(256);
  spec->mutable_task()->set_kind(v1::TASK_KIND_LANGUAGE_MODEL);
  spec->mutable_task()->set_loss(v1::LOSS_KIND_MODEL);
  spec->mutable_task()->set_ignore_index(-1);
  spec->mutable_export_()->set_torchscript_path("/out/gpt.pt");
  spec->mutable_export_()->set_safetensors_path("/out/gpt.safetensors");
  v1::JobProgress* p = job.mutable_progress();
  p->set_has_final_metrics(true);
  p->set_final_train_loss(1.2345);
  AddMetric(p->mutable_test_metrics(), "loss", 1.31);
  AddMetric(p->mutable_test_metrics(), "perplexity", std::exp(1.31));
  AddMetric(p->mutable_test_metrics(), "bits_per_token", 1.31 / std::log(2.0));
  v1::EpochEvaluation* e1 = p->add_evaluations();
  e1->set_epoch(1);
  AddMetric(e1->mutable_metrics(), "loss", 1.5);
  v1::EpochEvaluation* e2 = p->add_evaluations();
  e2->set_epoch(2);
  AddMetric(e2->mutable_metrics(), "loss", 1.31);
  const std::string text = FormatJobDetail(job, kNow);
  for (const char* want : {
           "FINAL        train loss 1.2345, test loss 1.310, perplexity "
           "3.706, bits_per_token 1.890\n",
           "EVALUATIONS  epoch 1: test loss 1.500\n"
           "             epoch 2: test loss 1.310\n",
           "MODEL        torchscript /m/gpt.pt\n",
           "DATASET      tokens train /d/train.bin, test /d/val.bin, uint16, "
           "block 256\n",
           "TASK         language_model, loss model, ignore_index -1\n",
           "EXPORT       torchscript /out/gpt.pt, safetensors "
           "/out/gpt.safetensors\n",
       }) {
    EXPECT_NE(text.find(want), std::string::npos) << want << "in\n" << text;
  }
}

TEST(FormatJobDetailTest, NpyDatasetAndOldEvaluations) {
  v1::Job job = SampleJob();
  v1::DatasetSpec* d = job.mutable_spec()->mutable_dataset();
  d->Clear();
  d->set_format(v1::DATASET_FORMAT_NPY);
  d->mutable_train()->add_inputs("/d/x.npy");
  d->mutable_train()->add_inputs("/d/m.npy");
  d->mutable_train()->set_targets("/d/y.npy");
  d->mutable_test()->add_inputs("/d/tx.npy");
  d->mutable_test()->add_inputs("/d/tm.npy");
  d->mutable_test()->set_targets("/d/ty.npy");
  // Evaluations from before metrics carry the accuracy alone.
  v1::EpochEvaluation* e = job.mutable_progress()->add_evaluations();
  e->set_epoch(1);
  e->set_test_accuracy(0.855);
  const std::string text = FormatJobDetail(job, kNow);
  for (const char* want : {
           "DATASET      npy train /d/x.npy,/d/m.npy -> /d/y.npy; test "
           "/d/tx.npy,/d/tm.npy -> /d/ty.npy\n",
           "EVALUATIONS  epoch 1: test accuracy 85.50%\n",
       }) {
    EXPECT_NE(text.find(want), std::string::npos) << want << "in\n" << text;
  }
  EXPECT_EQ(text.find("TASK"), std::string::npos) << text;
  EXPECT_EQ(text.find("EXPORT"), std::string::npos) << text;
}

TEST(FormatJobDetailTest, OnlyTheLastTenEvaluations) {
  v1::Job job = SampleJob();
  for (int epoch = 1; epoch <= 12; ++epoch) {
    v1::EpochEvaluation* e = job.mutable_progress()->add_evaluations();
    e->set_epoch(epoch);
    AddMetric(e->mutable_metrics(), "accuracy", 0.5);
  }
  const std::string text = FormatJobDetail(job, kNow);
  EXPECT_NE(text.find("EVALUATIONS  (2 earlier; --output=json has all)\n"
                      "             epoch 3: test accuracy 50.00%\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("             epoch 12: test accuracy 50.00%\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("epoch 2:"), std::string::npos) << text;
}

TEST(FormatJobDetailTest, AFailedJobsLongMessageIsOneLine) {
  v1::Job job = SampleJob();
  job.set_state(v1::JOB_STATE_FAILED);
  job.set_message("rank 1: training failed: CUDA out of memory\n" +
                  std::string(2000, '#') + "\n");
  const std::string text = FormatJobDetail(job, kNow);
  EXPECT_NE(text.find("STATE       FAILED (rank 1: training failed: CUDA out "
                      "of memory...)\nGENERATION"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find('#'), std::string::npos);
}

TEST(FormatWorkersTableTest, AgeOfLastHeartbeat) {
  v1::WorkerInfo busy;
  busy.set_worker_id("w-1");
  busy.set_hostname("gpu-a");
  busy.set_device("cuda:0");
  busy.set_state(v1::WORKER_STATE_BUSY);
  busy.set_job_id("mnist-3");
  busy.set_last_heartbeat_ms(absl::ToUnixMillis(kNow - absl::Seconds(2)));
  v1::WorkerInfo idle;
  idle.set_worker_id("w-2");
  idle.set_hostname("cpu-b");
  idle.set_device("cpu");
  idle.set_state(v1::WORKER_STATE_IDLE);
  EXPECT_EQ(FormatWorkersTable({busy, idle}, kNow),
            "ID   HOST   DEVICE  STATE  JOB      LAST HEARTBEAT\n"
            "w-1  gpu-a  cuda:0  BUSY   mnist-3  2s ago\n"
            "w-2  cpu-b  cpu     IDLE   -        -\n");
}

TEST(FormatJobDetailTest, NewcomersSayHowLongTheyTookToTheirFirstStep) {
  v1::Job job = SampleJob();
  EXPECT_EQ(FormatJobDetail(job, kNow).find("JOINED"), std::string::npos);
  v1::RankProgress* r = job.mutable_progress()->add_ranks();
  r->set_rank(2);
  r->set_join_to_first_step_ms(1850);
  job.mutable_progress()->add_ranks()->set_rank(0);  // In the job before.
  EXPECT_NE(FormatJobDetail(job, kNow).find(
                "JOINED      rank 2 first step 1.9s after its "
                "assignment\n"),
            std::string::npos)
      << FormatJobDetail(job, kNow);
}

}  // namespace
}  // namespace ringleader::cli
