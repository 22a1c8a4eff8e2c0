// `ringctl logs`: every rank's lines, collected through a real coordinator
// from real workers, in time order with their rank, generation and host;
// what a TorchScript model prints among them; a failed job's lines kept
// with it and a deleted job's gone; the lines after a coordinator restart;
// --rank, --tail, --output=json and --follow.
#include <torch/script.h>
#include <torch/torch.h>

#include <csignal>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/integration/cluster.h"
#include "tests/testing/eventually.h"

namespace ringleader::testing {
namespace {

using ::testing::HasSubstr;

// A TorchScript linear model on the synthetic dataset's 1x28x28 images and
// 10 classes whose forward prints the batch size: what the model prints
// reaches the log.
std::string PrintingModel(const std::string& dir) {
  torch::jit::Module m("printing");
  m.register_attribute("training", c10::BoolType::get(), true);
  m.register_parameter(
      "weight", (torch::randn({10, 784}) * 0.01).requires_grad_(), false);
  m.define(
      "def forward(self, x):\n"
      "    print(\"forward of a batch of\", x.size(0))\n"
      "    return torch.matmul(torch.flatten(x, 1), self.weight.t())\n");
  const std::string path = dir + "/printing.pt";
  m.save(path);
  return path;
}

v1::JobSpec Spec(const std::string& name, const std::string& model,
                 int64_t train_size) {
  v1::JobSpec s;
  s.set_name(name);
  s.mutable_model()->set_arch(v1::MODEL_ARCH_TORCHSCRIPT);
  s.mutable_model()->set_torchscript_path(model);
  s.mutable_dataset()->set_format(v1::DATASET_FORMAT_SYNTHETIC);
  s.mutable_dataset()->set_synthetic_train_size(train_size);
  s.mutable_dataset()->set_synthetic_test_size(16);
  s.mutable_optimizer()->set_kind(v1::OPTIMIZER_KIND_SGD);
  s.mutable_optimizer()->set_learning_rate(0.01);
  s.set_epochs(1);
  s.set_batch_size(8);
  s.set_min_workers(2);
  s.set_max_workers(2);
  s.set_seed(3);
  return s;
}

struct Ringctl {
  int exit_code = -1;
  std::vector<std::string> lines;
  std::string err;
};

Ringctl RunRingctl(const Cluster& cluster, std::vector<std::string> args) {
  std::vector<std::string> argv = {RunfilePath("cli/ringctl"),
                                   "--coordinator=" + cluster.target()};
  argv.insert(argv.end(), args.begin(), args.end());
  absl::StatusOr<ProcessResult> r = RunProcess(argv, absl::Minutes(1));
  EXPECT_TRUE(r.ok()) << r.status();
  Ringctl out;
  if (!r.ok()) return out;
  out.exit_code = r->exit_code;
  out.err = r->err;
  for (absl::string_view line : absl::StrSplit(r->out, '\n', absl::SkipEmpty()))
    out.lines.emplace_back(line);
  return out;
}

int CountContaining(const std::vector<std::string>& lines,
                    const std::string& needle) {
  int n = 0;
  for (const std::string& line : lines) n += absl::StrContains(line, needle);
  return n;
}

// A worker's log without the model's prints, for a failure's message.
std::string WithoutPrints(const std::string& log) {
  std::vector<std::string> kept;
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    if (!absl::StrContains(line, "model printed")) kept.emplace_back(line);
  }
  return absl::StrJoin(kept, "\n");
}

// The lines, waited for until `needle` is on `count` of them: a rank's
// last lines reach the coordinator a moment after the job's final state.
std::vector<std::string> LogsWith(const Cluster& cluster,
                                  const std::string& job,
                                  const std::string& needle, int count) {
  std::vector<std::string> lines;
  Eventually([&] {
    lines = RunRingctl(cluster, {"logs", job}).lines;
    return CountContaining(lines, needle) >= count;
  });
  return lines;
}

TEST(JobLogsTest, EveryRanksLinesAndPrintsInTimeOrderWithTheirPrefixes) {
  auto cluster = Cluster::Start("logs-two-ranks");
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Cluster& c = **cluster;
  const std::string model = PrintingModel(FreshDir("printing-model"));
  absl::StatusOr<std::string> job = c.Submit(Spec("logs", model, 64));
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_TRUE(c.StartWorkers(2, {}).ok());
  absl::StatusOr<v1::Job> done = c.WaitForEnd(*job, absl::Minutes(3));
  ASSERT_TRUE(done.ok()) << done.status();
  ASSERT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED) << done->message();

  // 64 samples, 2 ranks, batches of 8: 4 training forwards per rank.
  const std::vector<std::string> lines =
      LogsWith(c, *job, "model printed: forward of a batch of 8", 8);
  EXPECT_GE(CountContaining(lines, "[rank 0 gen 1 "), 4);
  EXPECT_GE(CountContaining(lines, "[rank 1 gen 1 "), 4);
  EXPECT_GE(CountContaining(lines, "model printed: forward of a batch of 8"), 8)
      << absl::StrJoin(lines, "\n");
  // Before a rank: the worker's lines from the assignment to its rank.
  EXPECT_GE(CountContaining(lines, "[no rank "), 2);
  EXPECT_GE(CountContaining(lines, "assigned job " + *job), 2);

  const Ringctl rank1 = RunRingctl(c, {"logs", *job, "--rank=1"});
  EXPECT_EQ(rank1.exit_code, 0) << rank1.err;
  EXPECT_EQ(CountContaining(rank1.lines, "[rank 0 "), 0);
  EXPECT_EQ(CountContaining(rank1.lines, "[rank 1 "),
            static_cast<int>(rank1.lines.size()));

  const Ringctl tail = RunRingctl(c, {"logs", *job, "--tail=3"});
  EXPECT_EQ(tail.lines.size(), 3u);

  // JSON, one object per line, in time order.
  const Ringctl json = RunRingctl(c, {"--output=json", "logs", *job});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  ASSERT_GE(json.lines.size(), lines.size());
  int64_t last = 0;
  for (const std::string& line : json.lines) {
    const nlohmann::json j = nlohmann::json::parse(line);
    const int64_t t = std::stoll(j.value("timeMs", std::string("0")));
    EXPECT_GE(t, last) << line;
    last = t;
    EXPECT_FALSE(j.value("host", std::string()).empty()) << line;
  }
}

TEST(JobLogsTest, AFailedJobKeepsItsLinesUntilItIsDeleted) {
  auto cluster = Cluster::Start("logs-failed");
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Cluster& c = **cluster;
  v1::JobSpec spec = Spec("failing", "/no/such/model.pt", 64);
  absl::StatusOr<std::string> job = c.Submit(spec);
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_TRUE(c.StartWorkers(2, {}).ok());
  absl::StatusOr<v1::Job> done = c.WaitForEnd(*job, absl::Minutes(3));
  ASSERT_TRUE(done.ok()) << done.status();
  ASSERT_EQ(done->state(), v1::JOB_STATE_FAILED);

  // Each worker's last line is its error ("job <id>: ..."), and the one
  // that failed says why.
  const std::vector<std::string> lines =
      LogsWith(c, *job, "job " + *job + ": ", 2);
  EXPECT_GE(CountContaining(lines, "/no/such/model.pt"), 1)
      << absl::StrJoin(lines, "\n");
  EXPECT_GE(CountContaining(lines, "] E"), 1) << absl::StrJoin(lines, "\n");

  EXPECT_EQ(RunRingctl(c, {"delete", *job}).exit_code, 0);
  const Ringctl gone = RunRingctl(c, {"logs", *job});
  EXPECT_NE(gone.exit_code, 0);
  EXPECT_THAT(gone.err, HasSubstr("does not exist"));
}

TEST(JobLogsTest, FollowPrintsAsTheJobRunsAcrossACoordinatorRestart) {
  auto cluster = Cluster::Start("logs-follow");
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Cluster& c = **cluster;
  const std::string model = PrintingModel(FreshDir("follow-model"));
  // Long enough to go on after the restart: 8,192 steps a rank of one
  // sample each (1,000 steps take about a second here at -O0).
  v1::JobSpec spec = Spec("followed", model, 16384);
  spec.set_batch_size(1);
  absl::StatusOr<std::string> job = c.Submit(spec);
  ASSERT_TRUE(job.ok()) << job.status();
  const std::string out = FreshDir("follow") + "/follow.txt";
  ProcessOptions options;
  options.stdout_path = out;
  auto follow = Subprocess::Start(
      {RunfilePath("cli/ringctl"), "--coordinator=" + c.target(), "logs", *job,
       "--follow"},
      options);
  ASSERT_TRUE(follow.ok()) << follow.status();
  ASSERT_TRUE(c.StartWorkers(2, {}).ok());
  ASSERT_TRUE(WaitForFileContaining(out, "model printed", absl::Minutes(2),
                                    follow->get())
                  .ok())
      << ReadFileOrEmpty(out);

  // The coordinator restarts on its port: the follower carries on with the
  // lines sent after it (the workers' queues kept what it missed).
  c.StopCoordinator(SIGKILL);
  ASSERT_TRUE(c.StartCoordinator(/*same_port=*/true).ok());
  absl::StatusOr<v1::Job> done = c.WaitForEnd(*job, absl::Minutes(4));
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED) << done->message();
  // The follower ends by itself once the job did.
  const std::optional<int> code = (*follow)->Wait(absl::Seconds(60));
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 0);
  const std::vector<std::string> after_restart =
      LogsWith(c, *job, "model printed", 1);
  EXPECT_GT(CountContaining(after_restart, "model printed"), 0)
      << absl::StrJoin(after_restart, "\n") << "\nworker 0, but its prints:\n"
      << WithoutPrints(ReadFileOrEmpty(c.log_dir() + "/worker0.log"));
  // Every line the model printed that the restarted coordinator holds was
  // printed by the follower too.
  const std::string followed = ReadFileOrEmpty(out);
  for (const std::string& line : after_restart) {
    if (absl::StrContains(line, "model printed")) {
      EXPECT_THAT(followed, HasSubstr(line));
    }
  }
}

}  // namespace
}  // namespace ringleader::testing
