// The worker-log parsers that integration tests read worker logs with.
#include "tests/integration/worker_logs.h"

#include "gtest/gtest.h"

namespace ringleader::testing {
namespace {

TEST(WorkerLogsTest, GlogTimeReadsTheLinePrefixInLocalTime) {
  const auto t = GlogTime(
      "W20261204 09:55:06.988044 14895 coordinator_client.cc:195] heartbeat");
  ASSERT_TRUE(t.has_value());
  const absl::CivilSecond want(2026, 12, 4, 9, 55, 6);
  EXPECT_EQ(absl::ToCivilSecond(*t, absl::LocalTimeZone()), want);
  EXPECT_EQ(*t - absl::FromCivil(want, absl::LocalTimeZone()),
            absl::Microseconds(988044));
  EXPECT_FALSE(GlogTime("ringleader-worker: bad flag").has_value());
  EXPECT_FALSE(GlogTime("I2026").has_value());
}

TEST(WorkerLogsTest, RankAndSampleLines) {
  const std::string log =
      "I20261204 09:55:00.963542 1 worker_daemon.cc:137] generation 1: rank 2 "
      "of 3\n"
      "I20261204 09:55:01.000001 1 trainer.cc:249] samples generation=1 "
      "rank=2 epoch=0 step=1 ids=4,5\n"
      "I20261204 09:55:17.557781 1 worker_daemon.cc:137] generation 3: rank 0 "
      "of 2\n";
  const std::vector<RankLine> ranks = ParseRankLines(log);
  ASSERT_EQ(ranks.size(), 2u);
  EXPECT_EQ(ranks[0].generation, 1);
  EXPECT_EQ(ranks[0].rank, 2);
  EXPECT_EQ(ranks[0].world_size, 3);
  EXPECT_EQ(ranks[1].generation, 3);
  EXPECT_EQ(ranks[1].world_size, 2);
  const std::vector<SampleLine> samples = ParseSampleLines(log);
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].step, 1);
  EXPECT_EQ(samples[0].ids, (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(samples[0].time,
            absl::FromCivil(absl::CivilSecond(2026, 12, 4, 9, 55, 1),
                            absl::LocalTimeZone()) +
                absl::Microseconds(1));
}

TEST(WorkerLogsTest, ResumeKeepAndDigestLinesCarryTheirGeneration) {
  const std::string log =
      "I20261204 09:55:00.963542 1 worker_daemon.cc:137] generation 1: rank 0 "
      "of 3\n"
      "I20261204 09:55:03.000000 1 trainer.cc:245] rank 0 keeps its state at "
      "epoch 0 step 39 offset 3744 (9000 bytes)\n"
      "I20261204 09:55:04.000000 1 worker_daemon.cc:137] generation 2: rank 0 "
      "of 3\n"
      "I20261204 09:55:04.100000 1 peer_recovery.cc:120] rank 0 recovers from "
      "rank 1's memory at epoch 0 step 40 offset 3840 (9000 bytes; newest "
      "checkpoint offered: step -1)\n"
      "I20261204 09:55:04.200000 1 trainer.cc:190] rank 0 state digest at "
      "step 40 (resumed): 00ff00ff00ff00ff\n"
      "I20261204 09:55:09.000000 1 trainer.cc:480] rank 0 state digest at "
      "step 200 (end): 0123456789abcdef\n";
  const std::vector<KeepLine> keeps = ParseKeepLines(log);
  ASSERT_EQ(keeps.size(), 1u);
  EXPECT_EQ(keeps[0].generation, 1);
  EXPECT_EQ(keeps[0].step, 39);
  EXPECT_EQ(keeps[0].offset, 3744);
  const std::vector<ResumeLine> resumes = ParseResumeLines(log);
  ASSERT_EQ(resumes.size(), 1u);
  EXPECT_EQ(resumes[0].generation, 2);
  EXPECT_TRUE(resumes[0].from_memory);
  EXPECT_EQ(resumes[0].source_rank, 1);
  EXPECT_EQ(resumes[0].step, 40);
  EXPECT_EQ(resumes[0].offset, 3840);
  const std::vector<DigestLine> digests = ParseDigestLines(log);
  ASSERT_EQ(digests.size(), 2u);
  EXPECT_EQ(digests[0].generation, 2);
  EXPECT_EQ(digests[0].when, "resumed");
  EXPECT_EQ(digests[0].step, 40);
  EXPECT_EQ(digests[0].digest, "00ff00ff00ff00ff");
  EXPECT_EQ(digests[1].when, "end");
  EXPECT_EQ(digests[1].digest, "0123456789abcdef");
}

TEST(WorkerLogsTest, AppliedSamplesStopAtTheStepTheNextGenerationResumedAt) {
  // Generation 1 trained steps 1-3 on two ranks; generation 2 failed during
  // its recovery (no resume line, no samples); generation 3 resumed at
  // step 2, so generation 1's step 3 was never applied.
  const std::string a =
      "I20261204 09:55:00.000000 1 d.cc:1] generation 1: rank 0 of 2\n"
      "I20261204 09:55:00.000001 1 t.cc:1] samples generation=1 rank=0 "
      "epoch=0 step=1 ids=0,1\n"
      "I20261204 09:55:00.000002 1 t.cc:1] samples generation=1 rank=0 "
      "epoch=0 step=2 ids=4,5\n"
      "I20261204 09:55:00.000003 1 t.cc:1] samples generation=1 rank=0 "
      "epoch=0 step=3 ids=8,9\n"
      "I20261204 09:55:01.000000 1 d.cc:1] generation 2: rank 0 of 2\n"
      "I20261204 09:55:02.000000 1 d.cc:1] generation 3: rank 0 of 1\n"
      "I20261204 09:55:02.000001 1 p.cc:1] rank 0 recovers from rank 0's "
      "memory at epoch 0 step 2 offset 8 (9 bytes)\n"
      "I20261204 09:55:02.000002 1 t.cc:1] samples generation=3 rank=0 "
      "epoch=0 step=3 ids=8,9,10,11\n";
  const std::string b =
      "I20261204 09:55:00.000000 1 d.cc:1] generation 1: rank 1 of 2\n"
      "I20261204 09:55:00.000001 1 t.cc:1] samples generation=1 rank=1 "
      "epoch=0 step=1 ids=2,3\n"
      "I20261204 09:55:00.000002 1 t.cc:1] samples generation=1 rank=1 "
      "epoch=0 step=2 ids=6,7\n";
  const AppliedSamples applied = CountAppliedSamples({a, b});
  EXPECT_EQ(applied.disagreement, "");
  EXPECT_EQ(applied.redone_batches, 1);
  EXPECT_EQ(applied.resumed_at, (std::map<int64_t, int64_t>{{3, 2}}));
  ASSERT_EQ(applied.by_epoch.size(), 1u);
  std::multiset<int64_t> want;
  for (int64_t i = 0; i < 12; ++i) want.insert(i);
  EXPECT_EQ(applied.by_epoch.at(0), want);
  // Ranks that resumed one generation at different steps are reported.
  const std::string c =
      "I20261204 09:55:02.000000 1 d.cc:1] generation 3: rank 1 of 2\n"
      "I20261204 09:55:02.000001 1 p.cc:1] rank 1 recovers from rank 0's "
      "memory at epoch 0 step 3 offset 12 (9 bytes)\n";
  EXPECT_NE(CountAppliedSamples({a, c}).disagreement, "");
}

TEST(WorkerLogsTest, ExactlyOnceNamesEveryViolation) {
  AppliedSamples applied;
  applied.by_epoch[0] = {0, 1, 2, 3};
  applied.by_epoch[1] = {0, 1, 2, 3, 3};  // One padded repeat.
  applied.redone_batches = 2;
  EXPECT_EQ(
      ExactlyOnceViolations(
          applied, {.epochs = 2, .samples = 4, .padded = 1, .max_redone = 2}),
      "");
  EXPECT_EQ(ExactlyOnceViolations(applied, {.epochs = 2, .samples = 4}),
            "epoch 1: 5 samples applied, not 4");
  EXPECT_EQ(
      ExactlyOnceViolations(
          applied, {.epochs = 3, .samples = 5, .padded = 1, .max_redone = 1}),
      "2 batches trained but not applied, over 1; 2 epochs applied, not 3; "
      "epoch 0: 4 samples applied, not 5 to 6; "
      "epoch 0: 4 distinct samples, not 5; "
      "epoch 1: 4 distinct samples, not 5");
  applied.disagreement = "generation 3 resumed at steps 2 and 3; ";
  EXPECT_NE(
      ExactlyOnceViolations(applied, {.epochs = 2, .samples = 4, .padded = 1}),
      "");
}

}  // namespace
}  // namespace ringleader::testing
