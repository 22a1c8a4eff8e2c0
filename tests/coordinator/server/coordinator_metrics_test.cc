// The coordinator's metrics: latency hooks on a FakeClock, then the real
// coordinator scraped over HTTP while two workers rendezvous and meet at a
// barrier.
#include <httplib.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/fake_clock.h"
#include "coordinator/barrier_manager.h"
#include "coordinator/rendezvous.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/in_process_coordinator.h"
#include "tests/testing/job_specs.h"

namespace ringleader {
namespace {

using ::testing::ElementsAre;

TEST(RendezvousLatencyTest, FromFirstJoinOrGenerationEndToFormed) {
  FakeClock clock;
  Rendezvous rdzv(&clock, &clock);
  std::vector<absl::Duration> took;
  rdzv.SetLatencyHook(
      [&](const std::string&, absl::Duration d) { took.push_back(d); });
  ASSERT_TRUE(rdzv.OpenJob("job", {2, 2, absl::ZeroDuration()}, 0).ok());
  auto join = [&](const std::string& w) {
    rdzv.Join("job", {w, "host", "addr", -1}, clock.Now() + absl::Hours(1),
              [](absl::StatusOr<Rendezvous::Generation>) {});
  };
  clock.Advance(absl::Seconds(5));  // Before the first join: not counted.
  join("w1");
  clock.Advance(absl::Seconds(3));
  join("w2");
  ASSERT_THAT(took, ElementsAre(absl::Seconds(3)));

  // A joiner waiting during the live generation: its round starts when
  // the generation ends, not when it joined.
  ASSERT_TRUE(rdzv.OpenJob("job2", {1, 1, absl::ZeroDuration()}, 0).ok());
  auto join2 = [&](const std::string& w) {
    rdzv.Join("job2", {w, "host", "addr", -1}, clock.Now() + absl::Hours(1),
              [](absl::StatusOr<Rendezvous::Generation>) {});
  };
  join2("a");  // Forms at once.
  clock.Advance(absl::Seconds(1));
  join2("b");  // Waits for the next generation.
  clock.Advance(absl::Seconds(10));
  ASSERT_TRUE(rdzv.RemoveWorker("job2", "a", "died"));  // b forms at once.
  EXPECT_THAT(took, ElementsAre(absl::Seconds(3), absl::ZeroDuration(),
                                absl::ZeroDuration()));

  // After an end with nobody waiting, the round starts at the first join.
  clock.Advance(absl::Seconds(1));
  ASSERT_TRUE(rdzv.RemoveWorker("job", "w1", "died"));
  clock.Advance(absl::Seconds(7));
  join("w2");
  clock.Advance(absl::Milliseconds(1500));
  join("w3");
  EXPECT_EQ(took.back(), absl::Milliseconds(1500));
}

TEST(BarrierLatencyTest, FromFirstArrivalToRelease) {
  FakeClock clock;
  BarrierManager barriers(&clock);
  std::vector<absl::Duration> took;
  barriers.SetLatencyHook(&clock, [&](absl::Duration d) { took.push_back(d); });
  const GenerationKey gen{"job", 1};
  std::optional<absl::Status> a, b, c;
  barriers.Arrive(gen, "start", 1, 2, clock.Now() + absl::Seconds(10),
                  [&](absl::Status s) { a = s; });
  clock.Advance(absl::Milliseconds(250));
  barriers.Arrive(gen, "start", 0, 2, clock.Now() + absl::Seconds(10),
                  [&](absl::Status s) { b = s; });
  ASSERT_TRUE(a.has_value() && b.has_value());
  EXPECT_THAT(took, ElementsAre(absl::Milliseconds(250)));
  // A timed-out arrival is not a release.
  barriers.Arrive(gen, "again", 0, 2, clock.Now() + absl::Seconds(1),
                  [&](absl::Status s) { c = s; });
  clock.Advance(absl::Seconds(2));
  ASSERT_TRUE(c.has_value());
  EXPECT_FALSE(c->ok());
  EXPECT_EQ(took.size(), 1u);
}

// The value of the sample line starting with `series` (name and labels).
std::optional<double> Sample(const std::string& body,
                             const std::string& series) {
  const std::string key = "\n" + series + " ";
  const size_t at = ("\n" + body).find(key);
  if (at == std::string::npos) return std::nullopt;
  return std::strtod(body.c_str() + at + key.size() - 1, nullptr);
}

class CoordinatorMetricsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    CoordinatorServerConfig config = testing::InProcessCoordinator::Config();
    config.metrics_listen = "127.0.0.1:0";
    auto c = testing::InProcessCoordinator::Start(config);
    ASSERT_TRUE(c.ok()) << c.status();
    coordinator_ = *std::move(c);
    ASSERT_GT(coordinator_->server().metrics_port(), 0);
  }

  std::string Scrape() {
    httplib::Client http("127.0.0.1", coordinator_->server().metrics_port());
    http.set_connection_timeout(10);
    http.set_read_timeout(10);
    httplib::Result res = http.Get("/metrics");
    EXPECT_TRUE(res) << httplib::to_string(res.error());
    if (!res) return "";
    EXPECT_EQ(res->status, 200);
    return res->body;
  }

  // A registered worker that heartbeated once (and so is assigned).
  WorkerCredential Register(int pid) {
    v1::RegisterRequest reg;
    reg.set_hostname("host");
    reg.set_pid(pid);
    reg.set_device("cpu");
    reg.set_address("127.0.0.1");
    v1::RegisterResponse rr;
    EXPECT_TRUE(coordinator_->workers()
                    .Register(testing::ClientContext().get(), reg, &rr)
                    .ok());
    v1::HeartbeatRequest hb;
    hb.set_worker_id(rr.worker_id());
    v1::HeartbeatResponse hr;
    EXPECT_TRUE(
        coordinator_->workers()
            .Heartbeat(testing::ClientContext(testing::CredentialOf(rr)).get(),
                       hb, &hr)
            .ok());
    return testing::CredentialOf(rr);
  }

  std::unique_ptr<testing::InProcessCoordinator> coordinator_;
};

TEST_F(CoordinatorMetricsTest, ScrapedOverHttpAfterRendezvousAndBarrier) {
  std::string body = Scrape();
  EXPECT_EQ(Sample(body, "ringleader_workers_alive"), 0);
  EXPECT_EQ(Sample(body, "ringleader_jobs{state=\"running\"}"), 0);
  EXPECT_EQ(Sample(body, "ringleader_generations_formed_total"), 0);
  EXPECT_EQ(Sample(body, "ringleader_rendezvous_latency_seconds_count"), 0);

  v1::SubmitJobRequest submit;
  *submit.mutable_spec() = testing::MinimalJobSpec("metered", 2, 2);
  v1::SubmitJobResponse submitted;
  ASSERT_TRUE(coordinator_->users()
                  .SubmitJob(testing::ClientContext().get(), submit, &submitted)
                  .ok());
  const std::string job = submitted.job_id();
  body = Scrape();
  EXPECT_EQ(Sample(body, "ringleader_jobs{state=\"pending\"}"), 1);
  EXPECT_EQ(Sample(body, absl::StrCat("ringleader_job_restarts{job_id=\"", job,
                                      "\",job_name=\"metered\"}")),
            0);

  const WorkerCredential ids[2] = {Register(1), Register(2)};
  EXPECT_EQ(Sample(Scrape(), "ringleader_workers_alive"), 2);

  // Both join (in parallel: the first waits for the second), then both meet
  // at a barrier.
  v1::JoinRendezvousResponse joined[2];
  bool ok[2] = {false, false};
  std::vector<std::thread> threads;
  for (int i = 0; i < 2; ++i) {
    threads.emplace_back([&, i] {
      v1::JoinRendezvousRequest req;
      req.set_job_id(job);
      req.set_worker_id(ids[i].worker_id);
      req.set_timeout_ms(20000);
      ok[i] = coordinator_->workers()
                  .JoinRendezvous(testing::ClientContext(ids[i]).get(), req,
                                  &joined[i])
                  .ok();
    });
  }
  for (auto& t : threads) t.join();
  threads.clear();
  ASSERT_TRUE(ok[0] && ok[1]);
  for (int i = 0; i < 2; ++i) {
    threads.emplace_back([&, i] {
      v1::BarrierRequest b;
      b.set_job_id(job);
      b.set_generation(joined[i].generation());
      b.set_rank(joined[i].rank());
      b.set_name("start");
      b.set_timeout_ms(20000);
      v1::BarrierResponse br;
      ok[i] = coordinator_->workers()
                  .Barrier(testing::ClientContext(ids[i]).get(), b, &br)
                  .ok();
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_TRUE(ok[0] && ok[1]);

  body = Scrape();
  EXPECT_EQ(Sample(body, "ringleader_jobs{state=\"running\"}"), 1);
  EXPECT_EQ(Sample(body, "ringleader_jobs{state=\"pending\"}"), 0);
  EXPECT_EQ(Sample(body, "ringleader_generations_formed_total"), 1);
  EXPECT_EQ(Sample(body, "ringleader_rendezvous_latency_seconds_count"), 1);
  EXPECT_EQ(
      Sample(body, "ringleader_rendezvous_latency_seconds_bucket{le=\"+Inf\"}"),
      1);
  EXPECT_EQ(Sample(body, "ringleader_barrier_latency_seconds_count"), 1);
  const std::optional<double> barrier_sum =
      Sample(body, "ringleader_barrier_latency_seconds_sum");
  ASSERT_TRUE(barrier_sum.has_value());
  EXPECT_GE(*barrier_sum, 0);
  EXPECT_LT(*barrier_sum, 20);
  EXPECT_EQ(Sample(body, "ringleader_job_restarts_total"), 0);

  // A cancelled job leaves the per-job restarts and counts as cancelled.
  v1::CancelJobRequest cancel;
  cancel.set_job_id(job);
  v1::Job cancelled;
  ASSERT_TRUE(coordinator_->users()
                  .CancelJob(testing::ClientContext().get(), cancel, &cancelled)
                  .ok());
  body = Scrape();
  EXPECT_EQ(Sample(body, "ringleader_jobs{state=\"cancelled\"}"), 1);
  EXPECT_EQ(Sample(body, "ringleader_jobs{state=\"running\"}"), 0);
  EXPECT_EQ(Sample(body, absl::StrCat("ringleader_job_restarts{job_id=\"", job,
                                      "\",job_name=\"metered\"}")),
            std::nullopt);
}

}  // namespace
}  // namespace ringleader
