// The daemons tell systemd READY=1 only once they serve: the real
// coordinator binary after its state is recovered and its port accepts
// calls (health SERVING), the real worker binary after it registered; and
// their watchdogs ping after READY when $WATCHDOG_USEC is set.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "ringleader/v1/user_service.grpc.pb.h"
#include "tests/deploy/notify_socket.h"
#include "tests/testing/process.h"

namespace ringleader::testing {
namespace {

using ::testing::HasSubstr;

constexpr absl::Duration kTimeout = absl::Seconds(60);

std::string Dir(const std::string& name) {
  std::string dir = TestTempDir() + "/" + name;
  RunProcess({"/bin/rm", "-rf", dir}, absl::Seconds(30)).IgnoreError();
  RunProcess({"/bin/mkdir", "-p", dir}, absl::Seconds(30)).IgnoreError();
  return dir;
}

bool Accepts(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok =
      ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  ::close(fd);
  return ok;
}

grpc::health::v1::HealthCheckResponse::ServingStatus Health(int port) {
  auto stub = grpc::health::v1::Health::NewStub(grpc::CreateChannel(
      absl::StrCat("127.0.0.1:", port), grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  grpc::health::v1::HealthCheckRequest req;
  grpc::health::v1::HealthCheckResponse resp;
  grpc::Status s = stub->Check(&ctx, req, &resp);
  if (!s.ok()) return grpc::health::v1::HealthCheckResponse::UNKNOWN;
  return resp.status();
}

struct Coordinator {
  std::unique_ptr<Subprocess> process;
  int port = 0;
};

// A coordinator on a free port, not under "systemd".
absl::StatusOr<Coordinator> StartCoordinator(const std::string& dir) {
  Coordinator c;
  ProcessOptions o;
  o.env = {{"NOTIFY_SOCKET", std::nullopt}, {"WATCHDOG_USEC", std::nullopt}};
  o.stderr_path = dir + "/coordinator.err";
  absl::StatusOr<std::unique_ptr<Subprocess>> p =
      Subprocess::Start({RunfilePath("coordinator/ringleader-coordinator"),
                         "--listen=127.0.0.1:0", "--state=" + dir + "/state.db",
                         "--port_file=" + dir + "/port"},
                        o);
  if (!p.ok()) return p.status();
  c.process = *std::move(p);
  absl::StatusOr<int> port =
      WaitForPortFile(dir + "/port", kTimeout, c.process.get());
  if (!port.ok()) return port.status();
  c.port = *port;
  return c;
}

TEST(CoordinatorReadyTest, ReadyOnlyOnceServing) {
  const std::string dir = Dir("coordinator_ready");
  absl::StatusOr<NotifySocket> sock = NotifySocket::Bind();
  ASSERT_TRUE(sock.ok()) << sock.status();
  ProcessOptions o;
  o.env = {{"NOTIFY_SOCKET", sock->address()},
           {"WATCHDOG_USEC", "200000"},
           {"WATCHDOG_PID", std::nullopt}};
  o.stderr_path = dir + "/err";
  absl::StatusOr<std::unique_ptr<Subprocess>> p =
      Subprocess::Start({RunfilePath("coordinator/ringleader-coordinator"),
                         "--listen=127.0.0.1:0", "--state=" + dir + "/state.db",
                         "--port_file=" + dir + "/port"},
                        o);
  ASSERT_TRUE(p.ok()) << p.status();

  absl::StatusOr<std::vector<std::string>> got =
      sock->WaitForLine("READY=1", kTimeout);
  ASSERT_TRUE(got.ok()) << got.status() << ReadFileOrEmpty(dir + "/err");
  // Nothing before READY (no watchdog ping from a daemon not yet serving).
  ASSERT_EQ(got->size(), 1u) << got->front();
  // By READY the port file is written and the port accepts calls that the
  // recovered coordinator answers.
  const std::string port_text = ReadFileOrEmpty(dir + "/port");
  ASSERT_FALSE(port_text.empty()) << "READY before the port file";
  const int port = std::stoi(port_text);
  EXPECT_TRUE(testing::HasLine(got->back(),
                               absl::StrCat("STATUS=serving on port ", port)))
      << got->back();
  EXPECT_TRUE(Accepts(port));
  EXPECT_EQ(Health(port), grpc::health::v1::HealthCheckResponse::SERVING);

  // The watchdog pings (at half of WATCHDOG_USEC) while it serves.
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<std::vector<std::string>> ping =
        sock->WaitForLine("WATCHDOG=1", kTimeout);
    ASSERT_TRUE(ping.ok()) << ping.status();
  }
  // SIGTERM: STOPPING=1, then a clean exit.
  (*p)->Kill(SIGTERM);
  absl::StatusOr<std::vector<std::string>> stopping =
      sock->WaitForLine("STOPPING=1", kTimeout);
  EXPECT_TRUE(stopping.ok()) << stopping.status();
  EXPECT_EQ((*p)->Wait(kTimeout), 0);
}

TEST(CoordinatorReadyTest, NoReadyWhenStateCannotBeOpened) {
  const std::string dir = Dir("coordinator_not_ready");
  absl::StatusOr<NotifySocket> sock = NotifySocket::Bind();
  ASSERT_TRUE(sock.ok()) << sock.status();
  ProcessOptions o;
  o.env = {{"NOTIFY_SOCKET", sock->address()}};
  absl::StatusOr<ProcessResult> r = RunProcess(
      {RunfilePath("coordinator/ringleader-coordinator"),
       "--listen=127.0.0.1:0", "--state=" + dir + "/no/such/dir/state.db"},
      kTimeout, o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_NE(r->exit_code, 0) << r->err;
  // It exited: everything it sent is already queued on the socket.
  EXPECT_EQ(sock->Receive(absl::ZeroDuration()), std::nullopt);
}

TEST(WorkerReadyTest, ReadyOnlyOnceRegistered) {
  const std::string dir = Dir("worker_ready");
  absl::StatusOr<Coordinator> c = StartCoordinator(dir);
  ASSERT_TRUE(c.ok()) << c.status();
  auto users = v1::UserService::NewStub(grpc::CreateChannel(
      absl::StrCat("127.0.0.1:", c->port), grpc::InsecureChannelCredentials()));

  absl::StatusOr<NotifySocket> sock = NotifySocket::Bind();
  ASSERT_TRUE(sock.ok()) << sock.status();
  ProcessOptions o;
  o.env = {{"NOTIFY_SOCKET", sock->address()},
           {"WATCHDOG_USEC", "200000"},
           {"WATCHDOG_PID", std::nullopt},
           {"OPENBLAS_NUM_THREADS", std::nullopt},
           // The address must come from the flag, not from these.
           {"RINGLEADER_COORDINATOR", std::nullopt},
           {"MASTER_ADDR", std::nullopt},
           {"MASTER_PORT", std::nullopt},
           {"RANK", std::nullopt},
           {"WORLD_SIZE", std::nullopt}};
  o.stderr_path = dir + "/worker.err";
  absl::StatusOr<std::unique_ptr<Subprocess>> w = Subprocess::Start(
      {RunfilePath("worker/ringleader-worker"),
       absl::StrCat("--coordinator=127.0.0.1:", c->port), "--device=cpu"},
      o);
  ASSERT_TRUE(w.ok()) << w.status();

  absl::StatusOr<std::vector<std::string>> got =
      sock->WaitForLine("READY=1", kTimeout);
  ASSERT_TRUE(got.ok()) << got.status() << ReadFileOrEmpty(dir + "/worker.err");
  ASSERT_EQ(got->size(), 1u) << got->front();
  // By READY the coordinator knows the worker.
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1::ListWorkersResponse workers;
  ASSERT_TRUE(
      users->ListWorkers(&ctx, v1::ListWorkersRequest(), &workers).ok());
  ASSERT_EQ(workers.workers_size(), 1);
  EXPECT_THAT(got->back(), HasSubstr(absl::StrCat(
                               "STATUS=registered with 127.0.0.1:", c->port)));

  // Its heartbeats keep the watchdog pinging.
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<std::vector<std::string>> ping =
        sock->WaitForLine("WATCHDOG=1", kTimeout);
    ASSERT_TRUE(ping.ok()) << ping.status();
  }
  (*w)->Kill(SIGTERM);
  absl::StatusOr<std::vector<std::string>> stopping =
      sock->WaitForLine("STOPPING=1", kTimeout);
  EXPECT_TRUE(stopping.ok()) << stopping.status();
  EXPECT_EQ((*w)->Wait(kTimeout), 0) << ReadFileOrEmpty(dir + "/worker.err");
}

TEST(WorkerReadyTest, PyTorchJobEnvironmentFindsTheCoordinator) {
  const std::string dir = Dir("worker_pytorchjob");
  absl::StatusOr<Coordinator> c = StartCoordinator(dir);
  ASSERT_TRUE(c.ok()) << c.status();
  absl::StatusOr<NotifySocket> sock = NotifySocket::Bind();
  ASSERT_TRUE(sock.ok()) << sock.status();
  ProcessOptions o;
  // All a PyTorchJob replica is given.
  o.env = {{"NOTIFY_SOCKET", sock->address()},
           {"WATCHDOG_USEC", std::nullopt},
           {"OPENBLAS_NUM_THREADS", std::nullopt},
           {"RINGLEADER_COORDINATOR", std::nullopt},
           {"MASTER_ADDR", "127.0.0.1"},
           {"MASTER_PORT", std::to_string(c->port)},
           {"RANK", "1"},
           {"WORLD_SIZE", "2"}};
  o.stderr_path = dir + "/worker.err";
  absl::StatusOr<std::unique_ptr<Subprocess>> w = Subprocess::Start(
      {RunfilePath("worker/ringleader-worker"), "--device=cpu"}, o);
  ASSERT_TRUE(w.ok()) << w.status();
  absl::StatusOr<std::vector<std::string>> got =
      sock->WaitForLine("READY=1", kTimeout);
  ASSERT_TRUE(got.ok()) << got.status() << ReadFileOrEmpty(dir + "/worker.err");
  EXPECT_THAT(ReadFileOrEmpty(dir + "/worker.err"),
              HasSubstr("(from MASTER_ADDR:MASTER_PORT); PyTorchJob rank 1 "
                        "of 2"));
  EXPECT_EQ((*w)->Stop(), 0);
}

TEST(WorkerReadyTest, BadPyTorchJobEnvironmentIsAUsageError) {
  ProcessOptions o;
  o.env = {
      {"NOTIFY_SOCKET", std::nullopt}, {"RINGLEADER_COORDINATOR", std::nullopt},
      {"MASTER_ADDR", "127.0.0.1"},    {"MASTER_PORT", "99999"},
      {"RANK", std::nullopt},          {"WORLD_SIZE", std::nullopt}};
  absl::StatusOr<ProcessResult> r = RunProcess(
      {RunfilePath("worker/ringleader-worker"), "--device=cpu"}, kTimeout, o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->exit_code, 2);
  EXPECT_THAT(r->err, HasSubstr("$MASTER_PORT=99999"));
}

}  // namespace
}  // namespace ringleader::testing
