#include "coordinator/member_liveness.h"

#include "gtest/gtest.h"

namespace ringleader {
namespace {

using Verdict = MemberLiveness::Verdict;

constexpr absl::Duration kLease = absl::Seconds(3);

class MemberLivenessTest : public ::testing::Test {
 protected:
  MemberLivenessTest()
      : live_({kLease, absl::Seconds(30), absl::Minutes(5)}),
        t0_(absl::FromUnixSeconds(1000)) {
    live_.StartGeneration("job", 1, {"a", "b", "c"}, t0_);
  }
  absl::Time At(absl::Duration d) const { return t0_ + d; }
  // Every member but `silent` heard at `t` at `step`.
  void PeersAt(const std::string& silent, absl::Duration t, int64_t step) {
    for (const char* w : {"a", "b", "c"}) {
      if (w != silent) live_.Heard(w, 1, step, At(t));
    }
  }

  // Every member but `silent` heard at `t`, at `step`, blocked in a
  // collective since `blocked_since` (InfiniteFuture: not blocked).
  void PeersBlockedAt(const std::string& silent, absl::Duration t, int64_t step,
                      absl::Duration blocked_since) {
    const absl::Duration wait = blocked_since == absl::InfiniteDuration()
                                    ? absl::ZeroDuration()
                                    : t - blocked_since;
    for (const char* w : {"a", "b", "c"}) {
      if (w != silent) live_.Heard(w, 1, step, At(t), wait);
    }
  }

  MemberLiveness live_;
  const absl::Time t0_;
};

TEST_F(MemberLivenessTest, NotAMemberIsLeftToItsLease) {
  EXPECT_EQ(live_.Judge("idle", At(absl::Minutes(10))), Verdict::kNotMember);
}

TEST_F(MemberLivenessTest, ASilentMemberWhosePeersAreStuckIsGoneAfterTheLimit) {
  // Peers heard, but their step never moves: they wait on the silent one.
  for (int s = 1; s <= 40; ++s) PeersAt("c", absl::Seconds(s), 7);
  EXPECT_EQ(live_.Judge("c", At(absl::Seconds(30))), Verdict::kKeep);
  EXPECT_EQ(live_.Judge("c", At(absl::Seconds(31))), Verdict::kGone);
}

TEST_F(MemberLivenessTest, PeersAdvancingProveTheSilentMemberTrains) {
  // c is never heard after t0, yet its peers keep completing steps, which
  // need c's gradients: it is kept however long that lasts.
  for (int s = 1; s <= 120; ++s) PeersAt("c", absl::Seconds(s), 10 * s);
  EXPECT_EQ(live_.Judge("c", At(absl::Seconds(120))), Verdict::kKeep);
  // The steps stop: c is gone a limit after the last proof. The newest
  // proof is the mark 3 steps below the top: step 1190, heard at 119 s.
  for (int s = 121; s <= 160; ++s) PeersAt("c", absl::Seconds(s), 1200);
  EXPECT_EQ(live_.Judge("c", At(absl::Seconds(149))), Verdict::kKeep);
  EXPECT_EQ(live_.Judge("c", At(absl::Seconds(150))), Verdict::kGone);
}

TEST_F(MemberLivenessTest, TwoStepsAreNotProof) {
  // c may have died mid-step q+1: its peers can still finish q+1 and then
  // block in q+2. Only q+3 proves it was alive after q was heard.
  PeersAt("c", absl::Seconds(1), 5);
  PeersAt("c", absl::Seconds(2), 6);
  PeersAt("c", absl::Seconds(3), 7);
  for (int s = 4; s <= 40; ++s) PeersAt("c", absl::Seconds(s), 7);
  EXPECT_EQ(live_.Judge("c", At(absl::Seconds(31))), Verdict::kGone);
  PeersAt("c", absl::Seconds(40), 8);
  // 8 = 5 + 3: c was alive after 1 s, not later.
  EXPECT_EQ(live_.Judge("c", At(absl::Seconds(31))), Verdict::kKeep);
  EXPECT_EQ(live_.Judge("c", At(absl::Seconds(32))), Verdict::kGone);
}

TEST_F(MemberLivenessTest, EveryMemberSilentMeansOurLinkNotTheWorkers) {
  PeersAt("", absl::Seconds(1), 3);
  EXPECT_EQ(live_.Judge("a", At(absl::Seconds(60))), Verdict::kKeep);
  EXPECT_EQ(live_.Judge("b", At(absl::Minutes(5) + absl::Seconds(1))),
            Verdict::kKeep);
  EXPECT_EQ(live_.Judge("b", At(absl::Minutes(5) + absl::Seconds(2))),
            Verdict::kGone);
}

TEST_F(MemberLivenessTest, AReplacedMemberIsGoneUnlessItsPeersStep) {
  // Nobody heard since t0, but a new process took c's device on its host:
  // the host reaches us, so it is not our link.
  EXPECT_EQ(live_.Judge("c", At(absl::Seconds(4))), Verdict::kKeep);
  EXPECT_EQ(live_.Judge("c", At(absl::Seconds(4)), /*replaced=*/true),
            Verdict::kGone);
  // Peers proving c alive after its last contact outweigh the replacement.
  for (int s = 1; s <= 5; ++s) PeersAt("c", absl::Seconds(s), s);
  EXPECT_EQ(live_.Judge("c", At(absl::Seconds(5)), /*replaced=*/true),
            Verdict::kKeep);
}

TEST_F(MemberLivenessTest, TheOutageIsNotHeldAgainstTheLateOnes) {
  // Everybody silent for a minute (our link), then a and b come back first:
  // c, whose calls are still in their backoff, is not judged by its contact
  // a minute ago but gets the silent-member limit from the end of the
  // outage (a 60 s coordinator partition ended its generation at the heal).
  live_.Heard("a", 1, 4, At(absl::Seconds(60)));
  live_.Heard("b", 1, 4, At(absl::Seconds(60)));
  EXPECT_EQ(live_.Judge("c", At(absl::Seconds(61))), Verdict::kKeep);
  // Its peers stuck at step 4: it is gone a limit after the outage ended.
  for (int s = 61; s <= 95; ++s) PeersAt("c", absl::Seconds(s), 4);
  EXPECT_EQ(live_.Judge("c", At(absl::Seconds(90))), Verdict::kKeep);
  EXPECT_EQ(live_.Judge("c", At(absl::Seconds(91))), Verdict::kGone);
}

TEST_F(MemberLivenessTest, AfterTheOutageTheStepsKeepTheLateOneAsBefore) {
  live_.Heard("a", 1, 400, At(absl::Seconds(60)));
  for (int s = 61; s <= 200; ++s) PeersAt("c", absl::Seconds(s), 400 + s);
  EXPECT_EQ(live_.Judge("c", At(absl::Seconds(200))), Verdict::kKeep);
}

TEST_F(MemberLivenessTest, OtherGenerationsReportsAreNotEvidence) {
  for (int s = 1; s <= 40; ++s) {
    live_.Heard("a", 2, 10 * s, At(absl::Seconds(s)));  // Not generation 1.
    live_.Heard("b", 1, 1, At(absl::Seconds(s)));
  }
  EXPECT_EQ(live_.Judge("c", At(absl::Seconds(31))), Verdict::kGone);
}

TEST_F(MemberLivenessTest, AnEndedGenerationHasNoMembers) {
  live_.EndGeneration("job", 1);
  EXPECT_EQ(live_.Judge("a", At(absl::Seconds(1))), Verdict::kNotMember);
  // A newer generation is not ended by an older one's end.
  live_.StartGeneration("job", 3, {"a"}, t0_);
  live_.EndGeneration("job", 2);
  EXPECT_EQ(live_.Judge("a", At(absl::Seconds(4))), Verdict::kKeep);
  // Nor replaced by an older one that formed late.
  live_.StartGeneration("job", 2, {"b"}, t0_);
  EXPECT_EQ(live_.Judge("b", At(absl::Seconds(4))), Verdict::kNotMember);
}

TEST_F(MemberLivenessTest, AForgottenMemberNoLongerCounts) {
  live_.Forget("c");
  EXPECT_EQ(live_.Judge("c", At(absl::Seconds(40))), Verdict::kNotMember);
  // a and b heard: the generation is not silent without c.
  PeersAt("c", absl::Seconds(40), 1);
  EXPECT_EQ(live_.Judge("a", At(absl::Seconds(42))), Verdict::kKeep);
}

TEST_F(MemberLivenessTest, AHungMemberWhosePeersAreBlockedIsGoneAtItsLease) {
  // c is stopped right after t0 (its last heartbeat); a and b block in the
  // next all-reduce at 0.1 s and say so in every heartbeat.
  for (int ms = 1000; ms <= 3000; ms += 1000) {
    PeersBlockedAt("c", absl::Milliseconds(ms), 7, absl::Milliseconds(100));
  }
  // Within its lease c is not judged at all.
  EXPECT_EQ(live_.Judge("c", At(absl::Seconds(3))), Verdict::kKeep);
  // Past it: no collective of theirs completes without c.
  EXPECT_EQ(live_.Judge("c", At(absl::Milliseconds(3001))), Verdict::kGone);
}

TEST_F(MemberLivenessTest, PeersWhoseCollectivesCompleteKeepTheSilentMember) {
  // c's heartbeats alone are lost: its peers' all-reduces complete, each
  // wait in their reports is short, and their steps advance.
  for (int s = 1; s <= 60; ++s) {
    PeersBlockedAt("c", absl::Seconds(s), 10 * s,
                   absl::Seconds(s) - absl::Milliseconds(20));
  }
  EXPECT_EQ(live_.Judge("c", At(absl::Seconds(60))), Verdict::kKeep);
}

TEST_F(MemberLivenessTest, ShortWaitsAreNotProofOfAHang) {
  // Peers stuck at one step, but each report shows a wait under hung_wait
  // (a peer that is not in a collective when it beats, say): the old rule,
  // gone after silent_member_limit.
  for (int s = 1; s <= 40; ++s) {
    PeersBlockedAt("c", absl::Seconds(s), 7,
                   absl::Seconds(s) - absl::Milliseconds(900));
  }
  EXPECT_EQ(live_.Judge("c", At(absl::Seconds(30))), Verdict::kKeep);
  EXPECT_EQ(live_.Judge("c", At(absl::Seconds(31))), Verdict::kGone);
}

TEST_F(MemberLivenessTest, APeerThatIsNotBlockedMayBeTheOneTheOthersWaitFor) {
  // b computes (a long evaluation, a slow step) while a waits for it in the
  // all-reduce; c's heartbeats are lost. Nothing says c is the one missing.
  for (int s = 1; s <= 10; ++s) {
    live_.Heard("a", 1, 7, At(absl::Seconds(s)), absl::Seconds(s));
    live_.Heard("b", 1, 7, At(absl::Seconds(s)));
  }
  EXPECT_EQ(live_.Judge("c", At(absl::Seconds(10))), Verdict::kKeep);
  // Once b blocks too, every heard peer waits: c is gone.
  live_.Heard("b", 1, 7, At(absl::Seconds(11)), absl::Seconds(2));
  EXPECT_EQ(live_.Judge("c", At(absl::Seconds(11))), Verdict::kGone);
}

TEST_F(MemberLivenessTest, BlockedPeersThatFallSilentTooMeanOurLink) {
  // Every member's last word: a and b blocked. Then nobody is heard: the
  // coordinator's link, not a hang, until the generation limit.
  PeersBlockedAt("c", absl::Seconds(1), 7, absl::ZeroDuration());
  EXPECT_EQ(live_.Judge("c", At(absl::Seconds(60))), Verdict::kKeep);
  EXPECT_EQ(live_.Judge("a", At(absl::Seconds(60))), Verdict::kKeep);
}

TEST_F(MemberLivenessTest, SilentPeersSayNothingAboutTheCollective) {
  // b and c both stop after t0; a, the only one heard, waits for them.
  for (int s = 1; s <= 4; ++s) {
    live_.Heard("a", 1, 7, At(absl::Seconds(s)), absl::Seconds(s));
  }
  EXPECT_EQ(live_.Judge("b", At(absl::Seconds(4))), Verdict::kGone);
  EXPECT_EQ(live_.Judge("c", At(absl::Seconds(4))), Verdict::kGone);
  // a's next report: its collectives complete again, no verdict.
  live_.Heard("a", 1, 8, At(absl::Seconds(5)));
  EXPECT_EQ(live_.Judge("b", At(absl::Seconds(5))), Verdict::kKeep);
}

}  // namespace
}  // namespace ringleader
