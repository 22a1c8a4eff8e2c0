// Bad input to the coordinator, over its real gRPC services on a loopback
// port: every kind of wrong request gets a specific status code and a message
// that says what was wrong, and the server goes on serving.
#include <cmath>
#include <cstdint>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "common/job_spec_io.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "ringleader/v1/user_service.grpc.pb.h"
#include "ringleader/v1/worker_service.grpc.pb.h"
#include "tests/testing/call_outcomes.h"
#include "tests/testing/form_generation.h"
#include "tests/testing/in_process_coordinator.h"
#include "tests/testing/job_specs.h"

namespace ringleader {
namespace {

using grpc::StatusCode;

constexpr int kMaxMessageBytes = 64 << 10;
// Server-side waits of these tests; a wrong answer shows up as
// DEADLINE_EXCEEDED after this, never as a hang.
constexpr int64_t kWaitMs = 5000;
constexpr char kCheckpointDir[] = "/tmp/bad-input-ckpt";

// The call failed with `code` and a message containing `part`.
::testing::AssertionResult Fails(const grpc::Status& s, StatusCode code,
                                 absl::string_view part) {
  if (s.error_code() == code && absl::StrContains(s.error_message(), part)) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "got code " << s.error_code() << " \"" << s.error_message()
         << "\"; want code " << code << " with \"" << part << "\"";
}

using Outcomes = testing::CallOutcomes;

struct Formed {
  std::string job;
  std::vector<std::string> workers;  // Indexed by rank.
  int64_t generation = 0;
};

class BadInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    CoordinatorServerConfig config = testing::InProcessCoordinator::Config();
    config.max_message_bytes = kMaxMessageBytes;
    auto coordinator = testing::InProcessCoordinator::Start(config);
    ASSERT_TRUE(coordinator.ok()) << coordinator.status();
    coordinator_ = *std::move(coordinator);
  }

  // A context carrying every credential this test's workers were given:
  // these tests are about the fields of a request, so each call shows the
  // worker it names or the rank's holder (caller_identity_test checks who
  // may call).
  std::unique_ptr<grpc::ClientContext> Ctx() {
    std::unique_ptr<grpc::ClientContext> ctx =
        testing::ClientContext(absl::Seconds(30));
    for (const WorkerCredential& c : keyring_)
      AttachWorkerCredential(ctx.get(), c);
    return ctx;
  }
  // From now on calls also show `c`.
  void Hold(const WorkerCredential& c) { keyring_.push_back(c); }
  v1::UserService::Stub& users() { return coordinator_->users(); }
  v1::WorkerService::Stub& workers() { return coordinator_->workers(); }

  // A job of exactly `world` workers that may restart, so an ended
  // generation leaves it RESTARTING rather than FAILED.
  std::string Submit(int world, const std::string& name = "bad") {
    v1::SubmitJobRequest req;
    *req.mutable_spec() = testing::MinimalJobSpec(name, world, world);
    req.mutable_spec()->set_max_restarts(5);
    // Commits must lie inside it; nothing is written there.
    req.mutable_spec()->set_checkpoint_dir(kCheckpointDir);
    v1::SubmitJobResponse resp;
    grpc::Status s = users().SubmitJob(Ctx().get(), req, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return resp.job_id();
  }

  v1::RegisterRequest Registration(int pid) {
    v1::RegisterRequest reg;
    reg.set_hostname("bad-host");
    reg.set_pid(pid);
    reg.set_device("cpu");
    reg.set_address("127.0.0.1");
    return reg;
  }

  // A new process: it has no credential to show (one that registers again
  // with its own keeps its id: bad_input's AProcessRegisteringAgain...).
  std::string Register(int pid) {
    v1::RegisterResponse resp;
    grpc::Status s =
        workers().Register(testing::ClientContext(absl::Seconds(30)).get(),
                           Registration(pid), &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    Hold(testing::CredentialOf(resp));
    return resp.worker_id();
  }

  // One heartbeat of an idle worker: the job it is assigned ("" for none).
  std::string Assign(const std::string& worker) {
    v1::HeartbeatRequest hb;
    hb.set_worker_id(worker);
    v1::HeartbeatResponse resp;
    grpc::Status s = workers().Heartbeat(Ctx().get(), hb, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return resp.assignment().job_id();
  }

  v1::JoinRendezvousRequest JoinRequest(const std::string& job,
                                        const std::string& worker) {
    v1::JoinRendezvousRequest req;
    req.set_job_id(job);
    req.set_worker_id(worker);
    req.set_timeout_ms(kWaitMs);
    return req;
  }

  // Submits a job of `world`, registers and assigns `world` workers and
  // joins them all (concurrently: the generation forms when the last
  // arrives).
  Formed Form(int world, int first_pid = 100) {
    Formed f;
    f.job = Submit(world);
    testing::FormedGeneration g = testing::FormGeneration(
        std::vector<v1::WorkerService::Stub*>(world, &workers()), f.job,
        "bad-host", first_pid, kWaitMs);
    for (const WorkerCredential& c : g.credential_by_rank) Hold(c);
    f.workers = std::move(g.worker_by_rank);
    f.generation = g.generation;
    return f;
  }

  grpc::Status Barrier(const std::string& job, int64_t gen, int32_t rank,
                       const std::string& name = "b") {
    v1::BarrierRequest r;
    r.set_job_id(job);
    r.set_generation(gen);
    r.set_rank(rank);
    r.set_name(name);
    r.set_timeout_ms(kWaitMs);
    v1::BarrierResponse resp;
    return workers().Barrier(Ctx().get(), r, &resp);
  }

  grpc::Status KvSet(const std::string& job, int64_t gen,
                     const std::string& key, const std::string& value) {
    v1::KvSetRequest r;
    r.set_job_id(job);
    r.set_generation(gen);
    r.set_key(key);
    r.set_value(value);
    v1::KvSetResponse resp;
    return workers().KvSet(Ctx().get(), r, &resp);
  }

  grpc::Status GetJob(const std::string& job, v1::Job* out) {
    v1::GetJobRequest r;
    r.set_job_id(job);
    return users().GetJob(Ctx().get(), r, out);
  }

  // Every call a member of a generation makes, well formed apart from
  // (job, generation, rank); the calls that name no rank ignore it. The
  // waits would block for a valid member, so callers only use this where
  // each call must fail at once.
  std::vector<std::pair<std::string, grpc::Status>> MemberCalls(
      const std::string& job, int64_t gen, int32_t rank, bool ranked_only) {
    std::vector<std::pair<std::string, grpc::Status>> out;
    if (!ranked_only) {
      out.emplace_back("KvSet", KvSet(job, gen, "k", "v"));
      {
        v1::KvGetRequest r;
        r.set_job_id(job);
        r.set_generation(gen);
        r.set_key("k");
        v1::KvGetResponse resp;
        out.emplace_back("KvGet", workers().KvGet(Ctx().get(), r, &resp));
      }
      {
        v1::KvWaitRequest r;
        r.set_job_id(job);
        r.set_generation(gen);
        r.add_keys("never-set");
        r.set_timeout_ms(kWaitMs);
        v1::KvWaitResponse resp;
        out.emplace_back("KvWait", workers().KvWait(Ctx().get(), r, &resp));
      }
      {
        v1::KvAddRequest r;
        r.set_job_id(job);
        r.set_generation(gen);
        r.set_key("n");
        r.set_delta(1);
        v1::KvAddResponse resp;
        out.emplace_back("KvAdd", workers().KvAdd(Ctx().get(), r, &resp));
      }
    }
    out.emplace_back("Barrier", Barrier(job, gen, rank));
    {
      v1::GetShardRequest r;
      r.set_job_id(job);
      r.set_generation(gen);
      r.set_rank(rank);
      r.set_epoch(0);
      r.set_dataset_size(100);
      v1::ShardAssignment resp;
      out.emplace_back("GetShard", workers().GetShard(Ctx().get(), r, &resp));
    }
    {
      v1::ReportProgressRequest r;
      r.set_job_id(job);
      r.set_generation(gen);
      r.set_rank(rank);
      r.set_step(1);
      v1::ReportProgressResponse resp;
      out.emplace_back("ReportProgress",
                       workers().ReportProgress(Ctx().get(), r, &resp));
    }
    {
      v1::CommitCheckpointRequest r;
      r.set_job_id(job);
      r.set_generation(gen);
      r.set_rank(rank);
      r.set_step(1);
      r.set_path(absl::StrCat(kCheckpointDir, "/ckpt-1"));
      v1::CommitCheckpointResponse resp;
      out.emplace_back("CommitCheckpoint",
                       workers().CommitCheckpoint(Ctx().get(), r, &resp));
    }
    {
      v1::PublishNcclIdRequest r;
      r.set_job_id(job);
      r.set_generation(gen);
      r.set_rank(rank);
      r.set_unique_id(std::string(128, 'n'));
      v1::PublishNcclIdResponse resp;
      out.emplace_back("PublishNcclId",
                       workers().PublishNcclId(Ctx().get(), r, &resp));
    }
    {
      v1::FetchNcclIdRequest r;
      r.set_job_id(job);
      r.set_generation(gen);
      r.set_rank(rank);
      r.set_timeout_ms(kWaitMs);
      v1::FetchNcclIdResponse resp;
      out.emplace_back("FetchNcclId",
                       workers().FetchNcclId(Ctx().get(), r, &resp));
    }
    return out;
  }

  void ExpectAllFail(
      const std::vector<std::pair<std::string, grpc::Status>>& calls,
      StatusCode code, absl::string_view part) {
    for (const auto& [name, status] : calls) {
      EXPECT_TRUE(Fails(status, code, part)) << name;
    }
  }

  // The server still answers, and still does its job.
  void ExpectServing() {
    v1::ListJobsResponse jobs;
    EXPECT_TRUE(
        users().ListJobs(Ctx().get(), v1::ListJobsRequest(), &jobs).ok());
    const std::string id = Register(9999);
    EXPECT_FALSE(id.empty());
    v1::HeartbeatRequest hb;
    hb.set_worker_id(id);
    v1::HeartbeatResponse resp;
    EXPECT_TRUE(workers().Heartbeat(Ctx().get(), hb, &resp).ok());
  }

  std::unique_ptr<testing::InProcessCoordinator> coordinator_;
  std::vector<WorkerCredential> keyring_;
};

TEST_F(BadInputTest, UnknownJobIdsAreNotFoundAndNameTheJob) {
  v1::Job job;
  EXPECT_TRUE(Fails(GetJob("nope-7", &job), StatusCode::NOT_FOUND,
                    "job \"nope-7\" does not exist"));
  v1::CancelJobRequest cancel;
  cancel.set_job_id("nope-7");
  EXPECT_TRUE(Fails(users().CancelJob(Ctx().get(), cancel, &job),
                    StatusCode::NOT_FOUND, "job \"nope-7\" does not exist"));
  {
    auto ctx = Ctx();
    v1::WatchJobRequest watch;
    watch.set_job_id("nope-7");
    auto stream = users().WatchJob(ctx.get(), watch);
    EXPECT_FALSE(stream->Read(&job));
    EXPECT_TRUE(Fails(stream->Finish(), StatusCode::NOT_FOUND,
                      "job \"nope-7\" does not exist"));
  }
  // A registered worker naming a job that does not exist.
  const std::string worker = Register(1);
  v1::JoinRendezvousResponse joined;
  EXPECT_TRUE(Fails(workers().JoinRendezvous(
                        Ctx().get(), JoinRequest("nope-7", worker), &joined),
                    StatusCode::NOT_FOUND, "job \"nope-7\" does not exist"));
  ExpectAllFail(MemberCalls("nope-7", 1, 0, /*ranked_only=*/false),
                StatusCode::NOT_FOUND, "job \"nope-7\" does not exist");

  // No id at all is a malformed request, not an unknown job.
  EXPECT_TRUE(
      Fails(GetJob("", &job), StatusCode::INVALID_ARGUMENT, "job_id is empty"));
  cancel.set_job_id("");
  EXPECT_TRUE(Fails(users().CancelJob(Ctx().get(), cancel, &job),
                    StatusCode::INVALID_ARGUMENT, "job_id is empty"));
  EXPECT_TRUE(Fails(
      workers().JoinRendezvous(Ctx().get(), JoinRequest("", worker), &joined),
      StatusCode::INVALID_ARGUMENT, "job_id is empty"));
  ExpectAllFail(MemberCalls("", 1, 0, /*ranked_only=*/false),
                StatusCode::INVALID_ARGUMENT, "job_id is empty");
  ExpectServing();
}

TEST_F(BadInputTest, UnknownWorkerIdsAreNotFoundAndNameTheWorker) {
  const std::string job = Submit(1);
  // A client claiming an id nobody registered: the id is what is refused.
  Hold({"w-nobody", "not-a-token"});
  v1::HeartbeatRequest hb;
  hb.set_worker_id("w-nobody");
  v1::HeartbeatResponse hr;
  EXPECT_TRUE(Fails(workers().Heartbeat(Ctx().get(), hb, &hr),
                    StatusCode::NOT_FOUND,
                    "worker \"w-nobody\" is not registered"));
  v1::JoinRendezvousResponse joined;
  EXPECT_TRUE(Fails(workers().JoinRendezvous(
                        Ctx().get(), JoinRequest(job, "w-nobody"), &joined),
                    StatusCode::NOT_FOUND,
                    "worker \"w-nobody\" is not registered"));
  v1::LeaveRequest leave;
  leave.set_worker_id("w-nobody");
  v1::LeaveResponse lr;
  EXPECT_TRUE(Fails(workers().Leave(Ctx().get(), leave, &lr),
                    StatusCode::NOT_FOUND,
                    "worker \"w-nobody\" is not registered"));

  // A worker that left is unknown from then on.
  const std::string gone = Register(2);
  leave.set_worker_id(gone);
  ASSERT_TRUE(workers().Leave(Ctx().get(), leave, &lr).ok());
  hb.set_worker_id(gone);
  EXPECT_TRUE(Fails(workers().Heartbeat(Ctx().get(), hb, &hr),
                    StatusCode::NOT_FOUND,
                    absl::StrCat("worker \"", gone, "\" is not registered")));
  EXPECT_TRUE(Fails(workers().Leave(Ctx().get(), leave, &lr),
                    StatusCode::NOT_FOUND, "is not registered"));

  // No id at all.
  hb.set_worker_id("");
  EXPECT_TRUE(Fails(workers().Heartbeat(Ctx().get(), hb, &hr),
                    StatusCode::INVALID_ARGUMENT, "worker_id is empty"));
  EXPECT_TRUE(Fails(
      workers().JoinRendezvous(Ctx().get(), JoinRequest(job, ""), &joined),
      StatusCode::INVALID_ARGUMENT, "worker_id is empty"));
  leave.set_worker_id("");
  EXPECT_TRUE(Fails(workers().Leave(Ctx().get(), leave, &lr),
                    StatusCode::INVALID_ARGUMENT, "worker_id is empty"));
  ExpectServing();
}

TEST_F(BadInputTest, StaleGenerationsAreAbortedAndFutureOnesNotFormed) {
  Formed f = Form(1);
  ASSERT_EQ(f.generation, 1);
  // The member joins again (it restarted): generation 1 ends, 2 forms.
  v1::JoinRendezvousResponse again;
  ASSERT_TRUE(
      workers()
          .JoinRendezvous(Ctx().get(), JoinRequest(f.job, f.workers[0]), &again)
          .ok());
  ASSERT_EQ(again.generation(), 2);

  ExpectAllFail(MemberCalls(f.job, 1, 0, /*ranked_only=*/false),
                StatusCode::ABORTED,
                absl::StrCat("generation 1 of job \"", f.job, "\"",
                             " has ended; abort and rejoin"));
  ExpectAllFail(
      MemberCalls(f.job, 3, 0, /*ranked_only=*/false),
      StatusCode::FAILED_PRECONDITION,
      absl::StrCat("generation 3 of job \"", f.job, "\" has not formed"));
  // Numbers no generation ever had are malformed, not stale: rejoining
  // would not help the caller.
  for (int64_t bad :
       {int64_t{0}, int64_t{-1}, std::numeric_limits<int64_t>::min()}) {
    ExpectAllFail(MemberCalls(f.job, bad, 0, /*ranked_only=*/false),
                  StatusCode::INVALID_ARGUMENT,
                  absl::StrCat("generation must be >= 1 (from JoinRendezvous), "
                               "got ",
                               bad));
  }

  // A heartbeat naming the ended generation is told to rejoin...
  v1::HeartbeatRequest hb;
  hb.set_worker_id(f.workers[0]);
  hb.set_job_id(f.job);
  hb.set_generation(1);
  v1::HeartbeatResponse hr;
  ASSERT_TRUE(workers().Heartbeat(Ctx().get(), hb, &hr).ok());
  ASSERT_TRUE(hr.has_abort());
  EXPECT_EQ(hr.abort().generation(), 1);
  EXPECT_TRUE(hr.abort().rejoin());
  // ...one naming generation 2 is not, and a negative one is refused.
  hb.set_generation(2);
  ASSERT_TRUE(workers().Heartbeat(Ctx().get(), hb, &hr).ok());
  EXPECT_FALSE(hr.has_abort());
  hb.set_generation(-1);
  EXPECT_TRUE(Fails(workers().Heartbeat(Ctx().get(), hb, &hr),
                    StatusCode::INVALID_ARGUMENT,
                    "heartbeat: generation must be >= 0 (0: not joined), "
                    "got -1"));

  // The live generation still works.
  EXPECT_TRUE(KvSet(f.job, 2, "k", "v").ok());
  v1::Job job;
  ASSERT_TRUE(GetJob(f.job, &job).ok());
  EXPECT_EQ(job.generation(), 2);
  EXPECT_EQ(job.state(), v1::JOB_STATE_RUNNING);
}

TEST_F(BadInputTest, RanksOutsideTheGenerationAreInvalidArgument) {
  Formed f = Form(2);
  ASSERT_EQ(f.generation, 1);
  for (int32_t rank : {2, -1, std::numeric_limits<int32_t>::max(),
                       std::numeric_limits<int32_t>::min()}) {
    ExpectAllFail(
        MemberCalls(f.job, 1, rank, /*ranked_only=*/true),
        StatusCode::INVALID_ARGUMENT,
        absl::StrCat("rank ", rank, " is outside [0, 2) for generation 1"));
  }
  // In range but not rank 0: not allowed to publish or commit.
  v1::PublishNcclIdRequest publish;
  publish.set_job_id(f.job);
  publish.set_generation(1);
  publish.set_rank(1);
  publish.set_unique_id(std::string(128, 'n'));
  v1::PublishNcclIdResponse pr;
  EXPECT_TRUE(Fails(workers().PublishNcclId(Ctx().get(), publish, &pr),
                    StatusCode::PERMISSION_DENIED,
                    "only rank 0 publishes the NCCL id, not rank 1"));
  v1::CommitCheckpointRequest commit;
  commit.set_job_id(f.job);
  commit.set_generation(1);
  commit.set_rank(1);
  commit.set_path(absl::StrCat(kCheckpointDir, "/c"));
  v1::CommitCheckpointResponse cr;
  EXPECT_TRUE(Fails(workers().CommitCheckpoint(Ctx().get(), commit, &cr),
                    StatusCode::PERMISSION_DENIED,
                    "only rank 0 commits checkpoints"));
  ExpectServing();
}

TEST_F(BadInputTest, DuplicateRegistrationReplacesTheOldWorker) {
  const std::string first = Register(7);
  const std::string second = Register(7);  // Same host, pid and device.
  ASSERT_FALSE(second.empty());
  EXPECT_NE(first, second);
  v1::HeartbeatRequest hb;
  hb.set_worker_id(first);
  v1::HeartbeatResponse hr;
  EXPECT_TRUE(Fails(workers().Heartbeat(Ctx().get(), hb, &hr),
                    StatusCode::NOT_FOUND,
                    absl::StrCat("worker \"", first, "\" is not registered")));
  v1::ListWorkersResponse list;
  ASSERT_TRUE(
      users().ListWorkers(Ctx().get(), v1::ListWorkersRequest(), &list).ok());
  ASSERT_EQ(list.workers_size(), 1);
  EXPECT_EQ(list.workers(0).worker_id(), second);

  // A member registering again (it restarted) ends its generation, and the
  // job says why.
  Formed f = Form(1, /*first_pid=*/50);
  ASSERT_EQ(f.generation, 1);
  const std::string replacement = Register(50);
  v1::Job job;
  ASSERT_TRUE(GetJob(f.job, &job).ok());
  EXPECT_EQ(job.state(), v1::JOB_STATE_RESTARTING);
  EXPECT_TRUE(absl::StrContains(
      job.message(), absl::StrCat("worker ", f.workers[0],
                                  " registered again as ", replacement)))
      << job.message();
  EXPECT_TRUE(Fails(KvSet(f.job, 1, "k", "v"), StatusCode::ABORTED,
                    "generation 1 of job"));
}

TEST_F(BadInputTest, DuplicateJoinsArrivalsAndPublishesAreRefused) {
  // Two joins of one worker: the older is superseded, the newer stays.
  const std::string job = Submit(2, "dup-join");
  const std::string a = Register(21);
  const std::string b = Register(22);
  ASSERT_EQ(Assign(a), job);
  ASSERT_EQ(Assign(b), job);
  Outcomes joins;
  v1::JoinRendezvousRequest ja = JoinRequest(job, a);
  v1::JoinRendezvousResponse ra1, ra2;
  auto c1 = Ctx();
  auto c2 = Ctx();
  workers().async()->JoinRendezvous(c1.get(), &ja, &ra1, joins.Add());
  workers().async()->JoinRendezvous(c2.get(), &ja, &ra2, joins.Add());
  std::vector<grpc::Status> first = joins.WaitFor(1, absl::Seconds(30));
  ASSERT_EQ(first.size(), 1u);
  EXPECT_TRUE(Fails(first[0], StatusCode::ABORTED,
                    "superseded by a newer join of this worker"));
  v1::JoinRendezvousResponse rb;
  ASSERT_TRUE(
      workers().JoinRendezvous(Ctx().get(), JoinRequest(job, b), &rb).ok());
  std::vector<grpc::Status> both = joins.WaitFor(2, absl::Seconds(30));
  ASSERT_EQ(both.size(), 2u);
  EXPECT_TRUE(both[1].ok()) << both[1].error_message();
  const int64_t gen = rb.generation();
  const int32_t rank_b = rb.rank();
  const int32_t rank_a = 1 - rank_b;

  // Two arrivals of one rank at one barrier: the second is refused, the
  // first still completes with the other rank.
  Outcomes arrivals;
  v1::BarrierRequest br;
  br.set_job_id(job);
  br.set_generation(gen);
  br.set_rank(rank_a);
  br.set_name("dup");
  br.set_timeout_ms(kWaitMs);
  v1::BarrierResponse bresp1, bresp2;
  auto c3 = Ctx();
  auto c4 = Ctx();
  workers().async()->Barrier(c3.get(), &br, &bresp1, arrivals.Add());
  workers().async()->Barrier(c4.get(), &br, &bresp2, arrivals.Add());
  first = arrivals.WaitFor(1, absl::Seconds(30));
  ASSERT_EQ(first.size(), 1u);
  EXPECT_TRUE(Fails(
      first[0], StatusCode::ALREADY_EXISTS,
      absl::StrCat("rank ", rank_a, " already waits at barrier \"dup\"")));
  EXPECT_TRUE(Barrier(job, gen, rank_b, "dup").ok());
  both = arrivals.WaitFor(2, absl::Seconds(30));
  ASSERT_EQ(both.size(), 2u);
  EXPECT_TRUE(both[1].ok()) << both[1].error_message();

  // Publishing the NCCL id of one communicator twice.
  v1::PublishNcclIdRequest publish;
  publish.set_job_id(job);
  publish.set_generation(gen);
  publish.set_rank(0);
  publish.set_comm_index(3);
  publish.set_unique_id(std::string(128, 'n'));
  v1::PublishNcclIdResponse pr;
  ASSERT_TRUE(workers().PublishNcclId(Ctx().get(), publish, &pr).ok());
  EXPECT_TRUE(Fails(workers().PublishNcclId(Ctx().get(), publish, &pr),
                    StatusCode::ALREADY_EXISTS,
                    "the NCCL id of communicator 3 is already published"));
}

TEST_F(BadInputTest, OversizeMessagesAreResourceExhaustedAndServingGoesOn) {
  Formed f = Form(1);
  // Requests over --max_message_bytes are refused by the transport.
  EXPECT_TRUE(Fails(KvSet(f.job, f.generation, "big",
                          std::string(kMaxMessageBytes + 1024, 'x')),
                    StatusCode::RESOURCE_EXHAUSTED, "larger than max"));
  v1::SubmitJobRequest submit;
  *submit.mutable_spec() = testing::MinimalJobSpec("big", 1, 1);
  submit.mutable_spec()->mutable_dataset()->set_path(
      std::string(2 * kMaxMessageBytes, '/'));
  v1::SubmitJobResponse sr;
  EXPECT_TRUE(Fails(users().SubmitJob(Ctx().get(), submit, &sr),
                    StatusCode::RESOURCE_EXHAUSTED, "larger than max"));
  // A reply over the limit fails the call, not the server: two values that
  // fit one by one do not fit in one KvWait answer.
  const std::string value(kMaxMessageBytes * 6 / 10, 'v');
  ASSERT_TRUE(KvSet(f.job, f.generation, "a", value).ok());
  ASSERT_TRUE(KvSet(f.job, f.generation, "b", value).ok());
  v1::KvWaitRequest wait;
  wait.set_job_id(f.job);
  wait.set_generation(f.generation);
  wait.add_keys("a");
  wait.add_keys("b");
  wait.set_timeout_ms(kWaitMs);
  v1::KvWaitResponse wr;
  EXPECT_TRUE(Fails(workers().KvWait(Ctx().get(), wait, &wr),
                    StatusCode::RESOURCE_EXHAUSTED, "larger than max"));
  // Each value alone still comes back, and everything else still works.
  wait.clear_keys();
  wait.add_keys("b");
  ASSERT_TRUE(workers().KvWait(Ctx().get(), wait, &wr).ok());
  ASSERT_EQ(wr.values_size(), 1);
  EXPECT_EQ(wr.values(0), value);
  v1::Job job;
  ASSERT_TRUE(GetJob(f.job, &job).ok());
  EXPECT_EQ(job.state(), v1::JOB_STATE_RUNNING);
  ExpectServing();
}

TEST_F(BadInputTest, CallsInTheWrongOrderAreFailedPrecondition) {
  const std::string job = Submit(1);
  // Joining before the heartbeat that assigns the job.
  const std::string worker = Register(31);
  v1::JoinRendezvousResponse joined;
  EXPECT_TRUE(Fails(
      workers().JoinRendezvous(Ctx().get(), JoinRequest(job, worker), &joined),
      StatusCode::FAILED_PRECONDITION,
      absl::StrCat("worker \"", worker, "\" is not assigned to job \"", job,
                   "\"", "; wait for an assignment in a heartbeat")));
  // Generation calls before any generation formed.
  ExpectAllFail(
      MemberCalls(job, 1, 0, /*ranked_only=*/false),
      StatusCode::FAILED_PRECONDITION,
      absl::StrCat("generation 1 of job \"", job, "\" has not formed"));
  // Resuming a job that never committed a checkpoint.
  v1::SubmitJobRequest resume;
  *resume.mutable_spec() = testing::MinimalJobSpec("never-ran", 1, 1);
  resume.mutable_spec()->set_resume(true);
  resume.mutable_spec()->set_checkpoint_dir("/tmp/never-ran");
  v1::SubmitJobResponse sr;
  EXPECT_TRUE(Fails(users().SubmitJob(Ctx().get(), resume, &sr),
                    StatusCode::FAILED_PRECONDITION,
                    "resume: no committed checkpoint for a job named "
                    "\"never-ran\""));

  ASSERT_EQ(Assign(worker), job);
  ASSERT_TRUE(
      workers()
          .JoinRendezvous(Ctx().get(), JoinRequest(job, worker), &joined)
          .ok());
  const int64_t gen = joined.generation();
  // Past the last epoch; a checkpoint older than the committed one.
  v1::GetShardRequest shard;
  shard.set_job_id(job);
  shard.set_generation(gen);
  shard.set_epoch(1);
  shard.set_dataset_size(100);
  v1::ShardAssignment sa;
  EXPECT_TRUE(Fails(workers().GetShard(Ctx().get(), shard, &sa),
                    StatusCode::OUT_OF_RANGE,
                    "epoch 1 is past the job's 1 epochs"));
  v1::CommitCheckpointRequest commit;
  commit.set_job_id(job);
  commit.set_generation(gen);
  commit.set_step(10);
  commit.set_path(absl::StrCat(kCheckpointDir, "/ckpt-10"));
  v1::CommitCheckpointResponse cr;
  ASSERT_TRUE(workers().CommitCheckpoint(Ctx().get(), commit, &cr).ok());
  commit.set_step(5);
  EXPECT_TRUE(Fails(workers().CommitCheckpoint(Ctx().get(), commit, &cr),
                    StatusCode::FAILED_PRECONDITION,
                    "checkpoint at step 5 is older than the committed 10"));

  // After a cancel: every generation call, a join, a second cancel.
  v1::CancelJobRequest cancel;
  cancel.set_job_id(job);
  v1::Job j;
  ASSERT_TRUE(users().CancelJob(Ctx().get(), cancel, &j).ok());
  const std::string cancelled =
      absl::StrCat("job \"", job, "\" is JOB_STATE_CANCELLED");
  ExpectAllFail(MemberCalls(job, gen, 0, /*ranked_only=*/false),
                StatusCode::FAILED_PRECONDITION, cancelled);
  EXPECT_TRUE(Fails(
      workers().JoinRendezvous(Ctx().get(), JoinRequest(job, worker), &joined),
      StatusCode::FAILED_PRECONDITION, cancelled));
  EXPECT_TRUE(
      Fails(users().CancelJob(Ctx().get(), cancel, &j),
            StatusCode::FAILED_PRECONDITION,
            absl::StrCat("job \"", job, "\" is already JOB_STATE_CANCELLED")));
  // The worker's next heartbeat releases it, without a rejoin.
  v1::HeartbeatRequest hb;
  hb.set_worker_id(worker);
  hb.set_job_id(job);
  hb.set_generation(gen);
  v1::HeartbeatResponse hr;
  ASSERT_TRUE(workers().Heartbeat(Ctx().get(), hb, &hr).ok());
  ASSERT_TRUE(hr.has_abort());
  EXPECT_FALSE(hr.abort().rejoin());
  EXPECT_EQ(hr.abort().reason(), "job is JOB_STATE_CANCELLED");
  ExpectServing();
}

TEST_F(BadInputTest, MalformedFieldsAreInvalidArgumentNamingTheField) {
  struct Reg {
    v1::RegisterRequest req;
    std::string part;
  };
  std::vector<Reg> regs(4);
  regs[0].req = Registration(1);
  regs[0].req.set_hostname("");
  regs[0].part = "register: hostname must be 1..253 bytes";
  regs[1].req = Registration(1);
  regs[1].req.set_device("gpu0");
  regs[1].part = "register: device must be 'cpu' or 'cuda:N', got \"gpu0\"";
  regs[2].req = Registration(1);
  regs[2].req.set_device("cuda:");
  regs[2].part = "got \"cuda:\"";
  regs[3].req = Registration(0);
  regs[3].part = "register: pid must be positive";
  for (const Reg& r : regs) {
    v1::RegisterResponse resp;
    EXPECT_TRUE(Fails(workers().Register(Ctx().get(), r.req, &resp),
                      StatusCode::INVALID_ARGUMENT, r.part));
  }

  Formed f = Form(1);
  const int64_t gen = f.generation;
  EXPECT_TRUE(Fails(KvSet(f.job, gen, "", "v"), StatusCode::INVALID_ARGUMENT,
                    "kv key is empty"));
  EXPECT_TRUE(Fails(KvSet(f.job, gen, std::string(513, 'k'), "v"),
                    StatusCode::INVALID_ARGUMENT,
                    "kv key is 513 bytes; at most 512"));
  EXPECT_TRUE(Fails(KvSet(f.job, gen, "__ringleader/nccl_id/0", "v"),
                    StatusCode::PERMISSION_DENIED,
                    "kv keys under __ringleader/ are reserved"));
  v1::KvWaitRequest wait;
  wait.set_job_id(f.job);
  wait.set_generation(gen);
  wait.set_timeout_ms(kWaitMs);
  v1::KvWaitResponse wr;
  EXPECT_TRUE(Fails(workers().KvWait(Ctx().get(), wait, &wr),
                    StatusCode::INVALID_ARGUMENT, "kv wait names no keys"));
  for (int i = 0; i < 4097; ++i) wait.add_keys(absl::StrCat(i));
  EXPECT_TRUE(Fails(workers().KvWait(Ctx().get(), wait, &wr),
                    StatusCode::INVALID_ARGUMENT,
                    "kv wait names over 4096 keys"));
  EXPECT_TRUE(Fails(Barrier(f.job, gen, 0, ""), StatusCode::INVALID_ARGUMENT,
                    "barrier name must be 1..256 bytes"));

  v1::PublishNcclIdRequest publish;
  publish.set_job_id(f.job);
  publish.set_generation(gen);
  publish.set_unique_id("short");
  v1::PublishNcclIdResponse pr;
  EXPECT_TRUE(Fails(workers().PublishNcclId(Ctx().get(), publish, &pr),
                    StatusCode::INVALID_ARGUMENT,
                    "an NCCL unique id is 128 bytes, got 5"));
  publish.set_unique_id(std::string(128, 'n'));
  publish.set_comm_index(-1);
  EXPECT_TRUE(Fails(workers().PublishNcclId(Ctx().get(), publish, &pr),
                    StatusCode::INVALID_ARGUMENT, "comm_index must be >= 0"));

  v1::GetShardRequest shard;
  shard.set_job_id(f.job);
  shard.set_generation(gen);
  shard.set_epoch(-1);
  shard.set_dataset_size(100);
  v1::ShardAssignment sa;
  EXPECT_TRUE(Fails(workers().GetShard(Ctx().get(), shard, &sa),
                    StatusCode::INVALID_ARGUMENT, "epoch must be >= 0"));
  shard.set_epoch(0);
  shard.set_dataset_size(0);
  EXPECT_TRUE(Fails(workers().GetShard(Ctx().get(), shard, &sa),
                    StatusCode::INVALID_ARGUMENT, "dataset_size must be > 0"));

  v1::ReportProgressRequest progress;
  progress.set_job_id(f.job);
  progress.set_generation(gen);
  progress.set_loss(std::nan(""));
  v1::ReportProgressResponse rr;
  EXPECT_TRUE(Fails(workers().ReportProgress(Ctx().get(), progress, &rr),
                    StatusCode::INVALID_ARGUMENT,
                    "progress report has a negative, non-finite or "
                    "inconsistent value"));
  progress.set_loss(1);
  progress.set_test_samples(3);
  progress.set_test_correct(4);
  EXPECT_TRUE(Fails(workers().ReportProgress(Ctx().get(), progress, &rr),
                    StatusCode::INVALID_ARGUMENT,
                    "progress report: test_correct must be in [0, "
                    "test_samples] (got 4 of 3)"));
  // Counts near INT64_MAX would wrap the pooled sums (issue 17): refused,
  // naming the field.
  constexpr int64_t kHuge = std::numeric_limits<int64_t>::max() - 1;
  progress.set_test_samples(kHuge);
  progress.set_test_correct(kHuge);
  EXPECT_TRUE(Fails(workers().ReportProgress(Ctx().get(), progress, &rr),
                    StatusCode::INVALID_ARGUMENT,
                    "progress report: test_samples must be in [0, "
                    "1125899906842624] (got 9223372036854775806)"));
  progress.clear_test_samples();
  progress.clear_test_correct();
  progress.set_eval_epoch(1);
  progress.set_eval_samples(kHuge);
  EXPECT_TRUE(Fails(workers().ReportProgress(Ctx().get(), progress, &rr),
                    StatusCode::INVALID_ARGUMENT, "eval_samples must be in"));
  progress.clear_eval_samples();
  progress.clear_eval_epoch();

  v1::CommitCheckpointRequest commit;
  commit.set_job_id(f.job);
  commit.set_generation(gen);
  v1::CommitCheckpointResponse cr;
  EXPECT_TRUE(Fails(workers().CommitCheckpoint(Ctx().get(), commit, &cr),
                    StatusCode::INVALID_ARGUMENT,
                    "checkpoint path must be 1..4096 bytes"));
  commit.set_path(absl::StrCat(kCheckpointDir, "/c"));
  commit.set_step(-1);
  EXPECT_TRUE(Fails(workers().CommitCheckpoint(Ctx().get(), commit, &cr),
                    StatusCode::INVALID_ARGUMENT,
                    "checkpoint epoch, step and offset must be >= 0"));

  v1::ListJobsRequest list;
  list.add_states(static_cast<v1::JobState>(42));
  v1::ListJobsResponse lr;
  EXPECT_TRUE(Fails(users().ListJobs(Ctx().get(), list, &lr),
                    StatusCode::INVALID_ARGUMENT, "unknown job state 42"));
  // None of it disturbed the job.
  v1::Job job;
  ASSERT_TRUE(GetJob(f.job, &job).ok());
  EXPECT_EQ(job.state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(job.restarts(), 0);
}

// The metric sums a rank reports (ReportProgressRequest.test_metrics and
// eval_metrics) are checked entry by entry; a bad list changes nothing, and
// a good one is kept in the rank's progress.
TEST_F(BadInputTest, BadMetricSumsAreInvalidArgumentNamingTheEntry) {
  Formed f = Form(1);
  auto report = [&](bool final_report) {
    v1::ReportProgressRequest r;
    r.set_job_id(f.job);
    r.set_generation(f.generation);
    r.set_step(1);
    r.set_eval_epoch(final_report ? 0 : 1);
    r.set_finished(final_report);
    return r;
  };
  auto add = [](google::protobuf::RepeatedPtrField<v1::MetricSum>* list,
                const std::string& name, double sum, int64_t count) {
    v1::MetricSum* m = list->Add();
    m->set_name(name);
    m->set_sum(sum);
    m->set_count(count);
  };
  struct Case {
    v1::ReportProgressRequest request;
    std::string part;
  };
  std::vector<Case> cases;
  cases.push_back({report(true), "test_metrics has 17 entries; at most 16"});
  for (int i = 0; i < 17; ++i) {
    add(cases.back().request.mutable_test_metrics(), absl::StrCat("m", i), 1,
        1);
  }
  cases.push_back({report(false),
                   "progress report: eval_metrics[1].name must be 1..32 "
                   "characters of [a-z0-9_] (got \"Top-5\")"});
  add(cases.back().request.mutable_eval_metrics(), "loss", 1, 1);
  add(cases.back().request.mutable_eval_metrics(), "Top-5", 1, 1);
  cases.push_back({report(false), "eval_metrics[0].name must be 1..32"});
  add(cases.back().request.mutable_eval_metrics(), std::string(33, 'x'), 1, 1);
  cases.push_back({report(true),
                   "progress report: test_metrics[1].name \"accuracy\" "
                   "repeats test_metrics[0]"});
  add(cases.back().request.mutable_test_metrics(), "accuracy", 1, 2);
  add(cases.back().request.mutable_test_metrics(), "accuracy", 1, 2);
  cases.push_back({report(true),
                   "progress report: test_metrics[0] (\"loss\") sum must be "
                   "finite (got inf)"});
  add(cases.back().request.mutable_test_metrics(), "loss",
      std::numeric_limits<double>::infinity(), 2);
  cases.push_back({report(false),
                   "progress report: eval_metrics[0] (\"mse\") count must "
                   "be in [0, 1125899906842624] (got -3)"});
  add(cases.back().request.mutable_eval_metrics(), "mse", 1, -3);
  for (const Case& c : cases) {
    v1::ReportProgressResponse rr;
    EXPECT_TRUE(Fails(workers().ReportProgress(Ctx().get(), c.request, &rr),
                      StatusCode::INVALID_ARGUMENT, c.part));
  }
  v1::Job job;
  ASSERT_TRUE(GetJob(f.job, &job).ok());
  EXPECT_EQ(job.progress().ranks_size(), 0);
  EXPECT_EQ(job.state(), v1::JOB_STATE_RUNNING);

  v1::ReportProgressRequest good = report(false);
  add(good.mutable_eval_metrics(), "accuracy", 7, 10);
  add(good.mutable_eval_metrics(), "top5_accuracy", 10, 10);
  v1::ReportProgressResponse rr;
  ASSERT_TRUE(workers().ReportProgress(Ctx().get(), good, &rr).ok());
  ASSERT_TRUE(GetJob(f.job, &job).ok());
  ASSERT_EQ(job.progress().ranks_size(), 1);
  EXPECT_EQ(job.progress().ranks(0).eval_metrics_size(), 2);
  ASSERT_EQ(job.progress().evaluations_size(), 1);
  ASSERT_EQ(job.progress().evaluations(0).metrics_size(), 2);
  EXPECT_EQ(job.progress().evaluations(0).metrics(1).name(), "top5_accuracy");
  EXPECT_DOUBLE_EQ(job.progress().evaluations(0).metrics(1).value(), 1.0);
  ExpectServing();
}

// What `ringctl submit --file` does: load the file, then submit the spec.
class JobFileTest : public BadInputTest {
 protected:
  std::string WriteFile(const std::string& name, const std::string& text) {
    const char* dir = std::getenv("TEST_TMPDIR");
    const std::string path =
        absl::StrCat(dir != nullptr ? dir : "/tmp", "/", name);
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
    return path;
  }
};

TEST_F(JobFileTest, GarbageJobFilesAreInvalidArgumentWithPathAndPosition) {
  const std::string binary =
      WriteFile("garbage.textproto", std::string("\x89PNG\r\n\x1a\n\0\0", 10));
  absl::StatusOr<v1::JobSpec> spec = LoadJobSpecFile(binary);
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(
      absl::StartsWith(spec.status().message(), binary + ": line 1 col"))
      << spec.status();
  const std::string truncated =
      WriteFile("truncated.textproto", "name: \"x\"\nmodel {\n  arch: MODEL_");
  spec = LoadJobSpecFile(truncated);
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(spec.status().message(), truncated + ": line 3"))
      << spec.status();
  const std::string json = WriteFile("types.json", "{\"epochs\": \"many\"}");
  spec = LoadJobSpecFile(json);
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(spec.status().message(),
                               json + ": invalid JSON job spec: "))
      << spec.status();
  v1::ListJobsResponse jobs;
  ASSERT_TRUE(users().ListJobs(Ctx().get(), v1::ListJobsRequest(), &jobs).ok());
  EXPECT_EQ(jobs.jobs_size(), 0);
}

TEST_F(JobFileTest, SpecsThatParseButBreakRulesAreRefusedByTheServer) {
  // Each parses; the coordinator validates again (it cannot trust clients)
  // and names the field.
  struct Case {
    std::string text;
    std::string part;
  };
  const std::vector<Case> cases = {
      {"", "invalid job spec: name must match"},
      {"name: \"Bad Name\"", "invalid job spec: name must match"},
      {"name: \"x\" model { arch: 99 }",
       "invalid job spec: model.arch must be one of"},
      {"name: \"x\" model { arch: MODEL_ARCH_MLP hidden_sizes: -4 }",
       "invalid job spec: model.hidden_sizes[0] must be in [1, 65536] (got "
       "-4)"},
      {"name: \"x\" model { arch: MODEL_ARCH_MLP } dataset { format: "
       "DATASET_FORMAT_SYNTHETIC synthetic_train_size: 100 } optimizer { "
       "kind: OPTIMIZER_KIND_SGD learning_rate: nan } epochs: 1 batch_size: "
       "1 min_workers: 1 max_workers: 1",
       "invalid job spec: optimizer.learning_rate must be > 0 and finite"},
      {"name: \"x\" model { arch: MODEL_ARCH_CNN } dataset { format: "
       "DATASET_FORMAT_TOKENS train_tokens: \"/d/t.bin\" block_size: 64 }",
       "invalid job spec: model.arch must be MODEL_ARCH_TORCHSCRIPT with "
       "DATASET_FORMAT_TOKENS: built-in models take images"},
      {"name: \"x\" model { arch: MODEL_ARCH_MLP } dataset { format: "
       "DATASET_FORMAT_NPY train { inputs: \"/d/x.npy\" } }",
       "invalid job spec: dataset.train.targets is required with "
       "DATASET_FORMAT_NPY"},
  };
  for (const Case& c : cases) {
    v1::SubmitJobRequest req;
    if (!c.text.empty()) {
      absl::StatusOr<v1::JobSpec> spec =
          ParseJobSpec(c.text, JobSpecFormat::kTextProto);
      ASSERT_TRUE(spec.ok()) << spec.status();
      *req.mutable_spec() = *spec;
    }
    v1::SubmitJobResponse resp;
    EXPECT_TRUE(Fails(users().SubmitJob(Ctx().get(), req, &resp),
                      StatusCode::INVALID_ARGUMENT, c.part))
        << c.text;
  }
  // Rules across the task, the model and the export paths.
  v1::SubmitJobRequest task_req;
  *task_req.mutable_spec() = testing::MinimalJobSpec("task", 1, 1);
  task_req.mutable_spec()->mutable_task()->set_loss(v1::LOSS_KIND_MODEL);
  v1::SubmitJobResponse task_resp;
  EXPECT_TRUE(Fails(users().SubmitJob(Ctx().get(), task_req, &task_resp),
                    StatusCode::INVALID_ARGUMENT,
                    "invalid job spec: task.loss LOSS_KIND_MODEL requires "
                    "model.arch MODEL_ARCH_TORCHSCRIPT"));
  task_req.mutable_spec()->clear_task();
  task_req.mutable_spec()->mutable_export_()->set_torchscript_path("m.pt");
  EXPECT_TRUE(Fails(users().SubmitJob(Ctx().get(), task_req, &task_resp),
                    StatusCode::INVALID_ARGUMENT,
                    "invalid job spec: export.torchscript_path must be an "
                    "absolute path"));
  // Several mistakes: the status lists each, one line per field, in field
  // order, so ringctl can show them all.
  v1::SubmitJobRequest many_req;
  many_req.mutable_spec()->set_epochs(-3);
  v1::SubmitJobResponse many_resp;
  const grpc::Status many =
      users().SubmitJob(Ctx().get(), many_req, &many_resp);
  EXPECT_EQ(many.error_code(), StatusCode::INVALID_ARGUMENT);
  std::vector<std::string> fields;
  for (absl::string_view line : absl::StrSplit(many.error_message(), '\n')) {
    EXPECT_TRUE(absl::StartsWith(line, "invalid job spec: ")) << line;
    const absl::string_view rest =
        absl::StripPrefix(line, "invalid job spec: ");
    fields.emplace_back(rest.substr(0, rest.find(' ')));
  }
  EXPECT_EQ(fields, (std::vector<std::string>{
                        "name", "model.arch", "dataset.format",
                        "optimizer.kind", "optimizer.learning_rate", "epochs",
                        "batch_size", "min_workers"}))
      << many.error_message();
  // Control bytes in a name: escaped in the one-line message.
  v1::SubmitJobRequest req;
  *req.mutable_spec() = testing::MinimalJobSpec("ok", 1, 1);
  req.mutable_spec()->set_name(std::string("a\x00\n\x7f", 4));
  v1::SubmitJobResponse resp;
  EXPECT_TRUE(Fails(
      users().SubmitJob(Ctx().get(), req, &resp), StatusCode::INVALID_ARGUMENT,
      "invalid job spec: name must match "
      "[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])? (got \"a\\x00\\n\\x7f\")"));
  // Bytes that are not UTF-8 in a string field do not even parse on the
  // server (proto3 strings are UTF-8).
  req.mutable_spec()->set_name(std::string("\xff\xfe", 2));
  EXPECT_TRUE(Fails(users().SubmitJob(Ctx().get(), req, &resp),
                    StatusCode::INVALID_ARGUMENT,
                    "/ringleader.v1.UserService/SubmitJob: the request does "
                    "not parse"));
  v1::ListJobsResponse jobs;
  ASSERT_TRUE(users().ListJobs(Ctx().get(), v1::ListJobsRequest(), &jobs).ok());
  EXPECT_EQ(jobs.jobs_size(), 0);
}

TEST_F(BadInputTest, GarbageRequestBytesAreRefusedAndServingGoesOn) {
  grpc::GenericStub stub(coordinator_->channel());
  auto call = [this, &stub](const std::string& method,
                            const std::string& bytes) {
    grpc::Slice slice(bytes);
    grpc::ByteBuffer request(&slice, 1);
    grpc::ByteBuffer response;
    Outcomes outcome;
    auto ctx = Ctx();
    stub.UnaryCall(ctx.get(), method, grpc::StubOptions(), &request, &response,
                   outcome.Add());
    std::vector<grpc::Status> done = outcome.WaitFor(1, absl::Seconds(30));
    return done.empty() ? grpc::Status(StatusCode::UNKNOWN, "no answer")
                        : done[0];
  };
  // Not a protobuf message at all (a truncated varint and a bad wire type):
  // gRPC itself would answer UNIMPLEMENTED with no message.
  for (const std::string& garbage :
       {std::string("\xff\xff\xff\xff"), std::string("\x0f garbage", 9)}) {
    for (const char* method : {"/ringleader.v1.UserService/SubmitJob",
                               "/ringleader.v1.WorkerService/Register",
                               "/ringleader.v1.WorkerService/KvSet"}) {
      EXPECT_TRUE(Fails(call(method, garbage), StatusCode::INVALID_ARGUMENT,
                        absl::StrCat(method,
                                     ": the request does not parse as this "
                                     "method's message")));
    }
  }
  EXPECT_EQ(call("/ringleader.v1.UserService/Nope", "").error_code(),
            StatusCode::UNIMPLEMENTED);
  ExpectServing();
}

TEST_F(BadInputTest, AWorkersBadDataIsFailedPreconditionOrInTheJobMessage) {
  // Ranks that read different datasets (one has a truncated copy).
  Formed f = Form(2);
  v1::GetShardRequest shard;
  shard.set_job_id(f.job);
  shard.set_generation(f.generation);
  shard.set_rank(0);
  shard.set_dataset_size(60000);
  v1::ShardAssignment sa;
  ASSERT_TRUE(workers().GetShard(Ctx().get(), shard, &sa).ok());
  shard.set_rank(1);
  shard.set_dataset_size(59999);
  EXPECT_TRUE(Fails(workers().GetShard(Ctx().get(), shard, &sa),
                    StatusCode::FAILED_PRECONDITION,
                    "rank 1 sees 59999 samples but another rank saw 60000: "
                    "every worker needs the same dataset"));
  // A worker whose data cannot be read leaves with the reader's error
  // (worker_daemon.cc); the job's message carries it to the user.
  const std::string reason =
      "/data/train-images-idx3-ubyte.gz: truncated: need 47040000 bytes of "
      "data but the file holds 31";
  v1::LeaveRequest leave;
  leave.set_worker_id(f.workers[1]);
  leave.set_reason(reason);
  v1::LeaveResponse lr;
  ASSERT_TRUE(workers().Leave(Ctx().get(), leave, &lr).ok());
  v1::Job job;
  ASSERT_TRUE(GetJob(f.job, &job).ok());
  EXPECT_EQ(job.state(), v1::JOB_STATE_RESTARTING);
  EXPECT_TRUE(absl::StrContains(job.message(), reason)) << job.message();
  EXPECT_TRUE(
      Fails(Barrier(f.job, f.generation, 0), StatusCode::ABORTED, "has ended"));
}

}  // namespace
}  // namespace ringleader
