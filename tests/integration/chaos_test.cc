// Issue 4 (5): chaos on real processes over loopback. The same Fashion-MNIST
// job (3 workers, min 2) runs once without faults, then with a worker killed
// mid-epoch, with the coordinator killed mid-epoch, and with a worker killed
// while the job is in rendezvous. A faulted run that keeps every rank's
// arithmetic finishes with the fault-free run's test accuracy exactly; the
// one that loses a rank mid-epoch within 2 points of it (a bound set from
// its measured spread: tests/README.md, "Bounds on trained results").
#include <signal.h>

#include <cmath>
#include <filesystem>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/integration/cluster.h"
#include "tests/testing/numeric_bounds.h"

namespace ringleader::testing {
namespace {

constexpr char kData[] = "/usr/share/datasets/fashion-mnist";
constexpr absl::Duration kJobTimeout = absl::Minutes(6);
// Mid-epoch 0: 60000 samples / 3 ranks / batch 64 is 313 steps an epoch.
constexpr int64_t kFaultStep = 150;
const std::vector<std::string> kWorkerFlags = {"--max_jobs=1",
                                               "--collective_timeout_s=30"};

bool HaveData() {
  return std::filesystem::exists(std::string(kData) +
                                 "/train-images-idx3-ubyte.gz");
}

absl::StatusOr<std::unique_ptr<Cluster>> NewCluster(const std::string& name) {
  return Cluster::Start(name, {"--lease_ms=1000", "--heartbeat_ms=200"});
}

v1::JobSpec Spec(Cluster& cluster, int32_t min_workers = 2) {
  v1::JobSpec s;
  s.set_name("chaos");
  s.mutable_model()->set_arch(v1::MODEL_ARCH_MLP);
  s.mutable_dataset()->set_format(v1::DATASET_FORMAT_IDX);
  s.mutable_dataset()->set_path(kData);
  s.mutable_dataset()->set_shuffle(true);
  s.mutable_optimizer()->set_kind(v1::OPTIMIZER_KIND_SGD);
  s.mutable_optimizer()->set_learning_rate(0.05);
  s.mutable_optimizer()->set_momentum(0.9);
  s.set_epochs(2);
  s.set_batch_size(64);
  s.set_min_workers(min_workers);
  s.set_max_workers(3);
  s.set_max_restarts(3);
  // Long enough for all three workers to be in the first generation on a
  // loaded machine (it forms at once when the third joins).
  s.set_rendezvous_last_call_ms(3000);
  s.set_seed(TrainingSeed(7));
  s.set_progress_every_steps(10);
  s.set_checkpoint_every_steps(100);
  s.set_checkpoint_dir(cluster.dir() + "/ckpt");
  std::filesystem::create_directories(s.checkpoint_dir());
  return s;
}

std::string Logs(Cluster& cluster) {
  std::string out = ReadFileOrEmpty(cluster.dir() + "/coordinator.log");
  for (size_t i = 0; i < cluster.workers().size(); ++i) {
    out += ReadFileOrEmpty(absl::StrCat(cluster.dir(), "/worker", i, ".log"));
  }
  return out.size() > 20000 ? out.substr(out.size() - 20000) : out;
}

bool Running(const v1::Job& j, int32_t world, int64_t step) {
  return j.state() == v1::JOB_STATE_RUNNING && j.world_size() == world &&
         j.progress().step() >= step;
}

class ChaosTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveData()) {
      GTEST_SKIP() << "skipped: " << kData
                   << " missing (apt-get install dataset-fashion-mnist)";
    }
  }

  // The fault-free run's test accuracy, computed once for all tests.
  static double Baseline() {
    static double accuracy = [] {
      auto cluster = NewCluster("chaos-baseline");
      EXPECT_TRUE(cluster.ok()) << cluster.status();
      if (!cluster.ok()) return -1.0;
      auto job = (*cluster)->Submit(Spec(**cluster));
      EXPECT_TRUE(job.ok()) << job.status();
      for (int i = 0; i < 3; ++i)
        (*cluster)->StartWorker(kWorkerFlags).IgnoreError();
      auto done = (*cluster)->WaitForEnd(*job, kJobTimeout);
      EXPECT_TRUE(done.ok() && done->state() == v1::JOB_STATE_SUCCEEDED)
          << done.status() << Logs(**cluster);
      if (!done.ok()) return -1.0;
      std::cout << "fault-free accuracy " << done->progress().test_accuracy()
                << "\n";
      ReportNumeric("chaos.fault_free_accuracy",
                    done->progress().test_accuracy());
      return done->progress().test_accuracy();
    }();
    return accuracy;
  }

  // The fault's run ends within `tolerance` of the fault-free run's test
  // accuracy (tests/README.md, "Bounds on trained results": 0 where the
  // fault changes no rank's arithmetic).
  void ExpectCloseToBaseline(const v1::Job& done, Cluster& cluster,
                             double tolerance) {
    ASSERT_EQ(done.state(), v1::JOB_STATE_SUCCEEDED) << done.message() << "\n"
                                                     << Logs(cluster);
    const double baseline = Baseline();
    ASSERT_GT(baseline, 0.8);
    std::cout << "accuracy " << done.progress().test_accuracy()
              << " vs fault-free " << baseline << ", restarts "
              << done.restarts() << ", final world " << done.world_size()
              << "\n";
    ReportNumeric(
        absl::StrCat(
            "chaos.",
            ::testing::UnitTest::GetInstance()->current_test_info()->name(),
            ".accuracy_minus_fault_free"),
        done.progress().test_accuracy() - baseline);
    EXPECT_LE(std::abs(done.progress().test_accuracy() - baseline), tolerance);
    // The last committed checkpoint is intact.
    EXPECT_TRUE(std::filesystem::exists(done.last_checkpoint().path()));
  }

  // A fresh cluster, the job submitted, three workers started; returns once
  // the job trains mid-epoch 0 with all three (`mid`: that snapshot).
  void TrainUntilFaultStep(const std::string& name,
                           std::unique_ptr<Cluster>& cluster, std::string& job,
                           v1::Job& mid) {
    Baseline();
    auto started = NewCluster(name);
    ASSERT_TRUE(started.ok()) << started.status();
    cluster = *std::move(started);
    auto submitted = cluster->Submit(Spec(*cluster));
    ASSERT_TRUE(submitted.ok()) << submitted.status();
    job = *submitted;
    for (int i = 0; i < 3; ++i) {
      ASSERT_TRUE(cluster->StartWorker(kWorkerFlags).ok());
    }
    auto snapshot = cluster->WaitUntil(
        job, [](const v1::Job& j) { return Running(j, 3, kFaultStep); },
        kJobTimeout);
    ASSERT_TRUE(snapshot.ok() && Running(*snapshot, 3, kFaultStep))
        << snapshot.status() << Logs(*cluster);
    mid = *snapshot;
  }
};

TEST_F(ChaosTest, WorkerKilledMidEpoch) {
  std::unique_ptr<Cluster> cluster;
  std::string job;
  v1::Job mid;
  ASSERT_NO_FATAL_FAILURE(
      TrainUntilFaultStep("chaos-worker", cluster, job, mid));
  cluster->workers()[1]->Kill(SIGKILL);
  auto done = cluster->WaitForEnd(job, kJobTimeout);
  ASSERT_TRUE(done.ok()) << done.status() << Logs(*cluster);
  // World 3 becomes 2 mid-epoch: another trajectory, as another seed's.
  // |difference| measured up to 0.0079 over OpenBLAS's kernel families and
  // seeds here, 0.0111 on an Intel Xeon, 0.0089 over the bench's 40 kills:
  // the bound is 1.8 times the largest (tests/README.md).
  ExpectCloseToBaseline(*done, *cluster, 0.02);
  EXPECT_EQ(done->restarts(), 1);
  EXPECT_EQ(done->world_size(), 2);
}

TEST_F(ChaosTest, CoordinatorKilledMidEpoch) {
  std::unique_ptr<Cluster> cluster;
  std::string job;
  v1::Job mid;
  ASSERT_NO_FATAL_FAILURE(
      TrainUntilFaultStep("chaos-coordinator", cluster, job, mid));
  cluster->StopCoordinator(SIGKILL);
  // Workers reach it again at the same address.
  ASSERT_TRUE(cluster->StartCoordinator(/*same_port=*/true).ok());
  auto done = cluster->WaitForEnd(job, kJobTimeout);
  ASSERT_TRUE(done.ok()) << done.status() << Logs(*cluster);
  // Every rank's arithmetic is the fault-free run's: the coordinator is not
  // on the training path and the world stays 3 (no restart).
  ExpectCloseToBaseline(*done, *cluster, 0);
  // The restarted coordinator adopted the running generation: nothing was
  // retrained.
  EXPECT_EQ(done->restarts(), 0) << done->message() << Logs(*cluster);
  EXPECT_EQ(done->generation(), mid.generation());
  EXPECT_EQ(done->world_size(), 3);
}

TEST_F(ChaosTest, WorkerKilledDuringRendezvous) {
  Baseline();
  auto cluster = NewCluster("chaos-rendezvous");
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  // All three are needed: two workers wait in the rendezvous for a third.
  auto job = (*cluster)->Submit(Spec(**cluster, /*min_workers=*/3));
  ASSERT_TRUE(job.ok()) << job.status();
  for (int i = 0; i < 2; ++i)
    ASSERT_TRUE((*cluster)->StartWorker(kWorkerFlags).ok());
  auto waiting = (*cluster)->WaitUntil(
      *job,
      [](const v1::Job& j) { return j.state() == v1::JOB_STATE_RENDEZVOUS; },
      kJobTimeout);
  ASSERT_TRUE(waiting.ok() && waiting->state() == v1::JOB_STATE_RENDEZVOUS)
      << waiting.status() << Logs(**cluster);
  (*cluster)->workers()[0]->Kill(SIGKILL);
  // Replacements arrive at once, before or after the lease notices the dead
  // waiter: either way the job forms with live workers only and finishes.
  for (int i = 0; i < 2; ++i)
    ASSERT_TRUE((*cluster)->StartWorker(kWorkerFlags).ok());
  auto done = (*cluster)->WaitForEnd(*job, kJobTimeout);
  ASSERT_TRUE(done.ok()) << done.status() << Logs(**cluster);
  // The only generation that trains is world 3 from step 0, as the
  // fault-free run's.
  ExpectCloseToBaseline(*done, **cluster, 0);
  EXPECT_LE(done->restarts(), 1) << done->message();
  EXPECT_EQ(done->world_size(), 3);
}

}  // namespace
}  // namespace ringleader::testing
