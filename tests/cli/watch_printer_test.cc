#include <sstream>
#include <string>
#include <utility>

#include "cli/watch_command.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace ringleader::cli {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1700000000);

v1::Job Snapshot(v1::JobState state, int64_t step) {
  v1::Job job;
  job.set_job_id("mnist-3");
  job.set_state(state);
  job.mutable_spec()->set_epochs(1);
  job.mutable_spec()->set_batch_size(10);
  if (state != v1::JOB_STATE_PENDING) {
    job.set_generation(1);
    job.set_world_size(2);
    job.mutable_progress()->set_step(step);
    job.mutable_progress()->set_total_steps(100);
    job.mutable_progress()->set_loss(0.5);
  }
  return job;
}

v1::Job Finished(v1::JobState state, const std::string& message) {
  v1::Job job = Snapshot(state, 100);
  job.set_message(message);
  if (state == v1::JOB_STATE_SUCCEEDED) {
    job.mutable_progress()->set_has_final_metrics(true);
    job.mutable_progress()->set_final_train_loss(0.125);
    job.mutable_progress()->set_test_accuracy(0.875);
  }
  return job;
}

CliConfig Config(bool tty, OutputFormat output = OutputFormat::kText) {
  CliConfig config;
  config.stdout_is_tty = tty;
  config.output = output;
  return config;
}

TEST(WatchPrinterTest, PipeGetsALinePerStateAndTheSummary) {
  const CliConfig config = Config(false);
  std::ostringstream out;
  WatchPrinter printer(config, out);
  printer.OnJob(Snapshot(v1::JOB_STATE_PENDING, 0), kT0);
  printer.OnJob(Snapshot(v1::JOB_STATE_RUNNING, 50), kT0 + absl::Seconds(1));
  printer.OnJob(Finished(v1::JOB_STATE_SUCCEEDED, "all ranks finished"),
                kT0 + absl::Seconds(2));
  const CommandStatus status = printer.Finish("mnist-3", absl::OkStatus());
  EXPECT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(out.str(),
            "PENDING\n"
            "RUNNING gen 1 world 2 epoch 1/1 [##########----------]  50.0% "
            "50/100 loss 0.5000\n"
            "SUCCEEDED gen 1 world 2 epoch 1/1 [####################] 100.0% "
            "100/100 loss 0.5000\n"
            "job mnist-3 SUCCEEDED: all ranks finished\n"
            "final train loss 0.1250, test accuracy 87.50%\n");
}

TEST(WatchPrinterTest, PipeGetsALinePerNewStepAtMostOncePerSecond) {
  // Two ranks report each step 100 ms apart: on a terminal every update is
  // redrawn, in a log each second's first new step is enough.
  const CliConfig config = Config(false);
  std::ostringstream out;
  WatchPrinter printer(config, out);
  printer.OnJob(Snapshot(v1::JOB_STATE_PENDING, 0), kT0);
  for (int step = 1; step <= 25; ++step) {
    for (int rank = 0; rank < 2; ++rank) {
      printer.OnJob(Snapshot(v1::JOB_STATE_RUNNING, step),
                    kT0 + absl::Milliseconds(100 * step + rank));
    }
  }
  printer.OnJob(Finished(v1::JOB_STATE_SUCCEEDED, "all ranks finished"),
                kT0 + absl::Milliseconds(2550));
  ASSERT_TRUE(printer.Finish("mnist-3", absl::OkStatus()).ok());
  // Step 1 starts RUNNING at 0.1 s; 11 and 21 are the next a second apart;
  // 25 is a quarter of the run.
  EXPECT_EQ(out.str(),
            "PENDING\n"
            "RUNNING gen 1 world 2 epoch 1/1 [--------------------]   1.0% "
            "1/100 loss 0.5000\n"
            "RUNNING gen 1 world 2 epoch 1/1 [##------------------]  11.0% "
            "11/100 loss 0.5000 ETA 9s\n"
            "RUNNING gen 1 world 2 epoch 1/1 [####----------------]  21.0% "
            "21/100 loss 0.5000 ETA 8s\n"
            "RUNNING gen 1 world 2 epoch 1/1 [#####---------------]  25.0% "
            "25/100 loss 0.5000 ETA 8s\n"
            "SUCCEEDED gen 1 world 2 epoch 1/1 [####################] 100.0% "
            "100/100 loss 0.5000\n"
            "job mnist-3 SUCCEEDED: all ranks finished\n"
            "final train loss 0.1250, test accuracy 87.50%\n");
}

TEST(WatchPrinterTest, EtaFromObservedStepRate) {
  const CliConfig config = Config(false);
  std::ostringstream out;
  WatchPrinter printer(config, out);
  printer.OnJob(Snapshot(v1::JOB_STATE_RUNNING, 10), kT0);
  printer.OnJob(Snapshot(v1::JOB_STATE_RUNNING, 30), kT0 + absl::Seconds(2));
  // 20 steps in 2 s; 70 left: 7 s.
  EXPECT_NE(out.str().find("30/100 loss 0.5000 ETA 7s\n"), std::string::npos)
      << out.str();
}

TEST(WatchPrinterTest, TerminalRedrawsInPlaceAndBreaksOnStateChange) {
  const CliConfig config = Config(true);
  std::ostringstream out;
  WatchPrinter printer(config, out);
  printer.OnJob(Snapshot(v1::JOB_STATE_PENDING, 0), kT0);
  printer.OnJob(Snapshot(v1::JOB_STATE_RUNNING, 10), kT0);
  printer.OnJob(Snapshot(v1::JOB_STATE_RUNNING, 20), kT0);
  printer.OnJob(Finished(v1::JOB_STATE_CANCELLED, "cancelled by user"), kT0);
  const CommandStatus status = printer.Finish("mnist-3", absl::OkStatus());
  EXPECT_EQ(status.code(), kExitOperational);
  EXPECT_EQ(status.message(), "job mnist-3 CANCELLED: cancelled by user");
  const std::string s = out.str();
  EXPECT_EQ(s.rfind("\rPENDING\x1b[K\n\rRUNNING", 0), 0u) << s;
  // The two RUNNING updates share a row: no newline between them.
  const size_t first = s.find("\rRUNNING");
  const size_t second = s.find("\rRUNNING", first + 1);
  ASSERT_NE(second, std::string::npos);
  EXPECT_EQ(s.substr(first, second - first).find('\n'), std::string::npos);
  EXPECT_NE(s.find("\x1b[K\n\rCANCELLED"), std::string::npos) << s;
  EXPECT_NE(s.find("\x1b[K\njob mnist-3 CANCELLED: cancelled by user\n"),
            std::string::npos)
      << s;
}

TEST(WatchPrinterTest, TerminalLineFitsTheWidth) {
  CliConfig config = Config(true);
  config.terminal_width = 20;
  std::ostringstream out;
  WatchPrinter printer(config, out);
  printer.OnJob(Snapshot(v1::JOB_STATE_RUNNING, 10), kT0);
  EXPECT_EQ(out.str(), "\rRUNNING gen 1 world\x1b[K");
}

TEST(WatchPrinterTest, JsonIsOneObjectPerLineWithoutSummary) {
  const CliConfig config = Config(true, OutputFormat::kJson);
  std::ostringstream out;
  WatchPrinter printer(config, out);
  printer.OnJob(Snapshot(v1::JOB_STATE_RUNNING, 10), kT0);
  printer.OnJob(Finished(v1::JOB_STATE_FAILED, "restart budget spent"), kT0);
  const CommandStatus status = printer.Finish("mnist-3", absl::OkStatus());
  EXPECT_EQ(status.code(), kExitOperational);
  EXPECT_EQ(status.message(), "job mnist-3 FAILED: restart budget spent");
  std::istringstream lines(out.str());
  std::string line;
  std::vector<std::string> states;
  while (std::getline(lines, line)) {
    states.push_back(nlohmann::json::parse(line)["state"]);
  }
  EXPECT_EQ(states, (std::vector<std::string>{"JOB_STATE_RUNNING",
                                              "JOB_STATE_FAILED"}));
}

TEST(WatchPrinterTest, StreamErrorBeforeAnyUpdateIsTheRpcError) {
  const CliConfig config = Config(false);
  std::ostringstream out;
  WatchPrinter printer(config, out);
  const CommandStatus status =
      printer.Finish("x-1", absl::NotFoundError("job x-1 does not exist"));
  EXPECT_EQ(status.code(), kExitOperational);
  EXPECT_EQ(status.message(), "job x-1 does not exist");
  EXPECT_EQ(out.str(), "");
}

TEST(WatchPrinterTest, StreamBrokenMidway) {
  const CliConfig config = Config(false);
  std::ostringstream out;
  WatchPrinter printer(config, out);
  printer.OnJob(Snapshot(v1::JOB_STATE_RUNNING, 10), kT0);
  const CommandStatus status = printer.Finish(
      "mnist-3", absl::UnavailableError("cannot reach coordinator at h:1 (is "
                                        "it running?)"));
  EXPECT_EQ(status.code(), kExitOperational);
  EXPECT_EQ(status.message(),
            "watch of job mnist-3 broke off: cannot reach coordinator at h:1 "
            "(is it running?)");
}

TEST(WatchPrinterTest, StreamEndingBeforeFinalStateIsAnError) {
  const CliConfig config = Config(false);
  std::ostringstream out;
  WatchPrinter printer(config, out);
  printer.OnJob(Snapshot(v1::JOB_STATE_RUNNING, 10), kT0);
  const CommandStatus status = printer.Finish("mnist-3", absl::OkStatus());
  EXPECT_EQ(status.code(), kExitOperational);
  EXPECT_EQ(status.message(),
            "watch of job mnist-3 ended before the job finished (last state "
            "RUNNING)");
}

void AddEvaluation(v1::Job* job, int64_t epoch, double accuracy, double loss) {
  v1::EpochEvaluation* e = job->mutable_progress()->add_evaluations();
  e->set_epoch(epoch);
  e->set_test_accuracy(accuracy);
  for (const auto& [name, value] :
       {std::pair<const char*, double>{"accuracy", accuracy}, {"loss", loss}}) {
    v1::Metric* m = e->add_metrics();
    m->set_name(name);
    m->set_value(value);
  }
}

TEST(WatchPrinterTest, PipePrintsAnEvaluationWhoseStatusLineIsHeldBack) {
  const CliConfig config = Config(false);
  std::ostringstream out;
  WatchPrinter printer(config, out);
  v1::Job job = Snapshot(v1::JOB_STATE_RUNNING, 40);
  printer.OnJob(job, kT0);
  job.mutable_progress()->set_step(41);
  AddEvaluation(&job, 1, 0.8, 0.55);
  printer.OnJob(job, kT0 + absl::Milliseconds(10));
  EXPECT_EQ(out.str(),
            "RUNNING gen 1 world 2 epoch 1/1 [########------------]  40.0% "
            "40/100 loss 0.5000\n"
            "evaluated epoch 1: test accuracy 80.00%, loss 0.5500\n");
}

TEST(WatchPrinterTest, EachEvaluationIsPrintedOnceAndTheFinalOneInTheSummary) {
  const CliConfig config = Config(false);
  std::ostringstream out;
  WatchPrinter printer(config, out);
  v1::Job job = Snapshot(v1::JOB_STATE_RUNNING, 40);
  AddEvaluation(&job, 1, 0.8, 0.55);
  printer.OnJob(job, kT0);
  job.mutable_progress()->set_step(50);
  printer.OnJob(job, kT0 + absl::Seconds(1));  // No new evaluation.
  job.mutable_progress()->set_step(80);
  AddEvaluation(&job, 2, 0.855, 0.4012);
  printer.OnJob(job, kT0 + absl::Seconds(2));
  v1::Job done = Finished(v1::JOB_STATE_SUCCEEDED, "all ranks finished");
  *done.mutable_progress()->mutable_evaluations() =
      job.progress().evaluations();
  AddEvaluation(&done, 3, 0.875, 0.35);
  v1::Metric* m = done.mutable_progress()->add_test_metrics();
  m->set_name("accuracy");
  m->set_value(0.875);
  m = done.mutable_progress()->add_test_metrics();
  m->set_name("loss");
  m->set_value(0.35);
  printer.OnJob(done, kT0 + absl::Seconds(3));
  ASSERT_TRUE(printer.Finish("mnist-3", absl::OkStatus()).ok());
  EXPECT_EQ(out.str(),
            "evaluated epoch 1: test accuracy 80.00%, loss 0.5500\n"
            "RUNNING gen 1 world 2 epoch 1/1 [########------------]  40.0% "
            "40/100 loss 0.5000\n"
            "RUNNING gen 1 world 2 epoch 1/1 [##########----------]  50.0% "
            "50/100 loss 0.5000 ETA 5s\n"
            "evaluated epoch 2: test accuracy 85.50%, loss 0.4012\n"
            "RUNNING gen 1 world 2 epoch 1/1 [################----]  80.0% "
            "80/100 loss 0.5000 ETA 1s\n"
            "SUCCEEDED gen 1 world 2 epoch 1/1 [####################] 100.0% "
            "100/100 loss 0.5000\n"
            "job mnist-3 SUCCEEDED: all ranks finished\n"
            "final train loss 0.1250, test accuracy 87.50%, loss 0.3500\n");
}

TEST(WatchPrinterTest, AFailedJobsMessageIsOneLineInTheSummaryAndStatus) {
  const CliConfig config = Config(false);
  std::ostringstream out;
  WatchPrinter printer(config, out);
  const std::string message =
      "rank 1: cannot read /data/x.npy: bad header\n" + std::string(5000, 'x');
  printer.OnJob(Finished(v1::JOB_STATE_FAILED, message), kT0);
  const CommandStatus status = printer.Finish("mnist-3", absl::OkStatus());
  EXPECT_EQ(status.code(), kExitOperational);
  EXPECT_EQ(status.message(),
            "job mnist-3 FAILED: rank 1: cannot read /data/x.npy: bad "
            "header...");
  EXPECT_NE(out.str().find("job mnist-3 FAILED: rank 1: cannot read "
                           "/data/x.npy: bad header...\n"),
            std::string::npos)
      << out.str();
  EXPECT_EQ(out.str().find("xxx"), std::string::npos);
}

TEST(WatchPrinterTest, JsonKeepsTheWholeMessageAndNamesTheMetrics) {
  const CliConfig config = Config(false, OutputFormat::kJson);
  std::ostringstream out;
  WatchPrinter printer(config, out);
  v1::Job job = Finished(v1::JOB_STATE_FAILED, "first line\nsecond line");
  AddEvaluation(&job, 1, 0.8, 0.55);
  v1::RankProgress* r = job.mutable_progress()->add_ranks();
  v1::MetricSum* sum = r->add_eval_metrics();
  sum->set_name("loss");
  sum->set_sum(27.5);
  sum->set_count(50);
  printer.OnJob(job, kT0);
  const nlohmann::json doc = nlohmann::json::parse(out.str());
  EXPECT_EQ(doc["message"], "first line\nsecond line");
  EXPECT_EQ(doc["progress"]["evaluations"][0]["metrics"][1]["name"], "loss");
  EXPECT_DOUBLE_EQ(
      doc["progress"]["evaluations"][0]["metrics"][1]["value"].get<double>(),
      0.55);
  EXPECT_EQ(doc["progress"]["ranks"][0]["evalMetrics"][0]["count"], "50");
  EXPECT_EQ(out.str().find("evaluated"), std::string::npos);
}

// Three running ranks; rank 2 takes `slow_ms` per step, the others 100 ms.
v1::Job WithStepTimes(int64_t step, double slow_ms) {
  v1::Job job = Snapshot(v1::JOB_STATE_RUNNING, step);
  job.set_world_size(3);
  for (int rank = 0; rank < 3; ++rank) {
    v1::RankProgress* r = job.mutable_progress()->add_ranks();
    r->set_rank(rank);
    r->set_step(step);
    r->set_step_time_ms(rank == 2 ? slow_ms : 100);
  }
  return job;
}

TEST(WatchPrinterTest, PipeFlagsAStragglerOnceAndMarksEveryLine) {
  const CliConfig config = Config(false);
  std::ostringstream out;
  WatchPrinter printer(config, out, 1.5);
  const absl::Duration s = absl::Seconds(1);   // A line each.
  printer.OnJob(WithStepTimes(10, 120), kT0);  // 1.2x: none.
  printer.OnJob(WithStepTimes(20, 210), kT0 + s);
  printer.OnJob(WithStepTimes(30, 220), kT0 + 2 * s);  // Same set: no message.
  printer.OnJob(WithStepTimes(40, 110), kT0 + 3 * s);  // Caught up.
  EXPECT_EQ(out.str(),
            "RUNNING gen 1 world 3 epoch 1/1 [##------------------]  10.0% "
            "10/100 loss 0.5000\n"
            "straggler: rank 2 step time 210.0 ms is 2.10x the median 100.0 "
            "ms (factor 1.5)\n"
            "RUNNING gen 1 world 3 epoch 1/1 [####----------------]  20.0% "
            "20/100 loss 0.5000 ETA 8s STRAGGLER rank 2 (2.1x)\n"
            "RUNNING gen 1 world 3 epoch 1/1 [######--------------]  30.0% "
            "30/100 loss 0.5000 ETA 7s STRAGGLER rank 2 (2.2x)\n"
            "RUNNING gen 1 world 3 epoch 1/1 [########------------]  40.0% "
            "40/100 loss 0.5000 ETA 6s\n");
}

TEST(WatchPrinterTest, StragglerFactorIsHonoured) {
  const CliConfig config = Config(false);
  std::ostringstream out;
  WatchPrinter printer(config, out, 3.0);
  printer.OnJob(WithStepTimes(20, 210), kT0);
  EXPECT_EQ(out.str().find("STRAGGLER"), std::string::npos) << out.str();
  EXPECT_EQ(out.str().find("straggler:"), std::string::npos) << out.str();
}

TEST(WatchPrinterTest, TerminalKeepsTheMarkerWithinTheWidth) {
  CliConfig config = Config(true);
  config.terminal_width = 40;
  std::ostringstream out;
  WatchPrinter printer(config, out, 1.5);
  printer.OnJob(WithStepTimes(10, 100), kT0);
  printer.OnJob(WithStepTimes(20, 400), kT0);
  // The message replaces the open line's row, then the line is redrawn,
  // cut to 39 columns so that the marker still shows.
  EXPECT_EQ(out.str(),
            "\rRUNNING gen 1 world 3 epoch 1/1 [##----\x1b[K"
            "\r\x1b[Kstraggler: rank 2 step time 400.0 ms is 4.00x the "
            "median 100.0 ms (factor 1.5)\n"
            "\rRUNNING gen 1 w STRAGGLER rank 2 (4.0x)\x1b[K");
}

TEST(WatchPrinterTest, JsonCarriesTheStragglers) {
  const CliConfig config = Config(false, OutputFormat::kJson);
  std::ostringstream out;
  WatchPrinter printer(config, out, 1.5);
  printer.OnJob(WithStepTimes(10, 100), kT0);
  printer.OnJob(WithStepTimes(20, 300), kT0);
  std::istringstream lines(out.str());
  std::string first, second, extra;
  ASSERT_TRUE(std::getline(lines, first));
  ASSERT_TRUE(std::getline(lines, second));
  EXPECT_FALSE(std::getline(lines, extra));
  EXPECT_FALSE(nlohmann::json::parse(first).contains("stragglers"));
  const nlohmann::json doc = nlohmann::json::parse(second);
  EXPECT_EQ(doc["state"], "JOB_STATE_RUNNING");
  ASSERT_EQ(doc["stragglers"].size(), 1u);
  EXPECT_EQ(doc["stragglers"][0]["rank"], 2);
  EXPECT_DOUBLE_EQ(doc["stragglers"][0]["step_time_ms"].get<double>(), 300);
  EXPECT_DOUBLE_EQ(doc["stragglers"][0]["median_step_time_ms"].get<double>(),
                   100);
  EXPECT_DOUBLE_EQ(doc["stragglers"][0]["ratio"].get<double>(), 3);
}

TEST(WatchPrinterTest, NoStragglersOutsideRunning) {
  const CliConfig config = Config(false);
  std::ostringstream out;
  WatchPrinter printer(config, out, 1.5);
  v1::Job job = WithStepTimes(20, 400);
  job.set_state(v1::JOB_STATE_RESTARTING);
  printer.OnJob(job, kT0);
  EXPECT_EQ(out.str().find("STRAGGLER"), std::string::npos) << out.str();
}

TEST(WatchPrinterTest, WaitingLineOncePerChangeAndWhenItEnds) {
  const CliConfig config = Config(false);
  std::ostringstream out;
  WatchPrinter printer(config, out);
  auto stalled = [](int64_t waited_ms, v1::WorkerPhase phase) {
    v1::Job job = Snapshot(v1::JOB_STATE_RUNNING, 40);
    v1::WaitingFor& w = *job.mutable_waiting_for();
    w.set_waited_ms(waited_ms);
    w.set_wait_phase(v1::WORKER_PHASE_ALLREDUCE_WAIT);
    w.set_step(41);
    w.set_rank(1);
    w.set_host("h2");
    w.set_phase(phase);
    w.set_phase_ms(waited_ms + 100);
    return job;
  };
  printer.OnJob(stalled(1500, v1::WORKER_PHASE_DATA_LOADING), kT0);
  // Only its times grew: no new line.
  printer.OnJob(stalled(2500, v1::WORKER_PHASE_DATA_LOADING),
                kT0 + absl::Milliseconds(100));
  printer.OnJob(stalled(3000, v1::WORKER_PHASE_FORWARD),
                kT0 + absl::Milliseconds(200));
  printer.OnJob(Snapshot(v1::JOB_STATE_RUNNING, 41),
                kT0 + absl::Milliseconds(300));
  const std::string text = out.str();
  EXPECT_NE(text.find("waiting 1.5 s in all-reduce of step 41 for rank 1 "
                      "(host h2): data loading for 1.6 s\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("waiting 2.5 s"), std::string::npos) << text;
  EXPECT_NE(text.find("for rank 1 (host h2): forward for 3.1 s\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("the wait for rank 1 ended\n"), std::string::npos)
      << text;
}

}  // namespace
}  // namespace ringleader::cli
