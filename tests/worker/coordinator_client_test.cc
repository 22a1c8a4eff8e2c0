// The worker's side of coming back (issue 18, point 3; issue 31), against a
// real in-process coordinator: a worker the coordinator forgot registers
// again, as the same worker, and rejoins its job instead of dropping it; a
// rank counted out after training registers again and its final report
// still counts; assignments a heartbeat brings while the worker serves a
// job are dropped; a heartbeat that only ever times out (a silent
// partition: DEADLINE_EXCEEDED, never UNAVAILABLE) still counts toward
// opening a new channel.
#include "worker/coordinator_client.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <thread>

#include "gtest/gtest.h"
#include "tests/testing/eventually.h"
#include "tests/testing/in_process_coordinator.h"
#include "tests/testing/job_specs.h"

namespace ringleader {
namespace {

using testing::InProcessCoordinator;

using testing::Eventually;

CoordinatorClient::Options Options() {
  CoordinatorClient::Options o;
  o.hostname = "client-test";
  o.pid = static_cast<int>(::getpid());
  o.rpc_timeout = absl::Milliseconds(300);
  o.max_backoff = absl::Milliseconds(50);
  return o;
}

TEST(CoordinatorClientTest, AForgottenWorkerRegistersAgainAndRejoinsItsJob) {
  absl::StatusOr<std::unique_ptr<InProcessCoordinator>> c =
      InProcessCoordinator::Start(
          InProcessCoordinator::Config(absl::Milliseconds(300)));
  ASSERT_TRUE(c.ok()) << c.status();
  v1::SubmitJobRequest submit;
  *submit.mutable_spec() = testing::MinimalJobSpec("comeback", 1, 1);
  v1::SubmitJobResponse submitted;
  ASSERT_TRUE((*c)->users()
                  .SubmitJob(testing::ClientContext().get(), submit, &submitted)
                  .ok());
  const std::string job = submitted.job_id();
  CoordinatorClient client((*c)->NewChannel(), Options());
  ASSERT_TRUE(client.Register().ok());
  client.StartHeartbeats([](const v1::GenerationAbort&) {});
  ASSERT_TRUE(client.WaitForAssignment(absl::Seconds(30)).ok());
  // The worker goes silent past its lease (a partition): the coordinator
  // forgets it. The heartbeat thread is stopped so that it is the join that
  // finds out.
  client.StopHeartbeats();
  const std::string old_id = client.worker_id();
  ASSERT_TRUE(Eventually([&] {
    v1::ListWorkersResponse list;
    (*c)->users().ListWorkers(testing::ClientContext().get(), {}, &list);
    return list.workers().empty();
  }));
  absl::StatusOr<v1::JoinRendezvousResponse> joined =
      client.Join(job, absl::Seconds(30));
  ASSERT_TRUE(joined.ok()) << joined.status();
  // The same process: it showed its credential and kept its id.
  EXPECT_EQ(client.worker_id(), old_id);
  EXPECT_EQ(joined->world_size(), 1);
}

absl::StatusOr<v1::Job> GetJob(InProcessCoordinator& c,
                               const std::string& job) {
  v1::GetJobRequest get;
  get.set_job_id(job);
  v1::Job out;
  grpc::Status s = c.users().GetJob(testing::ClientContext().get(), get, &out);
  if (!s.ok()) return absl::UnknownError(s.error_message());
  return out;
}

v1::ReportProgressRequest Report(const std::string& job, int64_t gen,
                                 int32_t rank, bool finished) {
  v1::ReportProgressRequest r;
  r.set_job_id(job);
  r.set_generation(gen);
  r.set_rank(rank);
  r.set_step(10);
  r.set_total_steps(10);
  r.set_loss(0.5);
  r.set_finished(finished);
  return r;
}

// Rank 1 trained to the last step, then went silent past the limits (its
// link to the coordinator cut) and was counted out; its final report,
// sent when it is heard again, finds it unknown: it registers again as the
// same worker and the report counts, so the job loses no rank's result.
TEST(CoordinatorClientTest, ARankCountedOutAfterTrainingStillReports) {
  CoordinatorServerConfig config =
      InProcessCoordinator::Config(absl::Milliseconds(300));
  config.options.silent_member_limit = absl::Seconds(1);
  absl::StatusOr<std::unique_ptr<InProcessCoordinator>> c =
      InProcessCoordinator::Start(config);
  ASSERT_TRUE(c.ok()) << c.status();
  v1::SubmitJobRequest submit;
  *submit.mutable_spec() = testing::MinimalJobSpec("counted-out", 2, 2);
  v1::SubmitJobResponse submitted;
  ASSERT_TRUE((*c)->users()
                  .SubmitJob(testing::ClientContext().get(), submit, &submitted)
                  .ok());
  const std::string job = submitted.job_id();
  std::unique_ptr<CoordinatorClient> clients[2];
  absl::StatusOr<v1::JoinRendezvousResponse> joined[2];
  std::thread joins[2];
  for (int i = 0; i < 2; ++i) {
    CoordinatorClient::Options o = Options();
    o.hostname = i == 0 ? "host-a" : "host-b";
    clients[i] = std::make_unique<CoordinatorClient>((*c)->NewChannel(), o);
    ASSERT_TRUE(clients[i]->Register().ok());
    clients[i]->StartHeartbeats([](const v1::GenerationAbort&) {});
    ASSERT_TRUE(clients[i]->WaitForAssignment(absl::Seconds(30)).ok());
    joins[i] = std::thread(
        [&, i] { joined[i] = clients[i]->Join(job, absl::Seconds(30)); });
  }
  for (std::thread& t : joins) t.join();
  int by_rank[2];
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(joined[i].ok()) << joined[i].status();
    by_rank[joined[i]->rank()] = i;
    clients[i]->SetCurrent(job, joined[i]->generation());
    clients[i]->SetStep(10);
  }
  const int64_t gen = joined[0]->generation();
  CoordinatorClient& first = *clients[by_rank[0]];
  CoordinatorClient& second = *clients[by_rank[1]];
  for (int rank = 0; rank < 2; ++rank) {
    ASSERT_TRUE(clients[by_rank[rank]]
                    ->ReportProgress(Report(job, gen, rank, false))
                    .ok());
  }
  const std::string counted_out = second.worker_id();
  second.StopHeartbeats();
  ASSERT_TRUE(Eventually([&] {
    v1::ListWorkersResponse list;
    (*c)->users().ListWorkers(testing::ClientContext().get(), {}, &list);
    return list.workers_size() == 1;
  }));
  absl::StatusOr<v1::Job> running = GetJob(**c, job);
  ASSERT_TRUE(running.ok()) << running.status();
  EXPECT_EQ(running->state(), v1::JOB_STATE_RUNNING) << running->message();
  const absl::Status late = second.ReportProgress(Report(job, gen, 1, true));
  ASSERT_TRUE(late.ok()) << late;
  EXPECT_EQ(second.worker_id(), counted_out);
  ASSERT_TRUE(first.ReportProgress(Report(job, gen, 0, true)).ok());
  absl::StatusOr<v1::Job> done = GetJob(**c, job);
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED) << done->message();
  EXPECT_EQ(done->message(), "all ranks finished");
  EXPECT_EQ(done->restarts(), 0);
  first.StopHeartbeats();
}

// The coordinator says an assignment again at every heartbeat until the
// worker joins: one that arrives after the worker took the job would send
// it back into the job it just finished (where it rejoins and ends its own
// generation). The client drops them while it serves a job.
TEST(CoordinatorClientTest, AssignmentsWhileServingAJobAreDropped) {
  absl::StatusOr<std::unique_ptr<InProcessCoordinator>> c =
      InProcessCoordinator::Start(
          InProcessCoordinator::Config(absl::Milliseconds(300)));
  ASSERT_TRUE(c.ok()) << c.status();
  v1::SubmitJobRequest submit;
  *submit.mutable_spec() = testing::MinimalJobSpec("stale", 1, 1);
  v1::SubmitJobResponse submitted;
  ASSERT_TRUE((*c)->users()
                  .SubmitJob(testing::ClientContext().get(), submit, &submitted)
                  .ok());
  const std::string job = submitted.job_id();
  CoordinatorClient client((*c)->NewChannel(), Options());
  ASSERT_TRUE(client.Register().ok());
  client.StartHeartbeats([](const v1::GenerationAbort&) {});
  ASSERT_TRUE(client.WaitForAssignment(absl::Seconds(30)).ok());
  // Heartbeats (every 100 ms) go on before the join, and each is answered
  // with the assignment again.
  const absl::Time took = absl::Now();
  ASSERT_TRUE(Eventually([&] {
    return client.LastHeartbeatLoop() > took + absl::Milliseconds(250);
  }));
  absl::StatusOr<v1::JoinRendezvousResponse> joined =
      client.Join(job, absl::Seconds(30));
  ASSERT_TRUE(joined.ok()) << joined.status();
  client.SetCurrent(job, joined->generation());
  ASSERT_TRUE(
      client.ReportProgress(Report(job, joined->generation(), 0, true)).ok());
  client.SetCurrent("", 0);  // Idle again: the job is over.
  absl::StatusOr<v1::JobAssignment> stale =
      client.WaitForAssignment(absl::Milliseconds(500));
  EXPECT_TRUE(absl::IsDeadlineExceeded(stale.status()))
      << "an assignment of job " << (stale.ok() ? stale->job_id() : "?");
  client.StopHeartbeats();
}

// A TCP port that accepts connections and never answers: what a peer behind
// a DROP rule looks like once the connection exists.
class SilentPort {
 public:
  SilentPort() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(a);
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&a), len) != 0 ||
        ::listen(fd_, 16) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
      return;
    }
    port_ = ntohs(a.sin_port);
  }
  ~SilentPort() {
    if (fd_ >= 0) ::close(fd_);
  }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

TEST(CoordinatorClientTest, TimedOutHeartbeatsOpenANewChannel) {
  SilentPort silent;
  ASSERT_NE(silent.port(), 0);
  const std::string target = "127.0.0.1:" + std::to_string(silent.port());
  std::atomic<int> channels{0};
  CoordinatorClient::Options o = Options();
  o.new_channel = [&] {
    ++channels;
    return grpc::CreateChannel(target, grpc::InsecureChannelCredentials());
  };
  CoordinatorClient client(o.new_channel(), o);
  channels = 0;
  client.StartHeartbeats([](const v1::GenerationAbort&) {});
  // Every beat ends DEADLINE_EXCEEDED; three in a row replace the channel.
  EXPECT_TRUE(Eventually([&] { return channels.load() >= 2; }));
  client.StopHeartbeats();
}

}  // namespace
}  // namespace ringleader
