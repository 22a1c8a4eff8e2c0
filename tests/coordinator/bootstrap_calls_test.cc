#include "coordinator/bootstrap_calls.h"

#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/testing/coordinator_managers.h"
#include "tests/testing/job_specs.h"

namespace ringleader {
namespace {

class BootstrapCallsTest : public testing::CoordinatorManagersTest {
 protected:
  void SetUp() override {
    v1::JobSpec spec = testing::MinimalJobSpec("bootstrap", 2, 2);
    spec.set_max_restarts(3);  // An ended generation leaves the job live.
    job_ = Submit(spec);
    members_ = {Register(), Register()};
    gen_ = Form(job_, members_);
    ASSERT_EQ(gen_.number, 1);
  }

  const Caller& RankCaller(int rank) {
    return Holder(members_, gen_, rank).caller;
  }

  template <typename Request>
  Request For(Request r) {
    r.set_job_id(job_);
    r.set_generation(1);
    return r;
  }

  v1::KvSetRequest Set(const std::string& key, const std::string& value) {
    v1::KvSetRequest r;
    r.set_key(key);
    r.set_value(value);
    return For(r);
  }

  v1::PublishNcclIdRequest Publish(int rank, int64_t comm_index = 0) {
    v1::PublishNcclIdRequest r;
    r.set_rank(rank);
    r.set_comm_index(comm_index);
    r.set_unique_id(std::string(128, 'n'));
    return For(r);
  }

  // A barrier arrival of `rank`; its outcome lands in arrived_[rank].
  Canceller Arrive(int rank) {
    v1::BarrierRequest r;
    r.set_rank(rank);
    r.set_name("setup");
    return calls_.Barrier(RankCaller(rank), For(r),
                          [this, rank](absl::Status s) { arrived_[rank] = s; });
  }

  KvStore kv_{&clock_};
  BarrierManager barriers_{&clock_};
  CallerChecks checks_{workers_, rendezvous_, jobs_};
  BootstrapCalls calls_{
      checks_,   rendezvous_, kv_,
      barriers_, &clock_,     WaitLimits{absl::Seconds(10), absl::Minutes(1)}};
  std::string job_;
  std::vector<Worker> members_;
  Rendezvous::Generation gen_;
  std::map<int, absl::Status> arrived_;
};

TEST_F(BootstrapCallsTest, MembersShareTheGenerationsKeyValueStore) {
  ASSERT_TRUE(calls_.KvSet(RankCaller(0), Set("addr/0", "10.0.0.1")).ok());
  v1::KvGetRequest get;
  get.set_key("addr/0");
  absl::StatusOr<v1::KvGetResponse> got = calls_.KvGet(RankCaller(1), For(get));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(got->found());
  EXPECT_EQ(got->value(), "10.0.0.1");
  get.set_key("absent");
  EXPECT_FALSE(calls_.KvGet(RankCaller(1), For(get))->found());
  v1::KvAddRequest add;
  add.set_key("count");
  add.set_delta(2);
  ASSERT_TRUE(calls_.KvAdd(RankCaller(0), For(add)).ok());
  EXPECT_EQ(calls_.KvAdd(RankCaller(1), For(add))->value(), 4);
  // Not a member: refused.
  EXPECT_TRUE(absl::IsPermissionDenied(
      calls_.KvSet(Register().caller, Set("addr/9", "x"))));
}

TEST_F(BootstrapCallsTest, ReservedKeysAreTheCoordinators) {
  EXPECT_TRUE(absl::IsPermissionDenied(calls_.KvSet(
      RankCaller(0), Set("__ringleader/nccl_id/0", std::string(128, 'x')))));
  v1::KvAddRequest add;
  add.set_key("__ringleader/anything");
  EXPECT_TRUE(
      absl::IsPermissionDenied(calls_.KvAdd(RankCaller(0), For(add)).status()));
}

TEST_F(BootstrapCallsTest, RankZeroPublishesTheNcclIdOnceAndTheOthersFetchIt) {
  std::optional<absl::StatusOr<v1::FetchNcclIdResponse>> fetched;
  v1::FetchNcclIdRequest fetch;
  fetch.set_rank(1);
  Canceller cancel =
      calls_.FetchNcclId(RankCaller(1), For(fetch),
                         [&](absl::StatusOr<v1::FetchNcclIdResponse> r) {
                           fetched = std::move(r);
                         });
  EXPECT_NE(cancel, nullptr);
  EXPECT_FALSE(fetched.has_value());  // Waits for rank 0.
  EXPECT_TRUE(absl::IsPermissionDenied(
      calls_.PublishNcclId(RankCaller(1), Publish(1))));
  v1::PublishNcclIdRequest short_id = Publish(0);
  short_id.set_unique_id("short");
  EXPECT_TRUE(
      absl::IsInvalidArgument(calls_.PublishNcclId(RankCaller(0), short_id)));
  ASSERT_TRUE(calls_.PublishNcclId(RankCaller(0), Publish(0)).ok());
  ASSERT_TRUE(fetched.has_value() && fetched->ok());
  EXPECT_EQ((*fetched)->unique_id(), std::string(128, 'n'));
  EXPECT_TRUE(
      absl::IsAlreadyExists(calls_.PublishNcclId(RankCaller(0), Publish(0))));
  // Another communicator has an id of its own.
  EXPECT_TRUE(calls_.PublishNcclId(RankCaller(0), Publish(0, 1)).ok());
}

// Issue 49: comm_index is int64 on the wire and is checked and keyed at
// that width; through int32 INT64_MAX read as -1 and 2^32 + 5 as 5.
TEST_F(BootstrapCallsTest, CommIndexIsKeyedAtItsWireWidth) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kWraps = (int64_t{1} << 32) + 5;
  ASSERT_TRUE(calls_.PublishNcclId(RankCaller(0), Publish(0, kMax)).ok());
  ASSERT_TRUE(calls_.PublishNcclId(RankCaller(0), Publish(0, kWraps)).ok());
  // Communicator 5 is not 2^32 + 5: its id is its own.
  ASSERT_TRUE(calls_.PublishNcclId(RankCaller(0), Publish(0, 5)).ok());
  EXPECT_TRUE(absl::IsAlreadyExists(
      calls_.PublishNcclId(RankCaller(0), Publish(0, kWraps))));
  EXPECT_TRUE(absl::IsInvalidArgument(
      calls_.PublishNcclId(RankCaller(0), Publish(0, -1))));
  EXPECT_TRUE(absl::IsInvalidArgument(calls_.PublishNcclId(
      RankCaller(0), Publish(0, std::numeric_limits<int64_t>::min()))));
  for (int64_t index : {kMax, kWraps}) {
    std::optional<absl::StatusOr<v1::FetchNcclIdResponse>> fetched;
    v1::FetchNcclIdRequest fetch;
    fetch.set_rank(1);
    fetch.set_comm_index(index);
    calls_.FetchNcclId(RankCaller(1), For(fetch),
                       [&](absl::StatusOr<v1::FetchNcclIdResponse> r) {
                         fetched = std::move(r);
                       });
    ASSERT_TRUE(fetched.has_value() && fetched->ok()) << index;
  }
}

TEST_F(BootstrapCallsTest, ABarrierReleasesOnceEveryRankArrived) {
  Arrive(0);
  EXPECT_TRUE(arrived_.empty());
  Arrive(1);
  ASSERT_EQ(arrived_.size(), 2u);
  EXPECT_TRUE(arrived_[0].ok());
  EXPECT_TRUE(arrived_[1].ok());
}

TEST_F(BootstrapCallsTest, AWithdrawnWaitIsAnsweredCancelled) {
  std::optional<absl::Status> outcome;
  v1::KvWaitRequest wait;
  wait.add_keys("never");
  Canceller cancel = calls_.KvWait(
      RankCaller(0), For(wait),
      [&](absl::StatusOr<v1::KvWaitResponse> r) { outcome = r.status(); });
  ASSERT_NE(cancel, nullptr);
  cancel();
  ASSERT_TRUE(outcome.has_value());
  EXPECT_TRUE(absl::IsCancelled(*outcome)) << *outcome;
  EXPECT_EQ(kv_.waiter_count(), 0u);
  // The barrier's too: the rank may arrive again.
  Arrive(0)();
  EXPECT_TRUE(absl::IsCancelled(arrived_[0]));
  Arrive(0);
  Arrive(1);
  EXPECT_TRUE(arrived_[0].ok());
}

TEST_F(BootstrapCallsTest, AWaitEndsAtItsDeadlineOrTheDefault) {
  std::optional<absl::Status> outcome;
  v1::KvWaitRequest wait;
  wait.add_keys("never");  // No timeout: the default, 10 s here.
  calls_.KvWait(
      RankCaller(0), For(wait),
      [&](absl::StatusOr<v1::KvWaitResponse> r) { outcome = r.status(); });
  clock_.Advance(absl::Seconds(9));
  EXPECT_FALSE(outcome.has_value());
  clock_.Advance(absl::Seconds(1));
  ASSERT_TRUE(outcome.has_value());
  EXPECT_TRUE(absl::IsDeadlineExceeded(*outcome)) << *outcome;
}

TEST_F(BootstrapCallsTest, TheCallsOfAnEndedGenerationAreAborted) {
  rendezvous_.RemoveWorker(job_, members_[1].id, "gone");
  EXPECT_TRUE(absl::IsAborted(calls_.KvSet(RankCaller(0), Set("k", "v"))));
  EXPECT_TRUE(absl::IsAborted(calls_.PublishNcclId(RankCaller(0), Publish(0))));
  Arrive(0);
  EXPECT_TRUE(absl::IsAborted(arrived_[0]));
}

TEST_F(BootstrapCallsTest, AWaitNamesAtMost4096Keys) {
  std::optional<absl::Status> outcome;
  v1::KvWaitRequest wait;
  for (int i = 0; i <= 4096; ++i) wait.add_keys(absl::StrCat("k", i));
  EXPECT_EQ(calls_.KvWait(RankCaller(0), For(wait),
                          [&](absl::StatusOr<v1::KvWaitResponse> r) {
                            outcome = r.status();
                          }),
            nullptr);
  ASSERT_TRUE(outcome.has_value());
  EXPECT_TRUE(absl::IsInvalidArgument(*outcome));
}

}  // namespace
}  // namespace ringleader
