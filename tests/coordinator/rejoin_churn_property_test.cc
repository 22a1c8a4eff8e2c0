// Rejoin under churn (issue 17, point 9), as a property over the Rendezvous
// and the JobManager wired as the Coordinator wires them: seeded random
// interleavings of join, leave/die, cancelled joins, scale-ups and 50 ms
// clock steps. The rendezvous runs its hooks outside its lock, on the thread
// of the call that changed it, so the hooks of different calls may reach the
// job manager in any order (each call's own in order). The harness keeps
// each call's hooks as a "thread" and delivers them in a random order, with
// other calls in between. Whenever every hook has been delivered, the job is
// RUNNING exactly the rendezvous's live generation, and a rank of it can
// report; once every worker has rejoined, the job settles RUNNING.
#include <cstdint>
#include <deque>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/fake_clock.h"
#include "coordinator/job_manager.h"
#include "coordinator/rendezvous.h"
#include "coordinator/state_store.h"
#include "gtest/gtest.h"
#include "tests/testing/job_specs.h"

namespace ringleader {
namespace {

constexpr int kSeeds = 300;
constexpr int kStepsPerSeed = 60;
constexpr int kWorkers = 5;  // One more than max_workers: a spare waits.
constexpr absl::Duration kStep = absl::Milliseconds(50);

struct Event {
  enum Kind { kFormed, kEnded, kResized } kind;
  int64_t generation = 0;
  int32_t world_size = 0;
};

class Harness {
 public:
  explicit Harness(uint32_t seed) : rng_(seed) {
    store_ = *StateStore::Open(":memory:");
    jobs_ = std::make_unique<JobManager>(store_.get(), &clock_);
    rendezvous_ = std::make_unique<Rendezvous>(&clock_, &clock_);
    rendezvous_->SetFormedHook(
        [this](const std::string&, const Rendezvous::Generation& g) {
          Record({Event::kFormed, g.number,
                  static_cast<int32_t>(g.members.size())});
        });
    rendezvous_->SetEndedHook(
        [this](const std::string&, int64_t g, const std::string&) {
          Record({Event::kEnded, g, 0});
        });
    rendezvous_->SetResizedHook(
        [this](const std::string&, int64_t g, const std::string&) {
          Record({Event::kResized, g, 0});
        });
    v1::JobSpec spec = testing::MinimalJobSpec("churn", 2, 4);
    spec.set_max_restarts(1000);  // Far more than 60 steps can spend.
    job_ = jobs_->Submit(spec)->job_id();
    Rendezvous::Config config;
    config.min_workers = 2;
    config.max_workers = 4;
    config.last_call = absl::Milliseconds(100);
    rendezvous_->OpenJob(job_, config, 0).IgnoreError();
    for (int i = 0; i < kWorkers; ++i) {
      workers_.push_back(absl::StrCat("w", i));
    }
  }

  // One random step; returns what it did, for the failure trace.
  std::string Step() {
    const std::string& w = workers_[Pick(kWorkers)];
    switch (Pick(8)) {
      case 0:
      case 1:
        Join(w);
        return "join " + w;
      case 2:
        Call([&] { rendezvous_->RemoveWorker(job_, w, "died"); });
        return "die " + w;
      case 3:
        Call([&] { rendezvous_->CancelJoin(job_, w, waiter_[w]); });
        return "cancel " + w;
      case 4:
        Call([&] {
          rendezvous_->Grow(job_, rendezvous_->LastGeneration(job_));
        });
        return "grow";
      case 5:
        Call([&] { clock_.Advance(kStep); });
        return "advance";
      default:
        DeliverOne();
        return "deliver";
    }
  }

  // Every worker rejoins, one after the other, kStep apart, while hooks
  // still arrive late; then the last call closes.
  void RejoinAll(std::string& trace) {
    for (const std::string& w : workers_) {
      Join(w);
      Call([&] { clock_.Advance(kStep); });
      if (Pick(2) == 0) DeliverOne();
      absl::StrAppend(&trace, "rejoin ", w, "; ");
    }
    DeliverAll();
    Call([&] { clock_.Advance(absl::Seconds(1)); });
  }

  void DeliverAll() {
    while (Pending()) DeliverOne();
  }

  bool Pending() const {
    for (const auto& t : threads_) {
      if (!t.empty()) return true;
    }
    return false;
  }

  // The property, once every hook has been delivered.
  void CheckSettled(const std::string& trace) {
    ASSERT_FALSE(Pending());
    absl::StatusOr<v1::Job> job = jobs_->Get(job_);
    ASSERT_TRUE(job.ok()) << job.status();
    absl::StatusOr<Rendezvous::Generation> live = rendezvous_->Live(job_);
    if (job->state() == v1::JOB_STATE_RUNNING) {
      ASSERT_TRUE(live.ok()) << "RUNNING generation " << job->generation()
                             << " but none is live; " << trace;
      ASSERT_EQ(job->generation(), live->number) << trace;
    }
    if (!live.ok()) return;
    ASSERT_EQ(job->state(), v1::JOB_STATE_RUNNING)
        << "generation " << live->number << " is live; " << job->message()
        << "; " << trace;
    v1::ReportProgressRequest r;
    r.set_job_id(job_);
    r.set_generation(live->number);
    r.set_step(1);
    absl::Status s = jobs_->ReportProgress(r, live->members[0].worker_id);
    ASSERT_TRUE(s.ok()) << s << "; " << trace;
    ++running_checks_;
  }

  // How often CheckSettled saw a live generation: the property is not
  // vacuous.
  int running_checks() const { return running_checks_; }

  bool Live() const { return rendezvous_->Live(job_).ok(); }

 private:
  size_t Pick(size_t n) {
    return std::uniform_int_distribution<size_t>(0, n - 1)(rng_);
  }

  void Join(const std::string& w) {
    jobs_->OnJoin(job_).IgnoreError();  // As the Coordinator does first.
    Call([&] {
      const uint64_t id = rendezvous_->Join(
          job_, {w, "sim", w + ":1", -1}, clock_.Now() + absl::Hours(1),
          [](const absl::StatusOr<Rendezvous::Generation>&) {});
      if (id != 0) waiter_[w] = id;
    });
  }

  // Runs one rendezvous call as its own "thread": the hooks it runs are
  // kept for later delivery, in order.
  template <typename Fn>
  void Call(Fn fn) {
    threads_.emplace_back();
    current_ = threads_.size() - 1;
    fn();
    current_ = -1;
  }

  void Record(const Event& e) {
    ASSERT_GE(current_, 0);
    threads_[current_].push_back(e);
  }

  // The next hook of a random thread, as the job manager would get it from
  // the Coordinator.
  void DeliverOne() {
    std::vector<size_t> ready;
    for (size_t i = 0; i < threads_.size(); ++i) {
      if (!threads_[i].empty()) ready.push_back(i);
    }
    if (ready.empty()) return;
    std::deque<Event>& t = threads_[ready[Pick(ready.size())]];
    const Event e = t.front();
    t.pop_front();
    switch (e.kind) {
      case Event::kFormed:
        jobs_->OnGenerationFormed(job_, e.generation, e.world_size)
            .IgnoreError();
        break;
      case Event::kEnded:
        jobs_->OnGenerationEnded(job_, e.generation, "ended").IgnoreError();
        break;
      case Event::kResized:
        jobs_->OnGenerationResized(job_, e.generation, "grown").IgnoreError();
        break;
    }
  }

  std::mt19937 rng_;
  FakeClock clock_;
  std::unique_ptr<StateStore> store_;
  std::unique_ptr<JobManager> jobs_;
  std::unique_ptr<Rendezvous> rendezvous_;
  std::string job_;
  std::vector<std::string> workers_;
  absl::flat_hash_map<std::string, uint64_t> waiter_;
  std::deque<std::deque<Event>> threads_;
  int current_ = -1;
  int running_checks_ = 0;
};

TEST(RejoinChurnPropertyTest, TheJobRunsTheLiveGenerationAndSettles) {
  int running_checks = 0;
  for (uint32_t seed = 1; seed <= kSeeds; ++seed) {
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    Harness h(seed);
    std::string trace;
    for (int i = 0; i < kStepsPerSeed; ++i) {
      absl::StrAppend(&trace, h.Step(), "; ");
      if (!h.Pending()) {
        h.CheckSettled(trace);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
    h.DeliverAll();
    h.CheckSettled(trace);
    if (::testing::Test::HasFatalFailure()) return;
    h.RejoinAll(trace);
    h.DeliverAll();
    ASSERT_TRUE(h.Live()) << "no generation formed after all rejoined; "
                          << trace;
    h.CheckSettled(trace);
    if (::testing::Test::HasFatalFailure()) return;
    running_checks += h.running_checks();
  }
  // Each seed ends RUNNING, and most see a live generation mid-way too.
  EXPECT_GT(running_checks, 2 * kSeeds);
}

}  // namespace
}  // namespace ringleader
