#ifndef RINGLEADER_TESTS_TESTING_COORDINATOR_MANAGERS_H_
#define RINGLEADER_TESTS_TESTING_COORDINATOR_MANAGERS_H_

// The coordinator's managers on a FakeClock (which is also their timer
// queue), without the Coordinator: the fixture of the unit tests of the
// objects that work over them (the caller checks, the job assigner, the
// generation facts and the calls). The managers are real, with the least of
// the Coordinator's wiring that their answers rely on: a formed generation
// makes its job RUNNING it, an ended one RESTARTING, and a finished job
// closes its rendezvous.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "common/fake_clock.h"
#include "coordinator/caller.h"
#include "coordinator/job_manager.h"
#include "coordinator/rendezvous.h"
#include "coordinator/state_store.h"
#include "coordinator/worker_registry.h"
#include "gtest/gtest.h"
#include "ringleader/v1/job.pb.h"

namespace ringleader::testing {

class CoordinatorManagersTest : public ::testing::Test {
 protected:
  // A registered worker and a caller that carries its credential.
  struct Worker {
    std::string id;
    Caller caller;
  };

  static constexpr absl::Duration kLease = absl::Seconds(3);

  CoordinatorManagersTest() {
    rendezvous_.SetFormedHook(
        [this](const std::string& job_id, const Rendezvous::Generation& gen) {
          Formed(job_id, gen);
        });
    rendezvous_.SetEndedHook([this](const std::string& job_id, int64_t gen,
                                    const std::string& reason) {
      ASSERT_TRUE(jobs_.OnGenerationEnded(job_id, gen, reason).ok());
    });
    jobs_.SetFinishedHook([this](const v1::Job& job) {
      rendezvous_.CloseJob(job.job_id(),
                           absl::FailedPreconditionError("job finished"));
    });
  }

  // What a formed generation changes besides the rendezvous.
  virtual void Formed(const std::string& job_id,
                      const Rendezvous::Generation& gen) {
    ASSERT_TRUE(
        jobs_
            .OnGenerationFormed(job_id, gen.number,
                                static_cast<int32_t>(gen.members.size()))
            .ok());
  }

  // Submits `spec` and opens its rendezvous as the spec says.
  std::string Submit(const v1::JobSpec& spec) {
    absl::StatusOr<v1::Job> job = jobs_.Submit(spec);
    EXPECT_TRUE(job.ok()) << job.status();
    if (!job.ok()) return "";
    Rendezvous::Config config;
    config.min_workers = spec.min_workers();
    config.max_workers = spec.max_workers();
    config.last_call = absl::Milliseconds(spec.rendezvous_last_call_ms());
    EXPECT_TRUE(rendezvous_.OpenJob(job->job_id(), config, 0).ok());
    return job->job_id();
  }

  // A worker of a new process.
  Worker Register() {
    v1::RegisterRequest r;
    r.set_hostname("host");
    r.set_pid(static_cast<int32_t>(100 + registered_++));
    r.set_device("cpu");
    r.set_address("127.0.0.1");
    absl::StatusOr<WorkerRegistry::Registration> reg = workers_.Register(r);
    EXPECT_TRUE(reg.ok()) << reg.status();
    if (!reg.ok()) return {};
    return {
        reg->response.worker_id(),
        Caller::Of(reg->response.worker_id(), reg->response.worker_token())};
  }

  // `worker` assigned to `job_id` joins its rendezvous (keeping its state
  // when `keeps_state`); the answer lands in joined_[worker.id].
  void Join(const std::string& job_id, const Worker& worker,
            bool keeps_state = false) {
    ASSERT_TRUE(workers_.SetJob(worker.id, job_id).ok());
    ASSERT_TRUE(jobs_.OnJoin(job_id).ok());
    Rendezvous::Member m;
    m.worker_id = worker.id;
    m.hostname = "host";
    m.keeps_state = keeps_state;
    rendezvous_.Join(job_id, m, clock_.Now() + absl::Hours(1),
                     [this, id = worker.id](
                         const absl::StatusOr<Rendezvous::Generation>& gen) {
                       joined_[id] = gen;
                     });
  }

  // Joins every worker of `members` and returns the generation they formed
  // (its ranks follow the sorted worker ids).
  Rendezvous::Generation Form(const std::string& job_id,
                              const std::vector<Worker>& members) {
    for (const Worker& w : members) Join(job_id, w);
    clock_.Advance(absl::ZeroDuration());  // A last call of 0 closes now.
    auto it = joined_.find(members.front().id);
    EXPECT_TRUE(it != joined_.end() && it->second.ok());
    return it != joined_.end() && it->second.ok() ? *it->second
                                                  : Rendezvous::Generation();
  }

  // The worker holding `rank` in `gen`.
  const Worker& Holder(const std::vector<Worker>& members,
                       const Rendezvous::Generation& gen, int rank) const {
    for (const Worker& w : members) {
      if (w.id == gen.members[rank].worker_id) return w;
    }
    return members.front();
  }

  v1::Job Job(const std::string& job_id) const { return *jobs_.Get(job_id); }

  FakeClock clock_;
  std::unique_ptr<StateStore> store_ = *StateStore::Open(":memory:");
  JobManager jobs_{store_.get(), &clock_};
  WorkerRegistry workers_{&clock_, {kLease, kLease / 3}};
  Rendezvous rendezvous_{&clock_, &clock_};
  std::map<std::string, absl::StatusOr<Rendezvous::Generation>> joined_;
  int registered_ = 0;
};

}  // namespace ringleader::testing

#endif  // RINGLEADER_TESTS_TESTING_COORDINATOR_MANAGERS_H_
