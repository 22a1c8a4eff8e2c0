#ifndef RINGLEADER_TESTS_TESTING_FAKE_CLOCK_COORDINATOR_H_
#define RINGLEADER_TESTS_TESTING_FAKE_CLOCK_COORDINATOR_H_

// A Coordinator on a FakeClock, driven by direct calls as its workers would
// make them (no gRPC, no threads): the fixture of the tests that follow
// the coordinator's decisions step by step - rendezvous, elastic policy,
// rejoin churn, silent members.

#include <map>
#include <memory>
#include <string>

#include "common/fake_clock.h"
#include "coordinator/caller.h"
#include "coordinator/coordinator.h"
#include "coordinator/state_store.h"
#include "gtest/gtest.h"

namespace ringleader::testing {

class FakeClockCoordinatorTest : public ::testing::Test {
 protected:
  using JoinResult = absl::StatusOr<v1::JoinRendezvousResponse>;

  // The options the coordinator starts with; by default leases never run
  // out (the tests move the clock by minutes).
  virtual CoordinatorOptions Options() const {
    CoordinatorOptions options;
    options.lease = absl::Hours(24);
    return options;
  }

  void SetUp() override {
    store_ = *StateStore::Open(":memory:");
    coordinator_ = std::make_unique<Coordinator>(Options(), store_.get(),
                                                 &clock_, &clock_);
    ASSERT_TRUE(coordinator_->Start().ok());
  }
  void TearDown() override { coordinator_->Stop(); }

  std::string Submit(const v1::JobSpec& spec) {
    v1::SubmitJobRequest r;
    *r.mutable_spec() = spec;
    auto out = coordinator_->user_calls().SubmitJob(r);
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? out->job_id() : "";
  }

  // Registers (remembering the credential: every call below acts for the
  // worker it names) and returns the response.
  absl::StatusOr<v1::RegisterResponse> RegisterAs(
      const v1::RegisterRequest& r) {
    absl::StatusOr<v1::RegisterResponse> reg =
        coordinator_->worker_calls().Register(Caller(), r);
    if (reg.ok()) {
      workers_caller_.Add(reg->worker_id(), reg->worker_token()).IgnoreError();
    }
    return reg;
  }

  // A registration request of a new simulated process.
  v1::RegisterRequest NewProcess() {
    v1::RegisterRequest r;
    r.set_hostname("sim");
    r.set_pid(static_cast<int32_t>(100 + workers_++));
    r.set_device("cpu");
    return r;
  }

  // Registers a worker and takes the assignment its first heartbeat brings.
  std::string AddWorker(const std::string& job) {
    auto reg = RegisterAs(NewProcess());
    EXPECT_TRUE(reg.ok()) << reg.status();
    if (!reg.ok()) return "";
    v1::HeartbeatResponse hb = Heartbeat(reg->worker_id(), "", 0);
    EXPECT_EQ(hb.assignment().job_id(), job);
    return reg->worker_id();
  }

  absl::StatusOr<v1::HeartbeatResponse> TryHeartbeat(const std::string& worker,
                                                     const std::string& job,
                                                     int64_t gen,
                                                     int64_t step = 0,
                                                     int64_t wait_ms = 0) {
    v1::HeartbeatRequest r;
    r.set_worker_id(worker);
    r.set_job_id(job);
    r.set_generation(gen);
    r.set_step(step);
    r.set_collective_wait_ms(wait_ms);
    return coordinator_->worker_calls().Heartbeat(workers_caller_, r);
  }
  v1::HeartbeatResponse Heartbeat(const std::string& worker,
                                  const std::string& job, int64_t gen,
                                  int64_t step = 0, int64_t wait_ms = 0) {
    auto out = TryHeartbeat(worker, job, gen, step, wait_ms);
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? *out : v1::HeartbeatResponse();
  }

  // Joins; the answer lands in joined_[worker] when the generation forms.
  // `keeps_state`: the worker recovers from its peers' memory.
  void Join(const std::string& job, const std::string& worker,
            bool keeps_state = false) {
    joined_.erase(worker);
    v1::JoinRendezvousRequest r;
    r.set_job_id(job);
    r.set_worker_id(worker);
    r.set_keeps_state(keeps_state);
    r.set_timeout_ms(3600'000);
    coordinator_->join_calls().JoinRendezvous(
        workers_caller_, r,
        [this, worker](JoinResult g) { joined_[worker] = std::move(g); });
  }

  absl::Status Report(const std::string& job, int64_t gen, int32_t rank,
                      int64_t step = 1, bool finished = false) {
    v1::ReportProgressRequest r;
    r.set_job_id(job);
    r.set_generation(gen);
    r.set_rank(rank);
    r.set_step(step);
    r.set_loss(0.5);
    r.set_finished(finished);
    return coordinator_->training_calls().ReportProgress(workers_caller_, r);
  }

  v1::Job Job(const std::string& id) { return *coordinator_->jobs().Get(id); }

  FakeClock clock_;
  std::unique_ptr<StateStore> store_;
  std::unique_ptr<Coordinator> coordinator_;
  // Every registered worker's credential; the coordinator finds the one a
  // call needs among them.
  Caller workers_caller_;
  std::map<std::string, JoinResult> joined_;
  int workers_ = 0;
};

}  // namespace ringleader::testing

#endif  // RINGLEADER_TESTS_TESTING_FAKE_CLOCK_COORDINATOR_H_
