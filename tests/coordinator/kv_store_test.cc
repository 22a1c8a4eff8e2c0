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

}  // namespace
}  // namespace ringleader
