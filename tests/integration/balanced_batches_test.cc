// DdpSpec.balance_batches with a real straggler: two workers, each pinned
// to a CPU of its own, one CPU shared with busy loops (noisy neighbours).
// The ranks measure their rates, agree on a split, and the worker on the
// free CPU takes the larger share of each global batch; every step still
// trains on the even split's samples (each sample of an epoch exactly once,
// 2 * batch_size a step), and the job ends SUCCEEDED. And a rank killed
// while the ranks share each batch unevenly loses no sample.
#include <signal.h>
#include <unistd.h>

#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/integration/cluster.h"
#include "tests/integration/worker_logs.h"
#include "tests/testing/eventually.h"
#include "tests/testing/job_specs.h"
#include "tests/testing/process.h"

namespace ringleader::testing {
namespace {

constexpr int kBatch = 32;
constexpr int kTrain = 4096;  // 64 steps of 2 x 32 an epoch.
constexpr int kEpochs = 2;

// epoch -> step -> the samples both ranks trained on: kEpochs epochs, each
// step 2 * kBatch samples whatever the split, every sample once an epoch.
void ExpectEachStepOnTheEvenSplitsSamples(
    const std::map<int64_t, std::map<int64_t, std::vector<int64_t>>>& steps) {
  ASSERT_EQ(steps.size(), static_cast<size_t>(kEpochs));
  for (const auto& [epoch, by_step] : steps) {
    SCOPED_TRACE(absl::StrCat("epoch ", epoch));
    EXPECT_EQ(by_step.size(), static_cast<size_t>(kTrain / (2 * kBatch)));
    std::multiset<int64_t> seen;
    for (const auto& [step, ids] : by_step) {
      EXPECT_EQ(ids.size(), static_cast<size_t>(2 * kBatch)) << "step " << step;
      seen.insert(ids.begin(), ids.end());
    }
    EXPECT_EQ(seen.size(), static_cast<size_t>(kTrain));
    EXPECT_EQ(std::set<int64_t>(seen.begin(), seen.end()).size(),
              static_cast<size_t>(kTrain))
        << "a sample trained twice in one epoch";
  }
}

TEST(BalancedBatchesTest, TheRankBesideABusyLoopTakesLessOfEachBatch) {
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
    GTEST_SKIP() << "needs 2 CPUs: one free, one shared with a busy loop";
  }
  // Workers log every batch's sample ids (VLOG 1); set before any thread.
  ASSERT_EQ(setenv("GLOG_v", "1", 1), 0);
  auto cluster = Cluster::Start("balanced");
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  v1::JobSpec spec = MinimalJobSpec("balanced", 2, 2);
  spec.mutable_dataset()->set_synthetic_train_size(kTrain);
  spec.mutable_dataset()->set_shuffle(true);
  spec.set_batch_size(kBatch);
  spec.set_epochs(kEpochs);
  spec.mutable_ddp()->set_balance_batches(true);
  auto job = (*cluster)->Submit(spec);
  ASSERT_TRUE(job.ok()) << job.status();
  // The neighbours: three busy loops, bounded by `timeout`, killed by their
  // destructors. Three, because the scheduler shares a CPU per thread and the
  // worker brings several: one loop took a quarter to a half of the CPU, and
  // the vCPUs of this VM run up to a third apart on their own, which once
  // made the worker beside it the faster.
  std::vector<std::unique_ptr<Subprocess>> busy;
  for (int i = 0; i < 3; ++i) {
    auto loop =
        Subprocess::Start({"/usr/bin/taskset", "-c", "1", "/usr/bin/timeout",
                           "300", "/bin/sh", "-c", "while :; do :; done"});
    ASSERT_TRUE(loop.ok()) << loop.status();
    busy.push_back(*std::move(loop));
  }
  ASSERT_TRUE(
      (*cluster)
          ->StartWorker({"--max_jobs=1"}, {"/usr/bin/taskset", "-c", "0"})
          .ok());
  ASSERT_TRUE(
      (*cluster)
          ->StartWorker({"--max_jobs=1"}, {"/usr/bin/taskset", "-c", "1"})
          .ok());
  auto done = (*cluster)->WaitForEnd(*job, absl::Minutes(4));
  ASSERT_TRUE(done.ok()) << done.status();
  for (auto& loop : busy) loop->Stop();
  const std::vector<std::string> logs = (*cluster)->WorkerLogs();
  ASSERT_EQ(logs.size(), 2u);
  ASSERT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED) << done->message() << "\n"
                                                    << logs[0].substr(0, 4000);
  EXPECT_NE((logs[0] + logs[1]).find("balanced batches: ranks take"),
            std::string::npos)
      << "no split was agreed";

  // epoch -> step -> samples of both ranks; and each worker's total.
  std::map<int64_t, std::map<int64_t, std::vector<int64_t>>> steps;
  int64_t samples[2] = {0, 0};
  int w = 0;
  for (const std::string& log : logs) {
    for (const SampleLine& line : ParseSampleLines(log)) {
      EXPECT_EQ(line.generation, 1);
      auto& ids = steps[line.epoch][line.step];
      ids.insert(ids.end(), line.ids.begin(), line.ids.end());
      samples[w] += static_cast<int64_t>(line.ids.size());
    }
    ++w;
  }
  ExpectEachStepOnTheEvenSplitsSamples(steps);
  // What the split came to, for the test log.
  for (const std::string& log : logs) {
    for (size_t at = log.find("balanced batches: ranks take");
         at != std::string::npos;
         at = log.find("balanced batches: ranks take", at + 1)) {
      std::cout << log.substr(at, log.find('\n', at) - at) << "\n";
    }
  }
  std::cout << "samples trained: free CPU " << samples[0]
            << ", beside the busy loop " << samples[1] << "\n";
  // The even split would give each kEpochs * kTrain / 2.
  EXPECT_GT(samples[0], samples[1] + 2 * kBatch)
      << "the worker on the free CPU took " << samples[0]
      << " samples, the one beside the busy loop " << samples[1];
}

// Whether a worker has logged the first split agreed; if so, the batch it
// applies from, in `from_batch`.
bool FirstSplitFrom(const Cluster& cluster, int64_t* from_batch) {
  for (const std::string& log : cluster.WorkerLogs()) {
    const size_t at = log.find("balanced batches: ranks take");
    const size_t from = log.find(" from batch ", at);
    if (at == std::string::npos || from == std::string::npos) continue;
    return absl::SimpleAtoi(
        log.substr(from + 12, log.find(' ', from + 12) - from - 12),
        from_batch);
  }
  return false;
}

// Three ranks on two CPUs (two of them sharing one) agree on an uneven split;
// one of the two is then killed. No checkpoint directory: the survivors
// recover from their own memory at the step they kept (which counts global
// batches, whatever the split), start the next generation from the even
// split, and every sample of every epoch goes into the model once, with one
// state on both survivors at the end.
TEST(BalancedBatchesTest, ARankKilledWhileTheSplitIsUnevenLosesNoSample) {
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
    GTEST_SKIP() << "needs 2 CPUs: one rank alone on one, two on the other";
  }
  ASSERT_EQ(setenv("GLOG_v", "1", 1), 0);
  auto cluster = Cluster::Start("balanced-kill",
                                {"--lease_ms=1000", "--heartbeat_ms=200"});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  constexpr int64_t kKillTrain = 9600;  // Whole steps of 32 at world 3 and 2.
  v1::JobSpec spec = FailureJobSpec("balanced-kill", "");
  spec.mutable_dataset()->set_synthetic_train_size(kKillTrain);
  spec.set_checkpoint_every_steps(0);
  spec.set_epochs(4);  // 400 steps at world 3: room to strike mid-job.
  spec.mutable_ddp()->set_balance_batches(true);
  auto job = (*cluster)->Submit(spec);
  ASSERT_TRUE(job.ok()) << job.status();
  const std::vector<std::string> flags = {"--max_jobs=1",
                                          "--collective_timeout_s=30"};
  for (const char* cpu : {"0", "1", "1"}) {
    ASSERT_TRUE(
        (*cluster)->StartWorker(flags, {"/usr/bin/taskset", "-c", cpu}).ok());
  }
  auto running = (*cluster)->WaitUntil(
      *job, [](const v1::Job& j) { return RunningAt(j, 3, 20); },
      absl::Minutes(3));
  ASSERT_TRUE(running.ok()) << running.status();
  ASSERT_EQ(running->world_size(), 3) << running->message();
  int64_t from_batch = -1;
  ASSERT_TRUE(Eventually([&] {
    return FirstSplitFrom(**cluster, &from_batch);
  })) << "no split was agreed";
  // Ten steps into the uneven split (epoch 0: batch = step).
  running = (*cluster)->WaitUntil(
      *job, [&](const v1::Job& j) { return RunningAt(j, 3, from_batch + 10); },
      absl::Minutes(3));
  ASSERT_TRUE(running.ok()) << running.status();
  ASSERT_EQ(running->world_size(), 3) << running->message();
  (*cluster)->workers()[2]->Kill(SIGKILL);
  auto done = (*cluster)->WaitForEnd(*job, absl::Minutes(5));
  ASSERT_TRUE(done.ok()) << done.status();
  const std::vector<std::string> logs = (*cluster)->WorkerLogs();
  ASSERT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED) << done->message() << "\n"
                                                    << logs[0].substr(0, 4000);
  EXPECT_EQ(done->restarts(), 1) << "the kill came after the job's end";
  EXPECT_EQ(done->world_size(), 2);

  for (int w = 0; w < 2; ++w) {
    SCOPED_TRACE(w);
    const std::vector<ResumeLine> r = ParseResumeLines(logs[w]);
    ASSERT_EQ(r.size(), 1u) << logs[w].substr(0, 4000);
    EXPECT_TRUE(r[0].from_memory);
  }
  std::vector<std::string> end;
  for (int w = 0; w < 2; ++w) {
    for (const DigestLine& d : ParseDigestLines(logs[w])) {
      if (d.when == "end") end.push_back(d.digest);
    }
  }
  ASSERT_EQ(end.size(), 2u);
  EXPECT_EQ(end[0], end[1]) << "the survivors ended in different states";
  const AppliedSamples applied = CountAppliedSamples(logs);
  // Every sample of the 4 epochs once; at most the step in flight redone.
  EXPECT_EQ(ExactlyOnceViolations(
                applied, {.epochs = 4, .samples = kKillTrain, .max_redone = 3}),
            "");
  EXPECT_EQ(done->progress().step(), done->progress().total_steps());
  std::cout << "killed a rank at step >= " << running->progress().step()
            << " with the split uneven from batch " << from_batch
            << "; resumed from memory at step "
            << ParseResumeLines(logs[0])[0].step << "; "
            << applied.redone_batches << " batches redone\n";
}

}  // namespace
}  // namespace ringleader::testing
