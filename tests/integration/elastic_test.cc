// Issue 4, item 2 (elastic policy), with real coordinator and worker
// processes on 127.0.0.1:
// (1) a job of 2..3 workers that keep no state in memory
//     (--recover_from_peers=false) starts on two; a third started mid-job
//     joins at the next committed checkpoint (workers that keep their state
//     take it at once: memory_recovery_test): the job finishes SUCCEEDED in a
//     generation of 3 with no restart spent (max_restarts is 0, so a
//     scale-up counted anywhere, coordinator or worker daemon, would fail
//     it), every sample of each epoch trained once (from the sample ids the
//     workers log), and test accuracy within a point of the same job run
//     without the newcomer;
// (2) a job with fewer than min_workers fails after its rendezvous timeout
//     with a message that says so, and its worker is let go.
#include <stdlib.h>

#include <filesystem>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/integration/cluster.h"
#include "tests/integration/worker_logs.h"
#include "tests/testing/numeric_bounds.h"

namespace ringleader::testing {
namespace {

constexpr int kTrain = 9600;  // A multiple of 2 x 16 and 3 x 16.
constexpr int kBatch = 16;
// Every 30 steps of 2 x 16 samples leaves a multiple of 3 x 16 in the
// epoch: resumed at world 3 from any commit, no rank pads its shard.
constexpr int kEvery = 30;
// Long enough that the job is still training when the third worker's
// process has started and registered (about a second): over shared memory
// the 2-rank steps of this small model take well under a millisecond.
constexpr int kEpochs = 12;

v1::JobSpec Spec(const std::string& name, const std::string& dir) {
  v1::JobSpec s;
  s.set_name(name);
  s.mutable_model()->set_arch(v1::MODEL_ARCH_MLP);
  s.mutable_model()->add_hidden_sizes(48);
  s.mutable_model()->add_hidden_sizes(24);
  s.mutable_dataset()->set_format(v1::DATASET_FORMAT_SYNTHETIC);
  s.mutable_dataset()->set_synthetic_train_size(kTrain);
  s.mutable_dataset()->set_synthetic_test_size(2000);
  s.mutable_dataset()->set_shuffle(true);
  s.mutable_optimizer()->set_kind(v1::OPTIMIZER_KIND_SGD);
  s.mutable_optimizer()->set_learning_rate(0.05);
  s.mutable_optimizer()->set_momentum(0.9);
  s.set_epochs(kEpochs);
  s.set_batch_size(kBatch);
  s.set_min_workers(2);
  s.set_max_workers(3);
  s.set_seed(TrainingSeed(5));
  s.set_checkpoint_dir(dir);
  s.set_checkpoint_every_steps(kEvery);
  s.set_max_restarts(0);
  s.set_rendezvous_last_call_ms(300);
  s.set_rendezvous_timeout_ms(60000);
  return s;
}

bool Final(v1::JobState s) {
  return s == v1::JOB_STATE_SUCCEEDED || s == v1::JOB_STATE_FAILED ||
         s == v1::JOB_STATE_CANCELLED;
}

TEST(ElasticTest, ANewWorkerJoinsAtTheNextCheckpointWithoutARestart) {
  // Workers log every batch's sample ids (VLOG 1); set before any thread.
  ASSERT_EQ(setenv("GLOG_v", "1", 1), 0);
  auto cluster =
      Cluster::Start("scale-up", {"--lease_ms=1000", "--heartbeat_ms=200"});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const v1::JobSpec spec = Spec("grow", FreshDir("scale-up-ckpt"));
  auto job = (*cluster)->Submit(spec);
  ASSERT_TRUE(job.ok()) << job.status();
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(
        (*cluster)
            ->StartWorker({"--max_jobs=1", "--recover_from_peers=false"})
            .ok());
  }

  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::minutes(3));
  v1::WatchJobRequest req;
  req.set_job_id(*job);
  auto stream = (*cluster)->users().WatchJob(&ctx, req);
  v1::Job snap, last;
  absl::Time started{}, resized{}, grown{};
  int64_t started_at_step = -1;
  std::set<int64_t> world_sizes;
  int64_t overshoots = 0;  // Snapshots whose step passed the planned total.
  std::string overshoot;
  for (int n = 0; n < 1000000 && stream->Read(&snap); ++n) {
    last = snap;
    // `ringctl watch` shows step/total_steps: across the resize the total is
    // replanned at the new world size and must never fall below the step.
    if (snap.progress().total_steps() > 0 &&
        snap.progress().step() > snap.progress().total_steps()) {
      if (overshoots++ == 0) {
        overshoot = absl::StrCat(snap.progress().step(), "/",
                                 snap.progress().total_steps(), " at world ",
                                 snap.world_size());
      }
    }
    if (snap.state() == v1::JOB_STATE_RUNNING) {
      world_sizes.insert(snap.world_size());
    }
    // After the first commit, while epoch 0 has far to go.
    if (started_at_step < 0 && snap.state() == v1::JOB_STATE_RUNNING &&
        snap.world_size() == 2 && snap.last_checkpoint().step() >= kEvery) {
      ASSERT_TRUE(
          (*cluster)
              ->StartWorker({"--max_jobs=1", "--recover_from_peers=false"})
              .ok());
      started = absl::Now();
      started_at_step = snap.progress().step();
    }
    if (started_at_step >= 0 && resized == absl::Time() &&
        snap.state() == v1::JOB_STATE_RESTARTING) {
      resized = absl::Now();
    }
    if (started_at_step >= 0 && grown == absl::Time() &&
        snap.state() == v1::JOB_STATE_RUNNING && snap.world_size() == 3) {
      grown = absl::Now();
    }
    if (Final(snap.state())) break;
  }
  ctx.TryCancel();
  const std::string log2 = ReadFileOrEmpty((*cluster)->dir() + "/worker2.log");
  ASSERT_GE(started_at_step, 0) << "never ran on 2: " << last.message();
  ASSERT_EQ(last.state(), v1::JOB_STATE_SUCCEEDED)
      << last.message() << "\n"
      << ReadFileOrEmpty((*cluster)->dir() + "/worker0.log").substr(0, 4000);
  EXPECT_EQ(last.restarts(), 0);
  EXPECT_EQ(last.world_size(), 3);
  EXPECT_EQ(last.generation(), 2);  // One resize, nothing else.
  EXPECT_EQ(world_sizes, (std::set<int64_t>{2, 3}));
  EXPECT_EQ(overshoots, 0) << "first: " << overshoot;
  // The plan made at world 3 is exactly the steps the job ended with.
  EXPECT_EQ(last.progress().step(), last.progress().total_steps());
  EXPECT_GT(last.progress().total_steps(), 0);
  ASSERT_NE(grown, absl::Time());
  ASSERT_NE(resized, absl::Time());
  // The newcomer waits at most for the next commit (30 steps) and the
  // members' rejoin; generous for a loaded 2-core machine.
  EXPECT_LT(grown - started, absl::Seconds(30));
  EXPECT_LT(grown - resized, absl::Seconds(5));
  std::cout << "newcomer started at step " << started_at_step
            << "; bigger generation formed "
            << absl::FormatDuration(grown - started) << " after its start, "
            << absl::FormatDuration(grown - resized)
            << " after the old one ended at a checkpoint\n";

  // The newcomer, and only it, reports how long it took from its assignment
  // to its first step (rendezvous at the next commit and the state
  // transfer from a live peer included).
  int64_t join_ms = 0, joined = 0;
  for (const v1::RankProgress& r : last.progress().ranks()) {
    if (r.join_to_first_step_ms() > 0) {
      ++joined;
      join_ms = r.join_to_first_step_ms();
    }
  }
  EXPECT_EQ(joined, 1);
  std::cout << "the newcomer's first step came " << join_ms
            << " ms after its assignment\n";

  // All three ranks resumed at the checkpoint where generation 1 ended.
  std::vector<int64_t> resumed = ParseResumeSteps(log2);
  ASSERT_EQ(resumed.size(), 1u) << log2.substr(0, 4000);
  const int64_t at = resumed[0];
  EXPECT_EQ(at % kEvery, 0);
  for (int w = 0; w < 2; ++w) {
    EXPECT_EQ(ParseResumeSteps(ReadFileOrEmpty((*cluster)->dir() + "/worker" +
                                               std::to_string(w) + ".log")),
              std::vector<int64_t>{at});
  }

  // Every sample of every epoch went into the model once: generation 1's
  // steps up to that checkpoint, then generation 2's.
  std::map<int64_t, std::multiset<int64_t>> seen;  // epoch -> ids
  int64_t after = 0;  // Batches generation 1 started past the checkpoint.
  for (int w = 0; w < 3; ++w) {
    for (const SampleLine& s : ParseSampleLines(ReadFileOrEmpty(
             (*cluster)->dir() + "/worker" + std::to_string(w) + ".log"))) {
      ASSERT_TRUE(s.generation == 1 || s.generation == 2) << s.generation;
      if (w == 2) {
        ASSERT_EQ(s.generation, 2);  // The newcomer.
      }
      if (s.generation == 1 && s.step > at) {
        ++after;
        continue;
      }
      seen[s.epoch].insert(s.ids.begin(), s.ids.end());
    }
  }
  EXPECT_LE(after, 2);  // At most the step in flight on each old rank.
  ASSERT_EQ(seen.size(), static_cast<size_t>(kEpochs));
  for (const auto& [epoch, ids] : seen) {
    SCOPED_TRACE(epoch);
    EXPECT_EQ(ids.size(), static_cast<size_t>(kTrain));
    EXPECT_EQ(std::set<int64_t>(ids.begin(), ids.end()).size(),
              static_cast<size_t>(kTrain));
    EXPECT_EQ(*ids.begin(), 0);
    EXPECT_EQ(*ids.rbegin(), kTrain - 1);
  }

  // The same job on two workers throughout.
  v1::JobSpec steady = Spec("steady", FreshDir("scale-up-steady"));
  steady.set_max_workers(2);
  auto reference = (*cluster)->Submit(steady);
  ASSERT_TRUE(reference.ok()) << reference.status();
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(
        (*cluster)
            ->StartWorker({"--max_jobs=1", "--recover_from_peers=false"})
            .ok());
  }
  auto done = (*cluster)->WaitForEnd(*reference, absl::Minutes(3));
  ASSERT_TRUE(done.ok()) << done.status();
  ASSERT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED) << done->message();
  std::cout << "test accuracy: " << last.progress().test_accuracy()
            << " scaled up 2 -> 3, " << done->progress().test_accuracy()
            << " on 2 throughout\n";
  ReportNumeric("elastic.scaled_up_test_accuracy",
                last.progress().test_accuracy());
  ReportNumeric(
      "elastic.scaled_up_minus_steady",
      last.progress().test_accuracy() - done->progress().test_accuracy());
  EXPECT_GE(last.progress().test_accuracy(), 0.5);
  EXPECT_NEAR(last.progress().test_accuracy(), done->progress().test_accuracy(),
              0.01);
}

TEST(ElasticTest, BelowMinTheJobFailsAfterItsRendezvousTimeout) {
  auto cluster =
      Cluster::Start("below-min", {"--lease_ms=1000", "--heartbeat_ms=200"});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  v1::JobSpec spec = Spec("lonely", FreshDir("below-min-ckpt"));
  spec.set_min_workers(2);
  spec.set_max_workers(2);
  spec.set_rendezvous_timeout_ms(3000);
  auto job = (*cluster)->Submit(spec);
  ASSERT_TRUE(job.ok()) << job.status();
  const absl::Time start = absl::Now();
  auto worker = (*cluster)->StartWorker({"--max_jobs=1"});
  ASSERT_TRUE(worker.ok()) << worker.status();
  auto done = (*cluster)->WaitForEnd(*job, absl::Seconds(30));
  const absl::Duration took = absl::Now() - start;
  ASSERT_TRUE(done.ok()) << done.status();
  const std::string want =
      "rendezvous timed out after 3s: 1 of min 2 workers joined";
  EXPECT_EQ(done->state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(done->message(), want);
  EXPECT_EQ(done->generation(), 0);
  EXPECT_GE(took, absl::Seconds(3));
  EXPECT_LT(took, absl::Seconds(15));
  // The worker's join got the same reason, and with the job over it exits,
  // with a failure: its job did not finish (a supervisor restarts it).
  EXPECT_EQ((*worker)->Wait(absl::Seconds(20)), std::optional<int>(1));
  const std::string log = ReadFileOrEmpty((*cluster)->dir() + "/worker0.log");
  EXPECT_NE(log.find(want), std::string::npos) << log.substr(0, 4000);
  std::cout << "below min: FAILED " << absl::FormatDuration(took)
            << " after the worker started: " << done->message() << "\n";
}

}  // namespace
}  // namespace ringleader::testing
