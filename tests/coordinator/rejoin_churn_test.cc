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

#include "common/fake_clock.h"
#include "coordinator/coordinator.h"
#include "coordinator/state_store.h"
#include "gtest/gtest.h"
#include "tests/testing/job_specs.h"

namespace ringleader {
namespace {

using JoinResult = absl::StatusOr<v1::JoinRendezvousResponse>;

class RejoinChurnTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = *StateStore::Open(":memory:");
    CoordinatorOptions options;
    // Leases never run out: the workers here are slow, not dead.
    options.lease = absl::Hours(24);
    coordinator_ =
        std::make_unique<Coordinator>(options, store_.get(), &clock_, &clock_);
    ASSERT_TRUE(coordinator_->Start().ok());
  }
  void TearDown() override { coordinator_->Stop(); }

  std::string Submit(const v1::JobSpec& spec) {
    v1::SubmitJobRequest r;
    *r.mutable_spec() = spec;
    auto out = coordinator_->SubmitJob(r);
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? out->job_id() : "";
  }

  std::string AddWorker(const std::string& job) {
    v1::RegisterRequest r;
    r.set_hostname("sim");
    r.set_pid(static_cast<int32_t>(100 + workers_++));
    r.set_device("cpu");
    auto reg = RegisterAs(r);
    EXPECT_TRUE(reg.ok()) << reg.status();
    v1::HeartbeatRequest hb;
    hb.set_worker_id(reg->worker_id());
    auto out = coordinator_->Heartbeat(workers_caller_, hb);
    EXPECT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(out->assignment().job_id(), job);
    return reg->worker_id();
  }

  void Join(const std::string& job, const std::string& worker) {
    joined_.erase(worker);
    v1::JoinRendezvousRequest r;
    r.set_job_id(job);
    r.set_worker_id(worker);
    r.set_timeout_ms(3600'000);
    coordinator_->JoinRendezvous(
        workers_caller_, r,
        [this, worker](JoinResult g) { joined_[worker] = std::move(g); });
  }

  // `worker` of generation `gen` waits on a key nobody sets; when the
  // generation is dropped, it rejoins 50 ms later.
  void RejoinWhenDropped(const std::string& job, const std::string& worker,
                         int64_t gen) {
    v1::KvWaitRequest r;
    r.set_job_id(job);
    r.set_generation(gen);
    r.add_keys("never");
    r.set_timeout_ms(3600'000);
    coordinator_->KvWait(
        workers_caller_, r,
        [this, job, worker](absl::StatusOr<v1::KvWaitResponse> got) {
          EXPECT_TRUE(absl::IsAborted(got.status())) << got.status();
          clock_.Advance(absl::Milliseconds(50));
          Join(job, worker);
        });
  }

  absl::Status Report(const std::string& job, int64_t gen, int32_t rank) {
    v1::ReportProgressRequest r;
    r.set_job_id(job);
    r.set_generation(gen);
    r.set_rank(rank);
    r.set_step(1);
    r.set_loss(0.5);
    return coordinator_->ReportProgress(workers_caller_, r);
  }

  v1::Job Job(const std::string& id) { return *coordinator_->jobs().Get(id); }

  // Every registered worker's credential: the tests act for each worker in
  // turn, and the coordinator finds the one a call needs among them.
  Caller workers_caller_;
  absl::StatusOr<v1::RegisterResponse> RegisterAs(
      const v1::RegisterRequest& r) {
    absl::StatusOr<v1::RegisterResponse> reg =
        coordinator_->Register(Caller(), r);
    if (reg.ok()) {
      workers_caller_.Add(reg->worker_id(), reg->worker_token()).IgnoreError();
    }
    return reg;
  }

  FakeClock clock_;
  std::unique_ptr<StateStore> store_;
  std::unique_ptr<Coordinator> coordinator_;
  std::map<std::string, JoinResult> joined_;
  int workers_ = 0;
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
