// Rejoin under churn (issue 17, point 9), through the Coordinator on a
// FakeClock: members rejoin 50 ms apart while the ended hook of their old
// generation is still dropping it. The rendezvous runs its hooks outside its
// lock, so the formed hook of the new generation can be applied before the
// ended hook of the old one; the job must still end up RUNNING the new one.
//
// "Slow to drop" is made deterministic without threads: dropping the old
// generation fails the members' pending KV waits, and each member rejoins
// from that callback, i.e. while the ended hook is still running, as another
// RPC thread would.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/fake_clock_coordinator.h"
#include "tests/testing/job_specs.h"

namespace ringleader {
namespace {

// Leases never run out (the fixture's default): the workers here are slow,
// not dead.
class RejoinChurnTest : public testing::FakeClockCoordinatorTest {
 protected:
  // `worker` of generation `gen` waits on a key nobody sets; when the
  // generation is dropped, it rejoins 50 ms later.
  void RejoinWhenDropped(const std::string& job, const std::string& worker,
                         int64_t gen) {
    v1::KvWaitRequest r;
    r.set_job_id(job);
    r.set_generation(gen);
    r.add_keys("never");
    r.set_timeout_ms(3600'000);
    coordinator_->bootstrap_calls().KvWait(
        workers_caller_, r,
        [this, job, worker](absl::StatusOr<v1::KvWaitResponse> got) {
          EXPECT_TRUE(absl::IsAborted(got.status())) << got.status();
          clock_.Advance(absl::Milliseconds(50));
          Join(job, worker);
        });
  }
};

TEST_F(RejoinChurnTest, MembersRejoiningWhileTheOldGenerationDropsSettle) {
  v1::JobSpec spec = testing::MinimalJobSpec("churn", 3, 3);
  spec.set_max_restarts(5);
  const std::string job = Submit(spec);
  const std::vector<std::string> w = {AddWorker(job), AddWorker(job),
                                      AddWorker(job)};
  for (const std::string& id : w) Join(job, id);
  ASSERT_TRUE(joined_[w[0]].ok()) << joined_[w[0]].status();
  ASSERT_EQ(joined_[w[0]]->generation(), 1);
  ASSERT_EQ(Job(job).state(), v1::JOB_STATE_RUNNING);
  RejoinWhenDropped(job, w[1], 1);
  RejoinWhenDropped(job, w[2], 1);

  // w[0] restarted and rejoins: generation 1 ends, and its drop brings the
  // other two back before the job manager hears that generation 1 ended.
  Join(job, w[0]);

  for (const std::string& id : w) {
    ASSERT_EQ(joined_.count(id), 1u) << id;
    ASSERT_TRUE(joined_[id].ok()) << joined_[id].status();
    EXPECT_EQ(joined_[id]->generation(), 2);
  }
  auto live = coordinator_->rendezvous().Live(job);
  ASSERT_TRUE(live.ok()) << live.status();
  EXPECT_EQ(live->number, 2);
  const v1::Job after = Job(job);
  EXPECT_EQ(after.state(), v1::JOB_STATE_RUNNING) << after.message();
  EXPECT_EQ(after.generation(), 2);
  EXPECT_EQ(after.restarts(), 1);  // Generation 1's end still counts.
  for (int32_t rank = 0; rank < 3; ++rank) {
    EXPECT_TRUE(Report(job, 2, rank).ok()) << Report(job, 2, rank);
  }
}

}  // namespace
}  // namespace ringleader
