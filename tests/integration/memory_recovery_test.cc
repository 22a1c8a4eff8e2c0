// Issue 19, point 6: recovery from the members' memory with real worker
// processes, each case held to the exact-once sample check (every sample of
// every epoch applied once, from the sample-id logs) and to one state on
// every rank, bit for bit (the state digests the workers log when they
// resume and at the job's end):
// - a rank a step behind its peers when the generation ends (its all-reduce
//   "completed" for them, not for it: fault injection) is brought to the
//   newest step by a rank that holds it;
// - a replacement started for a worker killed mid-epoch receives the state
//   from a live peer (no checkpoint directory: nothing on disk);
// - a newcomer to a job without checkpoints gets in at once (a scale-up at
//   any step: its peers keep their state) and receives it from a peer;
// - a second worker dies in the middle of the recovery from the first
//   failure: the survivors keep their state through the aborted recovery
//   and the third generation still recovers from memory.
// worker_failure_test's WithoutCheckpointsTheSurvivorsRecoverFromMemory is
// the plain case (one worker killed, the survivors recover).
#include <signal.h>
#include <stdlib.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "tests/integration/cluster.h"
#include "tests/integration/worker_logs.h"
#include "tests/testing/job_specs.h"

namespace ringleader::testing {
namespace {

// 9600 samples in batches of 32: whole steps at world 3 and 2, so every
// sample of an epoch goes in exactly once (no padding). No checkpoint
// directory: recovery can only come from memory.
constexpr int64_t kTrain = 9600;

v1::JobSpec MemoryJobSpec(const std::string& name) {
  v1::JobSpec s = FailureJobSpec(name, "");
  s.mutable_dataset()->set_synthetic_train_size(kTrain);
  s.set_checkpoint_every_steps(0);
  return s;
}

// Every sample of every epoch once, over all the job's generations, at
// most `padded` twice (a world that grew mid-epoch).
void ExpectEverySampleOnce(const AppliedSamples& applied, int64_t epochs,
                           int64_t padded = 0) {
  EXPECT_EQ(
      ExactlyOnceViolations(
          applied, {.epochs = epochs, .samples = kTrain, .padded = padded}),
      "");
}

// The digests logged `when` ("resumed", "end") in `generation` (0: any),
// one per worker log that has one.
std::vector<std::string> Digests(const std::vector<std::string>& logs,
                                 const std::string& when,
                                 int64_t generation = 0) {
  std::vector<std::string> out;
  for (const std::string& log : logs) {
    for (const DigestLine& d : ParseDigestLines(log)) {
      if (d.when == when && (generation == 0 || d.generation == generation)) {
        out.push_back(d.digest);
      }
    }
  }
  return out;
}

void ExpectAllEqual(const std::vector<std::string>& digests, size_t count) {
  ASSERT_EQ(digests.size(), count);
  for (const std::string& d : digests) EXPECT_EQ(d, digests.front());
}

// The rank `log`'s worker had in `generation`; -1 if it was not a member.
int64_t RankIn(const std::string& log, int64_t generation) {
  for (const RankLine& r : ParseRankLines(log)) {
    if (r.generation == generation) return r.rank;
  }
  return -1;
}

// The newest generation any of `logs`' workers took a rank in (0: none).
int64_t NewestGeneration(const std::vector<std::string>& logs) {
  int64_t newest = 0;
  for (const std::string& log : logs) {
    for (const RankLine& r : ParseRankLines(log)) {
      newest = std::max(newest, r.generation);
    }
  }
  return newest;
}

// The step `log`'s worker kept when `generation` ended under it; -1: none.
int64_t KeptIn(const std::string& log, int64_t generation) {
  for (const KeepLine& k : ParseKeepLines(log)) {
    if (k.generation == generation) return k.step;
  }
  return -1;
}

class MemoryRecoveryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Workers log every batch's sample ids (VLOG 1); set before any thread.
    ASSERT_EQ(setenv("GLOG_v", "1", 1), 0);
  }
};

TEST_F(MemoryRecoveryTest, ARankAStepBehindIsBroughtToTheNewestStep) {
  auto cluster =
      Cluster::Start("behind", {"--lease_ms=1000", "--heartbeat_ms=200"});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  constexpr int64_t kLostStep = 40;
  v1::JobSpec spec = MemoryJobSpec("behind");
  spec.set_epochs(1);
  // Generation 2 waits for all 3 (unless one is 10 s late).
  spec.set_rendezvous_last_call_ms(10000);
  auto job = (*cluster)->Submit(spec);
  ASSERT_TRUE(job.ok()) << job.status();
  // Rank 0 of generation 1 loses its result of step 40's first all-reduce
  // after its peers completed it: they apply step 40, it does not.
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE((*cluster)
                    ->StartWorker({"--max_jobs=1", "--collective_timeout_s=30",
                                   "--fault_lose_allreduce_result_at_step=" +
                                       std::to_string(kLostStep),
                                   "--fault_lose_allreduce_result_rank=0"})
                    .ok());
  }
  auto done = (*cluster)->WaitForEnd(*job, absl::Minutes(5));
  ASSERT_TRUE(done.ok()) << done.status();
  const std::vector<std::string> logs = (*cluster)->WorkerLogs();
  ASSERT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED) << done->message() << "\n"
                                                    << logs[0].substr(0, 4000);
  EXPECT_EQ(done->restarts(), 1);
  EXPECT_EQ(done->world_size(), 3);

  // The worker that lost the result kept step 39, the others step 40.
  int behind = -1;
  for (int w = 0; w < 3; ++w) {
    if (logs[w].find("loses the result of an all-reduce of step 40") !=
        std::string::npos) {
      EXPECT_EQ(behind, -1) << "two workers lost a result";
      behind = w;
    }
  }
  ASSERT_NE(behind, -1) << logs[0].substr(0, 4000);
  EXPECT_EQ(RankIn(logs[behind], 1), 0);
  for (int w = 0; w < 3; ++w) {
    SCOPED_TRACE(w);
    EXPECT_EQ(KeptIn(logs[w], 1), w == behind ? kLostStep - 1 : kLostStep);
  }
  // Generation 2 recovered from memory at step 40, from a rank that kept
  // it; the one behind stayed rank 0, so the lowest rank did not win by
  // default: the newest step did.
  int64_t source = -1;
  for (int w = 0; w < 3; ++w) {
    SCOPED_TRACE(w);
    const std::vector<ResumeLine> r = ParseResumeLines(logs[w]);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].generation, 2);
    EXPECT_TRUE(r[0].from_memory);
    EXPECT_EQ(r[0].step, kLostStep);
    if (source == -1) source = r[0].source_rank;
    EXPECT_EQ(r[0].source_rank, source);
  }
  EXPECT_EQ(RankIn(logs[behind], 2), 0);
  int source_worker = -1;
  for (int w = 0; w < 3; ++w) {
    if (RankIn(logs[w], 2) == source) source_worker = w;
  }
  ASSERT_NE(source_worker, -1);
  EXPECT_NE(source_worker, behind);
  EXPECT_EQ(KeptIn(logs[source_worker], 1), kLostStep);

  ExpectAllEqual(Digests(logs, "resumed", 2), 3);
  ExpectAllEqual(Digests(logs, "end"), 3);
  const AppliedSamples applied = CountAppliedSamples(logs);
  EXPECT_LE(applied.redone_batches, 2);  // Step 41 on the ranks ahead.
  ExpectEverySampleOnce(applied, 1);
  EXPECT_EQ(done->progress().step(), done->progress().total_steps());
  std::cout << "rank 0 lost step " << kLostStep
            << "'s all-reduce; generation 2 recovered at step " << kLostStep
            << " from rank " << source << "'s memory; "
            << applied.redone_batches << " batches redone; state digest "
            << Digests(logs, "end").front() << " on every rank\n";
}

TEST_F(MemoryRecoveryTest, AReplacementReceivesTheStateFromALivePeer) {
  auto cluster =
      Cluster::Start("replace", {"--lease_ms=1000", "--heartbeat_ms=200"});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  v1::JobSpec spec = MemoryJobSpec("replace");
  // The survivors, below min_workers, wait for the replacement: its one
  // generation is the one after the kill.
  spec.set_min_workers(3);
  auto job = (*cluster)->Submit(spec);
  ASSERT_TRUE(job.ok()) << job.status();
  const std::vector<std::string> flags = {"--max_jobs=1",
                                          "--collective_timeout_s=30"};
  ASSERT_TRUE((*cluster)->StartWorkers(3, flags).ok());
  auto running = (*cluster)->WaitUntil(
      *job, [](const v1::Job& j) { return RunningAt(j, 3, 60); },
      absl::Minutes(3));
  ASSERT_TRUE(running.ok()) << running.status();
  ASSERT_EQ(running->world_size(), 3) << running->message();
  const int64_t seen_at_kill = running->progress().step();
  // Mid-epoch (100 steps an epoch at world 3), far from the end.
  ASSERT_LT(seen_at_kill + 50, running->progress().total_steps());
  (*cluster)->workers()[2]->Kill(SIGKILL);
  // The replacement: a new process, started after the kill.
  ASSERT_TRUE((*cluster)->StartWorker(flags).ok());
  auto done = (*cluster)->WaitForEnd(*job, absl::Minutes(5));
  ASSERT_TRUE(done.ok()) << done.status();
  const std::vector<std::string> logs = (*cluster)->WorkerLogs();
  ASSERT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED) << done->message() << "\n"
                                                    << logs[3].substr(0, 4000);
  EXPECT_EQ(done->restarts(), 1)
      << "killed at step " << seen_at_kill << "\n"
      << logs[2].substr(logs[2].size() > 3000 ? logs[2].size() - 3000 : 0)
      << "\n---\n"
      << logs[3].substr(0, 4000);
  EXPECT_EQ(done->world_size(), 3);

  // The replacement's one generation is 2; it received the state a
  // survivor kept (not its own: it kept nothing) and read no file.
  const std::vector<RankLine> ranks = ParseRankLines(logs[3]);
  ASSERT_EQ(ranks.size(), 1u) << logs[3].substr(0, 4000);
  EXPECT_EQ(ranks[0].generation, 2);
  const std::vector<ResumeLine> r = ParseResumeLines(logs[3]);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_TRUE(r[0].from_memory);
  EXPECT_NE(r[0].source_rank, ranks[0].rank);
  EXPECT_GE(r[0].step, seen_at_kill);
  EXPECT_GT(r[0].offset, 0) << "not mid-epoch";
  int source_worker = -1;
  for (int w = 0; w < 2; ++w) {
    if (RankIn(logs[w], 2) == r[0].source_rank) source_worker = w;
  }
  ASSERT_NE(source_worker, -1);
  EXPECT_EQ(KeptIn(logs[source_worker], 1), r[0].step);
  EXPECT_TRUE(ParseKeepLines(logs[3]).empty());

  ExpectAllEqual(Digests(logs, "resumed", 2), 3);
  ExpectAllEqual(Digests(logs, "end"), 3);
  const AppliedSamples applied = CountAppliedSamples(logs);
  EXPECT_LE(applied.redone_batches, 3);  // At most the step in flight.
  ExpectEverySampleOnce(applied, 2);
  EXPECT_EQ(done->progress().step(), done->progress().total_steps());
  std::cout << "killed a worker at step >= " << seen_at_kill
            << "; the replacement received rank " << r[0].source_rank
            << "'s state at step " << r[0].step << " (offset " << r[0].offset
            << "); " << applied.redone_batches << " batches redone\n";
}

TEST_F(MemoryRecoveryTest, ANewcomerJoinsAtOnceWithoutACheckpoint) {
  auto cluster =
      Cluster::Start("grow", {"--lease_ms=1000", "--heartbeat_ms=200"});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  v1::JobSpec spec = MemoryJobSpec("grow");  // No checkpoint_dir.
  // Long enough (about 5 ms a step here) that the job still trains when
  // the newcomer's process has started and registered.
  spec.set_epochs(8);
  auto job = (*cluster)->Submit(spec);
  ASSERT_TRUE(job.ok()) << job.status();
  const std::vector<std::string> flags = {"--max_jobs=1"};
  ASSERT_TRUE((*cluster)->StartWorkers(2, flags).ok());
  auto running = (*cluster)->WaitUntil(
      *job, [](const v1::Job& j) { return RunningAt(j, 2, 30); },
      absl::Minutes(3));
  ASSERT_TRUE(running.ok()) << running.status();
  const int64_t seen_at_start = running->progress().step();
  ASSERT_LT(seen_at_start + 600, running->progress().total_steps());
  ASSERT_TRUE((*cluster)->StartWorker(flags).ok());
  auto done = (*cluster)->WaitForEnd(*job, absl::Minutes(5));
  ASSERT_TRUE(done.ok()) << done.status();
  const std::vector<std::string> logs = (*cluster)->WorkerLogs();
  ASSERT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED) << done->message() << "\n"
                                                    << logs[2].substr(0, 4000);
  // A scale-up, not a restart, and no checkpoint to wait for.
  EXPECT_EQ(done->restarts(), 0);
  EXPECT_EQ(done->generation(), 2);
  EXPECT_EQ(done->world_size(), 3);
  const std::vector<RankLine> ranks = ParseRankLines(logs[2]);
  ASSERT_EQ(ranks.size(), 1u) << logs[2].substr(0, 4000);
  EXPECT_EQ(ranks[0].generation, 2);
  const std::vector<ResumeLine> r = ParseResumeLines(logs[2]);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_TRUE(r[0].from_memory);
  EXPECT_NE(r[0].source_rank, ranks[0].rank);
  EXPECT_GE(r[0].step, seen_at_start);
  ExpectAllEqual(Digests(logs, "resumed", 2), 3);
  ExpectAllEqual(Digests(logs, "end"), 3);
  const AppliedSamples applied = CountAppliedSamples(logs);
  EXPECT_LE(applied.redone_batches, 2);  // At most the step in flight.
  ExpectEverySampleOnce(applied, 8, /*padded=*/2);
  EXPECT_EQ(done->progress().step(), done->progress().total_steps());
  std::cout << "the newcomer started at step >= " << seen_at_start
            << " and received rank " << r[0].source_rank << "'s state at step "
            << r[0].step << "; " << applied.redone_batches
            << " batches redone\n";
}

// The coordinator log's lines about generations forming and ending: what a
// failure needs to say why the generations went as they did.
std::string GenerationLines(const std::string& log) {
  std::string out;
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    if (absl::StrContains(line, "generation ") &&
        (absl::StrContains(line, " formed") ||
         absl::StrContains(line, " ended"))) {
      absl::StrAppend(&out, line, "\n");
    }
  }
  return out;
}

// The spare's generation's recovery was cut short before anyone trained in
// it: whatever a survivor (workers 0-2 but `killed`) kept of it is the
// newest state before it again, and the last generation recovered from
// memory at that step (set in `newest`), from a rank that kept it.
void ExpectRecoveryFromTheNewestKept(const std::vector<std::string>& logs,
                                     int killed, int64_t spare_generation,
                                     int64_t seen_at_kill, int64_t* newest) {
  int64_t& newest_kept = *newest;
  newest_kept = -1;
  const int64_t last = spare_generation + 1;
  std::vector<int> finishers;
  for (int w = 0; w < 3; ++w) {
    if (w == killed) continue;
    finishers.push_back(w);
    for (int64_t g = 1; g < spare_generation; ++g) {
      newest_kept = std::max(newest_kept, KeptIn(logs[w], g));
    }
  }
  ASSERT_GE(newest_kept, seen_at_kill);
  for (int w : finishers) {
    SCOPED_TRACE(w);
    const int64_t kept = KeptIn(logs[w], spare_generation);
    if (kept >= 0) {
      EXPECT_EQ(kept, newest_kept);
    }
  }
  int64_t source = -1;
  for (int w : finishers) {
    SCOPED_TRACE(w);
    std::vector<ResumeLine> resumed;
    for (const ResumeLine& r : ParseResumeLines(logs[w])) {
      if (r.generation == last) resumed.push_back(r);
    }
    ASSERT_EQ(resumed.size(), 1u) << logs[w].substr(0, 4000);
    EXPECT_TRUE(resumed[0].from_memory);
    EXPECT_EQ(resumed[0].step, newest_kept);
    source = resumed[0].source_rank;
  }
  int source_worker = -1;
  for (int w : finishers) {
    if (RankIn(logs[w], last) == source) source_worker = w;
  }
  ASSERT_NE(source_worker, -1);
  int64_t source_kept = -1;
  for (int64_t g = 1; g < last; ++g) {
    source_kept = std::max(source_kept, KeptIn(logs[source_worker], g));
  }
  EXPECT_EQ(source_kept, newest_kept);
}

TEST_F(MemoryRecoveryTest,
       ASecondFailureDuringRecoveryStillRecoversFromMemory) {
  auto cluster =
      Cluster::Start("twice", {"--lease_ms=1000", "--heartbeat_ms=200"});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  v1::JobSpec spec = MemoryJobSpec("twice");
  // Long enough for the spare to start, register and join after the kill.
  spec.set_epochs(6);
  // 3 of 4 workers train, the fourth idles as a spare until the kill frees
  // its place. It joins either the survivors' generation (if it is back
  // before them) or the one after (the survivors form theirs at once and
  // take it in as a scale-up); it dies in that generation's recovery and
  // the survivors form the last one.
  auto job = (*cluster)->Submit(spec);
  ASSERT_TRUE(job.ok()) << job.status();
  const std::vector<std::string> flags = {"--max_jobs=1",
                                          "--collective_timeout_s=30"};
  ASSERT_TRUE((*cluster)->StartWorkers(3, flags).ok());
  auto running = (*cluster)->WaitUntil(
      *job, [](const v1::Job& j) { return RunningAt(j, 3, 1); },
      absl::Minutes(3));
  ASSERT_TRUE(running.ok()) << running.status();
  // Worker 3, started once a generation holds the other three, dies in the
  // first recovery from memory it takes part in.
  std::vector<std::string> dying_flags = flags;
  dying_flags.push_back("--fault_exit_during_recovery");
  ASSERT_TRUE((*cluster)->StartWorker(dying_flags).ok());
  running = (*cluster)->WaitUntil(
      *job, [](const v1::Job& j) { return RunningAt(j, 3, 60); },
      absl::Minutes(3));
  ASSERT_TRUE(running.ok()) << running.status();
  ASSERT_EQ(running->world_size(), 3) << running->message();
  // The generation of the three: the first, or the second where the third
  // worker came after the first two had formed one (a scale-up).
  std::vector<std::string> before = (*cluster)->WorkerLogs();
  before.resize(3);
  const int64_t trained = NewestGeneration(before);
  // Kill a member of it other than worker 3.
  int killed = -1;
  for (int w = 0; w < 3 && killed < 0; ++w) {
    if (RankIn(before[w], trained) >= 0) killed = w;
  }
  ASSERT_NE(killed, -1) << "no worker took a rank in generation " << trained;
  const int64_t seen_at_kill = running->progress().step();
  (*cluster)->workers()[killed]->Kill(SIGKILL);
  auto done = (*cluster)->WaitForEnd(*job, absl::Minutes(5));
  ASSERT_TRUE(done.ok()) << done.status();
  const std::vector<std::string> logs = (*cluster)->WorkerLogs();
  ASSERT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED) << done->message() << "\n"
                                                    << logs[3].substr(0, 4000);
  EXPECT_EQ(done->restarts(), 2);  // The kill and the spare's exit.
  EXPECT_EQ(done->world_size(), 2);
  EXPECT_EQ((*cluster)->workers()[3]->Wait(absl::Minutes(1)), 3);
  EXPECT_NE(logs[3].find("exiting in the middle of a recovery"),
            std::string::npos);
  const std::vector<RankLine> spare = ParseRankLines(logs[3]);
  ASSERT_EQ(spare.size(), 1u) << logs[3].substr(0, 4000);
  const int64_t spare_generation = spare[0].generation;
  ASSERT_TRUE(spare_generation == trained + 1 ||
              spare_generation == trained + 2)
      << spare_generation << " after " << trained
      << "; the generations as the coordinator saw them:\n"
      << GenerationLines(
             ReadFileOrEmpty((*cluster)->log_dir() + "/coordinator.log"));
  const int64_t last = spare_generation + 1;

  int64_t newest_kept = -1;
  ExpectRecoveryFromTheNewestKept(logs, killed, spare_generation, seen_at_kill,
                                  &newest_kept);
  if (::testing::Test::HasFatalFailure()) return;

  ExpectAllEqual(Digests(logs, "resumed", last), 2);
  ExpectAllEqual(Digests(logs, "end"), 2);
  const AppliedSamples applied = CountAppliedSamples(logs);
  // At most the step in flight on each member, at each end but the
  // spare's (it died before anyone trained): the kill (3 members), the
  // scale-up that took the spare in after the survivors' generation formed
  // (2), and the one that took the third worker in where the first two
  // formed a generation without it (2). Each growth to 3 mid-epoch pads
  // the rest of that epoch by up to 2 samples.
  const int64_t growths = (trained - 1) + (spare_generation - trained - 1);
  EXPECT_LE(applied.redone_batches, 3 + 2 * growths);
  ExpectEverySampleOnce(applied, 6, /*padded=*/2 + 2 * (trained - 1));
  EXPECT_EQ(done->progress().step(), done->progress().total_steps());
  std::cout << "killed worker " << killed << " at step >= " << seen_at_kill
            << "; worker 3 died in generation " << spare_generation
            << "'s recovery; generation " << last
            << " recovered from memory at step " << newest_kept << "; "
            << applied.redone_batches << " batches redone\n";
}

}  // namespace
}  // namespace ringleader::testing
