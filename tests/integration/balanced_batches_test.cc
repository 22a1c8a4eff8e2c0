// DdpSpec.balance_batches with a real straggler: two workers, each pinned
// to a CPU of its own, one CPU shared with a busy loop (a noisy neighbour).
// The ranks measure their rates, agree on a split, and the worker on the
// free CPU takes the larger share of each global batch; every step still
// trains on the even split's samples (each sample of an epoch exactly once,
// 2 * batch_size a step), and the job ends SUCCEEDED.
#include <unistd.h>

#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/integration/cluster.h"
#include "tests/integration/worker_logs.h"
#include "tests/testing/job_specs.h"
#include "tests/testing/process.h"

namespace ringleader::testing {
namespace {

constexpr int kBatch = 32;
constexpr int kTrain = 4096;  // 64 steps of 2 x 32 an epoch.
constexpr int kEpochs = 2;

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
  // The neighbour: bounded by `timeout`, killed by its destructor.
  auto busy =
      Subprocess::Start({"/usr/bin/taskset", "-c", "1", "/usr/bin/timeout",
                         "300", "/bin/sh", "-c", "while :; do :; done"});
  ASSERT_TRUE(busy.ok()) << busy.status();
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
  (*busy)->Stop();
  const std::string log0 = ReadFileOrEmpty((*cluster)->dir() + "/worker0.log");
  const std::string log1 = ReadFileOrEmpty((*cluster)->dir() + "/worker1.log");
  ASSERT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED) << done->message() << "\n"
                                                    << log0.substr(0, 4000);
  EXPECT_NE((log0 + log1).find("balanced batches: ranks take"),
            std::string::npos)
      << "no split was agreed";

  // epoch -> step -> samples of both ranks; and each worker's total.
  std::map<int64_t, std::map<int64_t, std::vector<int64_t>>> steps;
  int64_t samples[2] = {0, 0};
  int w = 0;
  for (const std::string* log : {&log0, &log1}) {
    for (const SampleLine& line : ParseSampleLines(*log)) {
      EXPECT_EQ(line.generation, 1);
      auto& ids = steps[line.epoch][line.step];
      ids.insert(ids.end(), line.ids.begin(), line.ids.end());
      samples[w] += static_cast<int64_t>(line.ids.size());
    }
    ++w;
  }
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
  // What the split came to, for the test log.
  for (const std::string* log : {&log0, &log1}) {
    for (size_t at = log->find("balanced batches: ranks take");
         at != std::string::npos;
         at = log->find("balanced batches: ranks take", at + 1)) {
      std::cout << log->substr(at, log->find('\n', at) - at) << "\n";
    }
  }
  std::cout << "samples trained: free CPU " << samples[0]
            << ", beside the busy loop " << samples[1] << "\n";
  // The even split would give each kEpochs * kTrain / 2.
  EXPECT_GT(samples[0], samples[1] + 2 * kBatch)
      << "the worker on the free CPU took " << samples[0]
      << " samples, the one beside the busy loop " << samples[1];
}

}  // namespace
}  // namespace ringleader::testing
