// The worker's side of coming back (issue 18, point 3), against a real
// in-process coordinator: a worker the coordinator forgot registers again and
// rejoins its job instead of dropping it; a heartbeat that only ever times
// out (a silent partition: DEADLINE_EXCEEDED, never UNAVAILABLE) still
// counts toward opening a new channel.
#include "worker/coordinator_client.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <memory>

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
  EXPECT_NE(client.worker_id(), old_id);
  EXPECT_EQ(joined->world_size(), 1);
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
