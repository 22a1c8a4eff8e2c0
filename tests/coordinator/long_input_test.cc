// Issue 17 (4): a hostile client sends megabyte ids, keys and names to the
// real coordinator over gRPC. Every RPC that names the value in its error
// answers the code it would for a short one, with a message of under 1 KB:
// an echoed megabyte would not fit a default client's metadata limit, and
// the client would see a transport error instead of the answer.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "ringleader/v1/user_service.grpc.pb.h"
#include "ringleader/v1/worker_service.grpc.pb.h"
#include "tests/testing/form_generation.h"
#include "tests/testing/in_process_coordinator.h"
#include "tests/testing/job_specs.h"

namespace ringleader {
namespace {

using grpc::StatusCode;

const std::string& Huge() {
  static const std::string* huge = new std::string(1 << 20, 'h');
  return *huge;
}

class LongInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The default server limit (16 MiB) takes the megabyte requests.
    auto c = testing::InProcessCoordinator::Start();
    ASSERT_TRUE(c.ok()) << c.status();
    coordinator_ = *std::move(c);
  }

  static std::unique_ptr<grpc::ClientContext> Ctx() {
    return testing::ClientContext();
  }
  v1::UserService::Stub& users() { return coordinator_->users(); }
  v1::WorkerService::Stub& workers() { return coordinator_->workers(); }

  // The calls a generation member makes, naming `job`.
  std::vector<std::pair<std::string, grpc::Status>> JobCalls(
      const std::string& job) {
    std::vector<std::pair<std::string, grpc::Status>> out;
    auto add = [&](const char* name, auto method, auto request, auto resp) {
      request.set_job_id(job);
      request.set_generation(1);
      out.emplace_back(name, (workers().*method)(Ctx().get(), request, &resp));
    };
    v1::KvSetRequest set;
    set.set_key("k");
    add("KvSet", &v1::WorkerService::Stub::KvSet, set, v1::KvSetResponse());
    v1::KvGetRequest get;
    get.set_key("k");
    add("KvGet", &v1::WorkerService::Stub::KvGet, get, v1::KvGetResponse());
    v1::KvAddRequest kv_add;
    kv_add.set_key("n");
    add("KvAdd", &v1::WorkerService::Stub::KvAdd, kv_add, v1::KvAddResponse());
    v1::KvWaitRequest wait;
    wait.add_keys("k");
    wait.set_timeout_ms(5000);
    add("KvWait", &v1::WorkerService::Stub::KvWait, wait, v1::KvWaitResponse());
    v1::BarrierRequest barrier;
    barrier.set_name("b");
    barrier.set_timeout_ms(5000);
    add("Barrier", &v1::WorkerService::Stub::Barrier, barrier,
        v1::BarrierResponse());
    v1::GetShardRequest shard;
    shard.set_dataset_size(100);
    add("GetShard", &v1::WorkerService::Stub::GetShard, shard,
        v1::ShardAssignment());
    add("ReportProgress", &v1::WorkerService::Stub::ReportProgress,
        v1::ReportProgressRequest(), v1::ReportProgressResponse());
    v1::CommitCheckpointRequest commit;
    commit.set_path("/tmp/ckpt");
    add("CommitCheckpoint", &v1::WorkerService::Stub::CommitCheckpoint, commit,
        v1::CommitCheckpointResponse());
    v1::PublishNcclIdRequest publish;
    publish.set_unique_id(std::string(128, 'n'));
    add("PublishNcclId", &v1::WorkerService::Stub::PublishNcclId, publish,
        v1::PublishNcclIdResponse());
    v1::FetchNcclIdRequest fetch;
    fetch.set_timeout_ms(5000);
    add("FetchNcclId", &v1::WorkerService::Stub::FetchNcclId, fetch,
        v1::FetchNcclIdResponse());
    return out;
  }

  std::unique_ptr<testing::InProcessCoordinator> coordinator_;
};

// The call failed with `code`, and its message is short.
::testing::AssertionResult FailsShort(const grpc::Status& s, StatusCode code) {
  if (s.error_code() == code && s.error_message().size() < 1024) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "got code " << s.error_code() << " with a "
         << s.error_message().size() << "-byte message \""
         << s.error_message().substr(0, 300) << "\"; want code " << code;
}

TEST_F(LongInputTest, MegabyteJobIdsAreNotFoundWithShortMessages) {
  v1::GetJobRequest get;
  get.set_job_id(Huge());
  v1::Job job;
  grpc::Status s = users().GetJob(Ctx().get(), get, &job);
  EXPECT_TRUE(FailsShort(s, StatusCode::NOT_FOUND));
  EXPECT_TRUE(absl::StrContains(s.error_message(), "(1048576 bytes)"))
      << s.error_message();
  v1::CancelJobRequest cancel;
  cancel.set_job_id(Huge());
  EXPECT_TRUE(FailsShort(users().CancelJob(Ctx().get(), cancel, &job),
                         StatusCode::NOT_FOUND));
  {
    auto ctx = Ctx();
    v1::WatchJobRequest watch;
    watch.set_job_id(Huge());
    auto stream = users().WatchJob(ctx.get(), watch);
    EXPECT_FALSE(stream->Read(&job));
    EXPECT_TRUE(FailsShort(stream->Finish(), StatusCode::NOT_FOUND));
  }
  for (const auto& [name, status] : JobCalls(Huge())) {
    EXPECT_TRUE(FailsShort(status, StatusCode::NOT_FOUND)) << name;
  }
}

// A megabyte id cannot carry its own credential (gRPC refuses metadata that
// large), so a call naming one is refused as a call without the named
// worker's credential: UNAUTHENTICATED, and the message still quotes the id
// short.
TEST_F(LongInputTest, MegabyteWorkerIdsAreRefusedWithShortMessages) {
  v1::HeartbeatRequest hb;
  hb.set_worker_id(Huge());
  v1::HeartbeatResponse hr;
  EXPECT_TRUE(FailsShort(workers().Heartbeat(Ctx().get(), hb, &hr),
                         StatusCode::UNAUTHENTICATED));
  v1::LeaveRequest leave;
  leave.set_worker_id(Huge());
  v1::LeaveResponse lr;
  EXPECT_TRUE(FailsShort(workers().Leave(Ctx().get(), leave, &lr),
                         StatusCode::UNAUTHENTICATED));
  v1::JoinRendezvousRequest join;
  join.set_job_id(Huge());
  join.set_worker_id(Huge());
  join.set_timeout_ms(5000);
  v1::JoinRendezvousResponse joined;
  EXPECT_TRUE(FailsShort(workers().JoinRendezvous(Ctx().get(), join, &joined),
                         StatusCode::UNAUTHENTICATED));
}

TEST_F(LongInputTest,
       MegabyteRegistrationsAndSpecsAreInvalidWithShortMessages) {
  v1::RegisterRequest reg;
  reg.set_hostname("h");
  reg.set_pid(1);
  reg.set_device(Huge());
  v1::RegisterResponse rr;
  EXPECT_TRUE(FailsShort(workers().Register(Ctx().get(), reg, &rr),
                         StatusCode::INVALID_ARGUMENT));
  using Edit = void (*)(v1::JobSpec*);
  for (Edit edit : {
           +[](v1::JobSpec* s) { s->set_name(Huge()); },
           +[](v1::JobSpec* s) { s->set_checkpoint_dir("/" + Huge()); },
           +[](v1::JobSpec* s) { s->set_timeline_dir(Huge()); },
       }) {
    v1::SubmitJobRequest submit;
    *submit.mutable_spec() = testing::MinimalJobSpec("long", 1, 1);
    edit(submit.mutable_spec());
    v1::SubmitJobResponse resp;
    EXPECT_TRUE(FailsShort(users().SubmitJob(Ctx().get(), submit, &resp),
                           StatusCode::INVALID_ARGUMENT));
  }
}

TEST_F(LongInputTest, LongestKvKeysAreQuotedShort) {
  v1::SubmitJobRequest submit;
  *submit.mutable_spec() = testing::MinimalJobSpec("kv", 1, 1);
  v1::SubmitJobResponse resp;
  ASSERT_TRUE(users().SubmitJob(Ctx().get(), submit, &resp).ok());
  const testing::FormedGeneration g =
      testing::FormGeneration({&workers()}, resp.job_id(), "kv-host", 1, 5000);
  // The longest key a store takes, in bytes that escape to four characters.
  const std::string key(512, '\x01');
  v1::KvSetRequest set;
  set.set_job_id(resp.job_id());
  set.set_generation(g.generation);
  set.set_key(key);
  set.set_value("not a number");
  v1::KvSetResponse sr;
  ASSERT_EQ(g.credential_by_rank.size(), 1u);
  const WorkerCredential& member = g.credential_by_rank[0];
  ASSERT_TRUE(
      workers().KvSet(testing::ClientContext(member).get(), set, &sr).ok());
  v1::KvAddRequest add;
  add.set_job_id(resp.job_id());
  add.set_generation(g.generation);
  add.set_key(key);
  add.set_delta(1);
  v1::KvAddResponse ar;
  EXPECT_TRUE(FailsShort(
      workers().KvAdd(testing::ClientContext(member).get(), add, &ar),
      StatusCode::FAILED_PRECONDITION));
}

}  // namespace
}  // namespace ringleader
