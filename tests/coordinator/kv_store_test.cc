#include "coordinator/kv_store.h"

#include <optional>

#include "common/fake_clock.h"
#include "gtest/gtest.h"

namespace ringleader {
namespace {

using Values = absl::StatusOr<std::vector<std::string>>;

class KvStoreTest : public ::testing::Test {
 protected:
  FakeClock clock_;
  KvStore kv_{&clock_};
  GenerationKey gen_{"job-1", 1};
};

TEST_F(KvStoreTest, SetThenGet) {
  ASSERT_TRUE(kv_.Set(gen_, "a", "1").ok());
  EXPECT_EQ(*kv_.Get(gen_, "a"), "1");
  EXPECT_TRUE(absl::IsNotFound(kv_.Get(gen_, "b").status()));
  // Generations are separate namespaces.
  EXPECT_TRUE(absl::IsNotFound(kv_.Get({"job-1", 2}, "a").status()));
  EXPECT_TRUE(absl::IsNotFound(kv_.Get({"job-2", 1}, "a").status()));
}

TEST_F(KvStoreTest, WaitCompletesWhenLastKeyIsSet) {
  std::optional<Values> got;
  kv_.Wait(gen_, {"x", "y"}, clock_.Now() + absl::Seconds(5),
           [&](Values v) { got = std::move(v); });
  EXPECT_FALSE(got.has_value());
  ASSERT_TRUE(kv_.Set(gen_, "y", "Y").ok());
  EXPECT_FALSE(got.has_value());
  ASSERT_TRUE(kv_.Set(gen_, "x", "X").ok());
  ASSERT_TRUE(got.has_value());
  ASSERT_TRUE(got->ok());
  EXPECT_EQ(**got, (std::vector<std::string>{"X", "Y"}));
  EXPECT_EQ(kv_.waiter_count(), 0u);
  EXPECT_EQ(clock_.pending_timers(), 0u);  // Its deadline was cancelled.
}

TEST_F(KvStoreTest, WaitOnExistingKeysCompletesAtOnce) {
  ASSERT_TRUE(kv_.Set(gen_, "x", "X").ok());
  std::optional<Values> got;
  kv_.Wait(gen_, {"x"}, clock_.Now() + absl::Seconds(1),
           [&](Values v) { got = std::move(v); });
  ASSERT_TRUE(got.has_value() && got->ok());
  EXPECT_EQ((**got)[0], "X");
}

TEST_F(KvStoreTest, WaitTimesOutAtDeadlineNamingTheKey) {
  std::optional<Values> got;
  kv_.Wait(gen_, {"missing"}, clock_.Now() + absl::Seconds(2),
           [&](Values v) { got = std::move(v); });
  clock_.Advance(absl::Milliseconds(1999));
  EXPECT_FALSE(got.has_value());
  clock_.Advance(absl::Milliseconds(1));
  ASSERT_TRUE(got.has_value());
  EXPECT_TRUE(absl::IsDeadlineExceeded(got->status()));
  EXPECT_NE(got->status().message().find("missing"), std::string::npos);
  // A late set does not call it again.
  ASSERT_TRUE(kv_.Set(gen_, "missing", "1").ok());
}

TEST_F(KvStoreTest, DropGenerationAbortsWaiters) {
  std::optional<Values> got;
  kv_.Wait(gen_, {"k"}, clock_.Now() + absl::Seconds(10),
           [&](Values v) { got = std::move(v); });
  kv_.DropGeneration(gen_, "generation 1 ended");
  ASSERT_TRUE(got.has_value());
  EXPECT_TRUE(absl::IsAborted(got->status()));
  EXPECT_EQ(got->status().message(), "generation 1 ended");
  EXPECT_TRUE(absl::IsNotFound(kv_.Get(gen_, "k").status()));
}

// A call checked against the live generation just before it ended reaches
// the store after the drop: it is refused at once, not left to wait out its
// deadline on a generation nobody writes again (comm_multiprocess_test's
// abort case hung 50 s on such a wait under load).
TEST_F(KvStoreTest, CallsForADroppedGenerationAreRefusedAtOnce) {
  kv_.DropGeneration(gen_, "generation 1 ended");  // Never used before.
  std::optional<Values> got;
  EXPECT_EQ(kv_.Wait(gen_, {"k"}, clock_.Now() + absl::Seconds(50),
                     [&](Values v) { got = std::move(v); }),
            KvStore::kNoWait);
  ASSERT_TRUE(got.has_value());
  EXPECT_TRUE(absl::IsAborted(got->status()));
  EXPECT_EQ(got->status().message(), "generation 1 ended");
  EXPECT_EQ(kv_.waiter_count(), 0u);
  EXPECT_TRUE(absl::IsAborted(kv_.Set(gen_, "k", "v")));
  EXPECT_TRUE(absl::IsAborted(kv_.Add(gen_, "n", 1).status()));
  EXPECT_TRUE(absl::IsAborted(kv_.Create(gen_, "c", "v")));
  // Older generations too; the next one is untouched.
  EXPECT_TRUE(absl::IsAborted(kv_.Set({"job-1", 0}, "k", "v")));
  EXPECT_TRUE(kv_.Set({"job-1", 2}, "k", "v").ok());
  // A finished job's every generation.
  kv_.DropJob("job-1", -1, "job finished");
  EXPECT_TRUE(absl::IsAborted(kv_.Set({"job-1", 7}, "k", "v")));
  EXPECT_TRUE(kv_.Set({"job-2", 1}, "k", "v").ok());
}

TEST_F(KvStoreTest, DropJobKeepsNewerGenerations) {
  ASSERT_TRUE(kv_.Set({"j", 1}, "k", "1").ok());
  ASSERT_TRUE(kv_.Set({"j", 2}, "k", "2").ok());
  ASSERT_TRUE(kv_.Set({"other", 1}, "k", "3").ok());
  kv_.DropJob("j", 2, "old");
  EXPECT_FALSE(kv_.Get({"j", 1}, "k").ok());
  EXPECT_TRUE(kv_.Get({"j", 2}, "k").ok());
  EXPECT_TRUE(kv_.Get({"other", 1}, "k").ok());
  kv_.DropJob("j", -1, "all");
  EXPECT_FALSE(kv_.Get({"j", 2}, "k").ok());
}

TEST_F(KvStoreTest, AddCountsAndWakesWaiters) {
  std::optional<Values> got;
  kv_.Wait(gen_, {"n"}, clock_.Now() + absl::Seconds(1),
           [&](Values v) { got = std::move(v); });
  EXPECT_EQ(*kv_.Add(gen_, "n", 2), 2);
  ASSERT_TRUE(got.has_value() && got->ok());
  EXPECT_EQ((**got)[0], "2");
  EXPECT_EQ(*kv_.Add(gen_, "n", -5), -3);
  ASSERT_TRUE(kv_.Set(gen_, "s", "text").ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(kv_.Add(gen_, "s", 1).status()));
  ASSERT_TRUE(kv_.Set(gen_, "big", std::to_string(INT64_MAX)).ok());
  EXPECT_TRUE(absl::IsOutOfRange(kv_.Add(gen_, "big", 1).status()));
}

TEST_F(KvStoreTest, RejectsBadKeysAndOversizeValues) {
  EXPECT_TRUE(absl::IsInvalidArgument(kv_.Set(gen_, "", "v")));
  EXPECT_TRUE(
      absl::IsInvalidArgument(kv_.Set(gen_, std::string(513, 'k'), "")));
  KvStore small(&clock_, {.max_key_bytes = 8,
                          .max_value_bytes = 4,
                          .max_keys_per_generation = 2,
                          .max_bytes_per_generation = 6});
  EXPECT_TRUE(absl::IsInvalidArgument(small.Set(gen_, "a", "12345")));
  ASSERT_TRUE(small.Set(gen_, "a", "1234").ok());
  EXPECT_TRUE(absl::IsResourceExhausted(small.Set(gen_, "b", "123")));
  ASSERT_TRUE(small.Set(gen_, "b", "12").ok());
  EXPECT_TRUE(absl::IsResourceExhausted(small.Set(gen_, "c", "")));
  // Replacing a value frees its old bytes.
  EXPECT_TRUE(small.Set(gen_, "a", "1").ok());
  std::optional<Values> got;
  small.Wait(gen_, {}, clock_.Now(), [&](Values v) { got = std::move(v); });
  ASSERT_TRUE(got.has_value());
  EXPECT_TRUE(absl::IsInvalidArgument(got->status()));
}

TEST_F(KvStoreTest, CancelledWaitIsAnsweredAndFreed) {
  std::optional<Values> got;
  const KvStore::WaitId id =
      kv_.Wait(gen_, {"a", "b"}, clock_.Now() + absl::Hours(1),
               [&](Values v) { got = std::move(v); });
  ASSERT_NE(id, KvStore::kNoWait);
  EXPECT_EQ(kv_.waiter_count(), 1u);
  kv_.CancelWait(gen_, id);
  ASSERT_TRUE(got.has_value());
  EXPECT_TRUE(absl::IsCancelled(got->status())) << got->status();
  EXPECT_EQ(kv_.waiter_count(), 0u);
  EXPECT_EQ(clock_.pending_timers(), 0u);
  // Setting its keys later completes nothing; a second cancel is a no-op.
  got.reset();
  ASSERT_TRUE(kv_.Set(gen_, "a", "1").ok());
  ASSERT_TRUE(kv_.Set(gen_, "b", "2").ok());
  kv_.CancelWait(gen_, id);
  EXPECT_FALSE(got.has_value());
}

TEST_F(KvStoreTest, AnsweredWaitHasNoIdAndCancellingItDoesNothing) {
  ASSERT_TRUE(kv_.Set(gen_, "k", "v").ok());
  int calls = 0;
  EXPECT_EQ(kv_.Wait(gen_, {"k", "k"}, clock_.Now() + absl::Seconds(1),
                     [&](Values v) {
                       ++calls;
                       ASSERT_TRUE(v.ok());
                       EXPECT_EQ(*v, (std::vector<std::string>{"v", "v"}));
                     }),
            KvStore::kNoWait);
  EXPECT_EQ(calls, 1);
}

TEST_F(KvStoreTest, AWriteCompletesOnlyTheWaitersOnItsKey) {
  // 1,000 waits on distinct keys plus one on a repeated key: each write
  // completes exactly the waits it was the last missing key of.
  std::vector<std::optional<Values>> got(1000);
  for (int i = 0; i < 1000; ++i) {
    kv_.Wait(gen_, {"k" + std::to_string(i), "shared"},
             clock_.Now() + absl::Hours(1),
             [&got, i](Values v) { got[i] = std::move(v); });
  }
  std::optional<Values> twice;
  kv_.Wait(gen_, {"shared", "shared"}, clock_.Now() + absl::Hours(1),
           [&](Values v) { twice = std::move(v); });
  ASSERT_TRUE(kv_.Set(gen_, "k7", "seven").ok());
  for (const auto& g : got) EXPECT_FALSE(g.has_value());
  ASSERT_TRUE(kv_.Set(gen_, "shared", "s").ok());
  ASSERT_TRUE(twice.has_value() && twice->ok());
  ASSERT_TRUE(got[7].has_value() && got[7]->ok());
  EXPECT_EQ(**got[7], (std::vector<std::string>{"seven", "s"}));
  for (int i = 0; i < 1000; ++i) {
    if (i != 7) EXPECT_FALSE(got[i].has_value()) << i;
  }
  EXPECT_EQ(kv_.waiter_count(), 999u);
  // Rewriting a key that exists wakes nobody.
  ASSERT_TRUE(kv_.Set(gen_, "k7", "again").ok());
  EXPECT_EQ(kv_.waiter_count(), 999u);
  kv_.DropGeneration(gen_, "done");
  EXPECT_EQ(kv_.waiter_count(), 0u);
}

TEST_F(KvStoreTest, PendingWaitsPerGenerationAreBounded) {
  KvStore small(&clock_, {.max_waiters_per_generation = 2});
  std::vector<Values> got;
  for (int i = 0; i < 3; ++i) {
    small.Wait(gen_, {"never"}, clock_.Now() + absl::Hours(1),
               [&](Values v) { got.push_back(std::move(v)); });
  }
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(absl::IsResourceExhausted(got[0].status())) << got[0].status();
  EXPECT_EQ(small.waiter_count(), 2u);
  // Another generation has its own bound.
  small.Wait({"job-1", 2}, {"never"}, clock_.Now() + absl::Hours(1),
             [&](Values v) { got.push_back(std::move(v)); });
  EXPECT_EQ(got.size(), 1u);
}

TEST_F(KvStoreTest, CreateIsOnceAndOutsideTheQuota) {
  KvStore small(&clock_, {.max_keys_per_generation = 1});
  ASSERT_TRUE(small.Set(gen_, "mine", "1").ok());
  EXPECT_TRUE(absl::IsResourceExhausted(small.Set(gen_, "more", "2")));
  std::optional<Values> got;
  small.Wait(gen_, {"id"}, clock_.Now() + absl::Hours(1),
             [&](Values v) { got = std::move(v); });
  ASSERT_TRUE(small.Create(gen_, "id", "the-id").ok());
  ASSERT_TRUE(got.has_value() && got->ok());
  EXPECT_EQ((**got)[0], "the-id");
  EXPECT_TRUE(absl::IsAlreadyExists(small.Create(gen_, "id", "other")));
  EXPECT_EQ(*small.Get(gen_, "id"), "the-id");
}

TEST_F(KvStoreTest, TimedOutWaitLeavesNoIndexBehind) {
  std::optional<Values> got;
  kv_.Wait(gen_, {"x", "y"}, clock_.Now() + absl::Seconds(1),
           [&](Values v) { got = std::move(v); });
  clock_.Advance(absl::Seconds(1));
  ASSERT_TRUE(got.has_value());
  EXPECT_TRUE(absl::IsDeadlineExceeded(got->status()));
  EXPECT_TRUE(kv_.AwaitWaitersBetween(0, 0, absl::ZeroDuration()));
  // Its keys are no longer waited on: setting them is plain.
  got.reset();
  ASSERT_TRUE(kv_.Set(gen_, "x", "1").ok());
  ASSERT_TRUE(kv_.Set(gen_, "y", "1").ok());
  EXPECT_FALSE(got.has_value());
}

TEST_F(KvStoreTest, AWriteCostsTheWaitersOnItsKeyNotEveryPendingWait) {
  // The adversary's flood: 100 waits naming the same 4,096 keys, and 2,000
  // honest waits on keys of their own, all pending.
  std::vector<std::string> flood;
  for (int k = 0; k < 4096; ++k) flood.push_back("flood/" + std::to_string(k));
  int answered = 0;
  for (int w = 0; w < 100; ++w) {
    kv_.Wait(gen_, flood, clock_.Now() + absl::Hours(1),
             [&](Values) { ++answered; });
  }
  for (int r = 0; r < 2000; ++r) {
    kv_.Wait(gen_, {"rank_" + std::to_string(r)}, clock_.Now() + absl::Hours(1),
             [&](Values) { ++answered; });
  }
  // Writes on keys nobody waits for visit no waiter.
  for (int k = 0; k < 1000; ++k) {
    ASSERT_TRUE(kv_.Set(gen_, "other/" + std::to_string(k), "v").ok());
  }
  EXPECT_EQ(kv_.waiter_visits(), 0u);
  // All but the last flood key: each write advances exactly its 100.
  for (int k = 0; k + 1 < 4096; ++k)
    ASSERT_TRUE(kv_.Set(gen_, flood[k], "v").ok());
  EXPECT_EQ(kv_.waiter_visits(), 4095u * 100);
  EXPECT_EQ(answered, 0);
  // A rank's key: one visit, one answer.
  ASSERT_TRUE(kv_.Set(gen_, "rank_7", "addr").ok());
  EXPECT_EQ(kv_.waiter_visits(), 4095u * 100 + 1);
  EXPECT_EQ(answered, 1);
  EXPECT_EQ(kv_.waiter_count(), 2099u);
}

}  // namespace
}  // namespace ringleader
