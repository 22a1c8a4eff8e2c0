// The coordinator behind real gRPC on a free loopback port, driven by
// simulated workers (real clients of the wire protocol).
#include <atomic>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "common/worker_credential.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "ringleader/v1/user_service.grpc.pb.h"
#include "ringleader/v1/worker_service.grpc.pb.h"
#include "tests/testing/eventually.h"
#include "tests/testing/in_process_coordinator.h"
#include "tests/testing/job_specs.h"

namespace ringleader {
namespace {

using v1::UserService;
using v1::WorkerService;

v1::JobSpec Spec(const std::string& name, int min, int max) {
  v1::JobSpec s = testing::MinimalJobSpec(name, min, max);
  s.mutable_dataset()->set_synthetic_train_size(1000);
  s.mutable_dataset()->set_synthetic_test_size(100);
  s.set_epochs(2);
  s.set_rendezvous_last_call_ms(0);
  return s;
}

int ThreadCount() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  }
  return -1;
}

// Counts completions of async calls; waits with a bound, never sleeps.
class Latch {
 public:
  void Done(const grpc::Status& s) {
    absl::MutexLock lock(&mu_);
    ++done_;
    if (s.ok())
      ++ok_;
    else
      last_error_ = s.error_message();
  }
  bool WaitFor(int n, absl::Duration timeout) {
    absl::MutexLock lock(&mu_);
    auto reached = [this, n]()
                       ABSL_SHARED_LOCKS_REQUIRED(mu_) { return done_ >= n; };
    return mu_.AwaitWithTimeout(absl::Condition(&reached), timeout);
  }
  int ok() {
    absl::MutexLock lock(&mu_);
    return ok_;
  }
  int done() {
    absl::MutexLock lock(&mu_);
    return done_;
  }
  std::string last_error() {
    absl::MutexLock lock(&mu_);
    return last_error_;
  }

 private:
  absl::Mutex mu_;
  int done_ ABSL_GUARDED_BY(mu_) = 0;
  int ok_ ABSL_GUARDED_BY(mu_) = 0;
  std::string last_error_ ABSL_GUARDED_BY(mu_);
};

class CoordinatorServiceTest : public ::testing::Test {
 protected:
  void StartServer(absl::Duration lease = absl::Seconds(30),
                   absl::Duration silent_member_limit = absl::Seconds(30)) {
    CoordinatorServerConfig config =
        testing::InProcessCoordinator::Config(lease);
    config.options.silent_member_limit = silent_member_limit;
    config.max_message_bytes = 1 << 20;
    auto coordinator = testing::InProcessCoordinator::Start(config);
    ASSERT_TRUE(coordinator.ok()) << coordinator.status();
    coordinator_ = *std::move(coordinator);
    for (int i = 0; i < 8; ++i) {
      workers_.push_back(WorkerService::NewStub(coordinator_->NewChannel()));
    }
    users_ = &coordinator_->users();
  }

  std::unique_ptr<grpc::ClientContext> Ctx(
      absl::Duration d = absl::Seconds(30)) {
    return testing::ClientContext(d);
  }
  // A context carrying `worker`'s credential; a worker this test did not
  // register shows a made-up token, so its id is what gets refused.
  std::unique_ptr<grpc::ClientContext> As(
      const std::string& worker, absl::Duration d = absl::Seconds(30)) {
    auto it = credentials_.find(worker);
    return testing::ClientContext(it != credentials_.end()
                                      ? it->second
                                      : WorkerCredential{worker, "made-up"},
                                  d);
  }
  // Keeps the credential a registration gave; returns the worker's id.
  std::string Remember(const v1::RegisterResponse& registered) {
    credentials_[registered.worker_id()] = testing::CredentialOf(registered);
    return registered.worker_id();
  }

  std::string Submit(const v1::JobSpec& spec) {
    v1::SubmitJobRequest req;
    *req.mutable_spec() = spec;
    v1::SubmitJobResponse resp;
    grpc::Status s = users_->SubmitJob(Ctx().get(), req, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return resp.job_id();
  }

  // Registers a worker and heartbeats until it is assigned `job_id`.
  std::string RegisterAndAssign(int pid, const std::string& job_id) {
    v1::RegisterRequest reg;
    reg.set_hostname("sim-host");
    reg.set_pid(pid);
    reg.set_device("cpu");
    reg.set_address("127.0.0.1");
    v1::RegisterResponse rr;
    EXPECT_TRUE(Stub(pid)->Register(Ctx().get(), reg, &rr).ok());
    v1::HeartbeatRequest hb;
    hb.set_worker_id(Remember(rr));
    v1::HeartbeatResponse hr;
    EXPECT_TRUE(Stub(pid)->Heartbeat(As(rr.worker_id()).get(), hb, &hr).ok());
    EXPECT_EQ(hr.assignment().job_id(), job_id);
    return rr.worker_id();
  }

  WorkerService::Stub* Stub(int i) {
    return workers_[i % workers_.size()].get();
  }

  std::unique_ptr<testing::InProcessCoordinator> coordinator_;
  std::vector<std::unique_ptr<WorkerService::Stub>> workers_;
  UserService::Stub* users_ = nullptr;
  std::map<std::string, WorkerCredential> credentials_;
};

TEST_F(CoordinatorServiceTest, ThreeWorkersRunAJobEndToEnd) {
  StartServer();
  const std::string job = Submit(Spec("e2e", 3, 3));
  ASSERT_FALSE(job.empty());

  // Watch the job from the start.
  grpc::ClientContext watch_ctx;
  v1::WatchJobRequest wreq;
  wreq.set_job_id(job);
  auto watch = users_->WatchJob(&watch_ctx, wreq);
  v1::Job first;
  ASSERT_TRUE(watch->Read(&first));
  EXPECT_EQ(first.state(), v1::JOB_STATE_PENDING);

  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i) ids.push_back(RegisterAndAssign(100 + i, job));
  // A fourth worker is not needed by this job.
  {
    v1::RegisterRequest reg;
    reg.set_hostname("sim-host");
    reg.set_pid(999);
    reg.set_device("cpu");
    v1::RegisterResponse rr;
    ASSERT_TRUE(Stub(0)->Register(Ctx().get(), reg, &rr).ok());
    v1::HeartbeatRequest hb;
    hb.set_worker_id(Remember(rr));
    v1::HeartbeatResponse hr;
    ASSERT_TRUE(Stub(0)->Heartbeat(As(rr.worker_id()).get(), hb, &hr).ok());
    EXPECT_FALSE(hr.has_assignment());
  }

  std::vector<v1::JoinRendezvousResponse> joined(3);
  std::vector<grpc::Status> join_status(3);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int i = 0; i < 3; ++i) {
    threads.emplace_back([&, i] {
      v1::JoinRendezvousRequest req;
      req.set_job_id(job);
      req.set_worker_id(ids[i]);
      req.set_timeout_ms(20000);
      join_status[i] =
          Stub(i)->JoinRendezvous(As(ids[i]).get(), req, &joined[i]);
    });
  }
  for (auto& t : threads) t.join();
  threads.clear();
  // Each failure by its code: one join refused at once leaves the other two
  // waiting out their timeout, and only the first says why.
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(join_status[i].ok())
        << "join of worker " << i << ": code " << join_status[i].error_code()
        << " " << join_status[i].error_message();
  }
  ASSERT_TRUE(join_status[0].ok() && join_status[1].ok() &&
              join_status[2].ok());
  std::set<int> ranks;
  for (const auto& j : joined) {
    EXPECT_EQ(j.generation(), 1);
    EXPECT_EQ(j.world_size(), 3);
    ranks.insert(j.rank());
  }
  EXPECT_EQ(ranks, (std::set<int>{0, 1, 2}));
  const int64_t gen = joined[0].generation();

  // NCCL id: rank 0 publishes 128 bytes, the others wait for it.
  int rank0 = 0;
  for (int i = 0; i < 3; ++i)
    if (joined[i].rank() == 0) rank0 = i;
  std::string id(128, '\0');
  for (int b = 0; b < 128; ++b) id[b] = static_cast<char>(b * 7);
  for (int i = 0; i < 3; ++i) {
    if (i == rank0) continue;
    threads.emplace_back([&, i] {
      v1::FetchNcclIdRequest req;
      req.set_job_id(job);
      req.set_generation(gen);
      req.set_rank(joined[i].rank());
      req.set_timeout_ms(20000);
      v1::FetchNcclIdResponse resp;
      if (!Stub(i)->FetchNcclId(As(ids[i]).get(), req, &resp).ok() ||
          resp.unique_id() != id) {
        ++failures;
      }
    });
  }
  {
    v1::PublishNcclIdRequest bad;
    bad.set_job_id(job);
    bad.set_generation(gen);
    bad.set_rank(joined[(rank0 + 1) % 3].rank());
    bad.set_unique_id(id);
    v1::PublishNcclIdResponse r;
    // From that rank's own worker: the rank is what is refused.
    EXPECT_EQ(Stub(0)
                  ->PublishNcclId(As(ids[(rank0 + 1) % 3]).get(), bad, &r)
                  .error_code(),
              grpc::StatusCode::PERMISSION_DENIED);
    bad.set_rank(0);
    bad.set_unique_id("short");
    EXPECT_EQ(
        Stub(0)->PublishNcclId(As(ids[rank0]).get(), bad, &r).error_code(),
        grpc::StatusCode::INVALID_ARGUMENT);
    bad.set_unique_id(id);
    EXPECT_TRUE(Stub(0)->PublishNcclId(As(ids[rank0]).get(), bad, &r).ok());
    EXPECT_EQ(
        Stub(0)->PublishNcclId(As(ids[rank0]).get(), bad, &r).error_code(),
        grpc::StatusCode::ALREADY_EXISTS);
  }
  for (auto& t : threads) t.join();
  threads.clear();
  EXPECT_EQ(failures, 0);

  // Barrier, shard plan and final progress from every rank.
  for (int i = 0; i < 3; ++i) {
    threads.emplace_back([&, i] {
      const int rank = joined[i].rank();
      v1::BarrierRequest b;
      b.set_job_id(job);
      b.set_generation(gen);
      b.set_rank(rank);
      b.set_name("start");
      b.set_timeout_ms(20000);
      v1::BarrierResponse br;
      if (!Stub(i)->Barrier(As(ids[i]).get(), b, &br).ok()) ++failures;
      v1::GetShardRequest sr;
      sr.set_job_id(job);
      sr.set_generation(gen);
      sr.set_rank(rank);
      sr.set_epoch(1);
      sr.set_dataset_size(1000);
      v1::ShardAssignment shard;
      if (!Stub(i)->GetShard(As(ids[i]).get(), sr, &shard).ok() ||
          shard.world_size() != 3 || shard.rank() != rank ||
          shard.dataset_size() != 1000 || shard.epoch() != 1) {
        ++failures;
      }
      v1::ReportProgressRequest p;
      p.set_job_id(job);
      p.set_generation(gen);
      p.set_rank(rank);
      p.set_epoch(1);
      p.set_step(67);
      p.set_total_steps(67);
      p.set_loss(0.5 + rank);
      p.set_samples_per_sec(100);
      p.set_finished(true);
      p.set_final_train_loss(0.5);
      p.set_test_correct(30 + rank);
      p.set_test_samples(34);
      v1::ReportProgressResponse pr;
      if (!Stub(i)->ReportProgress(As(ids[i]).get(), p, &pr).ok()) ++failures;
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_EQ(failures, 0);

  v1::Job last;
  std::vector<v1::JobState> seen;
  v1::Job snapshot;
  for (int n = 0; n < 1000 && watch->Read(&snapshot); ++n) {
    seen.push_back(snapshot.state());
    last = snapshot;
  }
  EXPECT_TRUE(watch->Finish().ok());
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(last.state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_TRUE(last.progress().has_final_metrics());
  EXPECT_NEAR(last.progress().test_accuracy(), (30 + 31 + 32) / 102.0, 1e-9);
  EXPECT_NEAR(last.progress().loss(), 1.5, 1e-9);
  EXPECT_EQ(last.progress().ranks_size(), 3);

  // Workers are released at their next heartbeat.
  v1::HeartbeatRequest hb;
  hb.set_worker_id(ids[0]);
  hb.set_job_id(job);
  hb.set_generation(gen);
  v1::HeartbeatResponse hr;
  ASSERT_TRUE(Stub(0)->Heartbeat(As(ids[0]).get(), hb, &hr).ok());
  EXPECT_TRUE(hr.has_abort());
  EXPECT_FALSE(hr.abort().rejoin());
}

TEST_F(CoordinatorServiceTest, TwoThousandBlockedCallsHoldNoThreadEach) {
  StartServer();
  constexpr int kWorkers = 2000;
  const std::string job = Submit(Spec("scale", kWorkers, kWorkers));
  std::vector<std::string> ids;
  for (int i = 0; i < kWorkers; ++i)
    ids.push_back(RegisterAndAssign(1 + i, job));
  const int threads_before = ThreadCount();

  // 2,000 joins blocked in the rendezvous until the last one arrives.
  std::vector<v1::JoinRendezvousRequest> jreq(kWorkers);
  std::vector<v1::JoinRendezvousResponse> jresp(kWorkers);
  std::vector<std::unique_ptr<grpc::ClientContext>> ctx;
  Latch joins;
  for (int i = 0; i < kWorkers; ++i) {
    jreq[i].set_job_id(job);
    jreq[i].set_worker_id(ids[i]);
    jreq[i].set_timeout_ms(120000);
    ctx.push_back(As(ids[i], absl::Seconds(120)));
    Stub(i)->async()->JoinRendezvous(
        ctx.back().get(), &jreq[i], &jresp[i],
        [&joins](grpc::Status s) { joins.Done(s); });
  }
  ASSERT_TRUE(joins.WaitFor(kWorkers, absl::Seconds(120)));
  ASSERT_EQ(joins.ok(), kWorkers) << joins.last_error();
  std::set<int> ranks;
  for (const auto& r : jresp) ranks.insert(r.rank());
  EXPECT_EQ(ranks.size(), static_cast<size_t>(kWorkers));
  const int64_t gen = jresp[0].generation();

  // 2,000 barrier arrivals and 2,000 KV waits, all pending at once.
  std::vector<v1::BarrierRequest> breq(kWorkers);
  std::vector<v1::BarrierResponse> bresp(kWorkers);
  std::vector<v1::KvWaitRequest> kreq(kWorkers);
  std::vector<v1::KvWaitResponse> kresp(kWorkers);
  Latch barriers, waits;
  for (int i = 0; i < kWorkers; ++i) {
    kreq[i].set_job_id(job);
    kreq[i].set_generation(gen);
    kreq[i].add_keys("go");
    kreq[i].set_timeout_ms(120000);
    ctx.push_back(As(ids[i], absl::Seconds(120)));
    Stub(i)->async()->KvWait(ctx.back().get(), &kreq[i], &kresp[i],
                             [&waits](grpc::Status s) { waits.Done(s); });
  }
  for (int i = 0; i < kWorkers; ++i) {
    breq[i].set_job_id(job);
    breq[i].set_generation(gen);
    breq[i].set_rank(jresp[i].rank());
    breq[i].set_name("all");
    breq[i].set_timeout_ms(120000);
    ctx.push_back(As(ids[i], absl::Seconds(120)));
    Stub(i)->async()->Barrier(
        ctx.back().get(), &breq[i], &bresp[i],
        [&barriers](grpc::Status s) { barriers.Done(s); });
  }
  ASSERT_TRUE(barriers.WaitFor(kWorkers, absl::Seconds(120)));
  EXPECT_EQ(barriers.ok(), kWorkers) << barriers.last_error();
  // The barrier completed, so all KV waits were sent before it; they are
  // still pending, held by a handful of threads.
  EXPECT_EQ(waits.done(), 0);
  const int threads_waiting = ThreadCount();
  EXPECT_LT(threads_waiting - threads_before, 100)
      << "blocked calls must not pin a thread each";
  v1::KvSetRequest set;
  set.set_job_id(job);
  set.set_generation(gen);
  set.set_key("go");
  set.set_value("now");
  v1::KvSetResponse set_resp;
  ASSERT_TRUE(Stub(0)->KvSet(As(ids[0]).get(), set, &set_resp).ok());
  ASSERT_TRUE(waits.WaitFor(kWorkers, absl::Seconds(120)));
  EXPECT_EQ(waits.ok(), kWorkers) << waits.last_error();
  EXPECT_EQ(kresp[kWorkers - 1].values(0), "now");
}

TEST_F(CoordinatorServiceTest, DeadWorkerEndsGenerationAndAbortsBarrier) {
  // A silent member whose peer is heard but makes no steps (this one never
  // reports any) is gone a silent-member limit after its last heartbeat.
  StartServer(absl::Milliseconds(600), absl::Milliseconds(1200));
  v1::JobSpec spec = Spec("faulty", 2, 2);
  spec.set_max_restarts(3);
  const std::string job = Submit(spec);
  const std::string a = RegisterAndAssign(1, job);
  const std::string b = RegisterAndAssign(2, job);
  v1::JoinRendezvousResponse ja, jb;
  std::thread t([&] {
    v1::JoinRendezvousRequest r;
    r.set_job_id(job);
    r.set_worker_id(b);
    Stub(1)->JoinRendezvous(As(b).get(), r, &jb);
  });
  v1::JoinRendezvousRequest r;
  r.set_job_id(job);
  r.set_worker_id(a);
  ASSERT_TRUE(Stub(0)->JoinRendezvous(As(a).get(), r, &ja).ok());
  t.join();
  // Worker a keeps heartbeating from a thread while it waits at a barrier;
  // worker b never heartbeats again, so its lease runs out.
  std::atomic<bool> stop{false};
  std::thread beat([&] {
    for (int n = 0; n < 200 && !stop; ++n) {
      v1::HeartbeatRequest hb;
      hb.set_worker_id(a);
      hb.set_job_id(job);
      hb.set_generation(ja.generation());
      v1::HeartbeatResponse hr;
      Stub(2)->Heartbeat(As(a).get(), hb, &hr);
      if (hr.has_abort()) {
        EXPECT_TRUE(hr.abort().rejoin());
        break;
      }
      std::this_thread::sleep_for(
          std::chrono::milliseconds(100));  // Heartbeat period.
    }
  });
  v1::BarrierRequest br;
  br.set_job_id(job);
  br.set_generation(ja.generation());
  br.set_rank(ja.rank());
  br.set_name("never");
  br.set_timeout_ms(30000);
  v1::BarrierResponse bresp;
  const absl::Time start = absl::Now();
  grpc::Status s = Stub(0)->Barrier(As(a).get(), br, &bresp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::ABORTED) << s.error_message();
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  stop = true;
  beat.join();
  v1::GetJobRequest g;
  g.set_job_id(job);
  v1::Job j;
  // The barrier's waiters are failed before the job manager hears of the
  // end (the hooks run in that order, outside any lock): a GetJob right
  // after the ABORTED answer can still see RUNNING.
  ASSERT_TRUE(testing::Eventually([&] {
    return users_->GetJob(Ctx().get(), g, &j).ok() &&
           j.state() != v1::JOB_STATE_RUNNING;
  }));
  EXPECT_EQ(j.state(), v1::JOB_STATE_RESTARTING);
  EXPECT_EQ(j.restarts(), 1);
  // A stale generation is refused with ABORTED.
  v1::KvSetRequest kv;
  kv.set_job_id(job);
  kv.set_generation(ja.generation());
  kv.set_key("k");
  v1::KvSetResponse kr;
  EXPECT_EQ(Stub(0)->KvSet(As(a).get(), kv, &kr).error_code(),
            grpc::StatusCode::ABORTED);
}

TEST_F(CoordinatorServiceTest, BadRequestsGetSpecificCodes) {
  StartServer();
  const std::string job = Submit(Spec("bad", 1, 1));
  v1::HeartbeatRequest hb;
  hb.set_worker_id("w-nobody");
  v1::HeartbeatResponse hr;
  EXPECT_EQ(Stub(0)->Heartbeat(As("w-nobody").get(), hb, &hr).error_code(),
            grpc::StatusCode::NOT_FOUND);

  v1::GetJobRequest g;
  g.set_job_id("no-such-job");
  v1::Job j;
  grpc::Status s = users_->GetJob(Ctx().get(), g, &j);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_NE(s.error_message().find("no-such-job"), std::string::npos);

  v1::SubmitJobRequest sub;
  *sub.mutable_spec() = Spec("bad", 1, 1);
  sub.mutable_spec()->mutable_optimizer()->set_learning_rate(-1);
  v1::SubmitJobResponse sr;
  s = users_->SubmitJob(Ctx().get(), sub, &sr);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("optimizer.learning_rate"),
            std::string::npos);

  // Joining before being assigned is a call in the wrong order.
  v1::RegisterRequest reg;
  reg.set_hostname("h");
  reg.set_pid(5);
  reg.set_device("cpu");
  v1::RegisterResponse rr;
  ASSERT_TRUE(Stub(0)->Register(Ctx().get(), reg, &rr).ok());
  const std::string w = Remember(rr);
  v1::JoinRendezvousRequest jr;
  jr.set_job_id(job);
  jr.set_worker_id(w);
  v1::JoinRendezvousResponse jresp;
  EXPECT_EQ(Stub(0)->JoinRendezvous(As(w).get(), jr, &jresp).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);

  // Calls for a generation that has not formed, and a rank out of range.
  v1::BarrierRequest br;
  br.set_job_id(job);
  br.set_generation(5);
  br.set_name("x");
  v1::BarrierResponse bresp;
  EXPECT_EQ(Stub(0)->Barrier(As(w).get(), br, &bresp).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  hb.set_worker_id(w);
  ASSERT_TRUE(Stub(0)->Heartbeat(As(w).get(), hb, &hr).ok());
  ASSERT_EQ(hr.assignment().job_id(), job);
  ASSERT_TRUE(Stub(0)->JoinRendezvous(As(w).get(), jr, &jresp).ok());
  br.set_generation(jresp.generation());
  br.set_rank(3);
  EXPECT_EQ(Stub(0)->Barrier(As(w).get(), br, &bresp).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  v1::GetShardRequest shard;
  shard.set_job_id(job);
  shard.set_generation(jresp.generation());
  shard.set_epoch(99);
  shard.set_dataset_size(10);
  v1::ShardAssignment sa;
  EXPECT_EQ(Stub(0)->GetShard(As(w).get(), shard, &sa).error_code(),
            grpc::StatusCode::OUT_OF_RANGE);

  // An oversize message is refused by the transport, not a crash.
  v1::KvSetRequest big;
  big.set_job_id(job);
  big.set_generation(jresp.generation());
  big.set_key("big");
  big.set_value(std::string(2 << 20, 'x'));
  v1::KvSetResponse kr;
  EXPECT_EQ(Stub(0)->KvSet(As(w).get(), big, &kr).error_code(),
            grpc::StatusCode::RESOURCE_EXHAUSTED);

  v1::CancelJobRequest c;
  c.set_job_id(job);
  ASSERT_TRUE(users_->CancelJob(Ctx().get(), c, &j).ok());
  EXPECT_EQ(j.state(), v1::JOB_STATE_CANCELLED);
  EXPECT_EQ(users_->CancelJob(Ctx().get(), c, &j).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  v1::ListJobsRequest lr;
  lr.add_states(static_cast<v1::JobState>(42));
  v1::ListJobsResponse lresp;
  EXPECT_EQ(users_->ListJobs(Ctx().get(), lr, &lresp).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
}

}  // namespace
}  // namespace ringleader
