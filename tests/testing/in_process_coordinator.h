#ifndef RINGLEADER_TESTS_TESTING_IN_PROCESS_COORDINATOR_H_
#define RINGLEADER_TESTS_TESTING_IN_PROCESS_COORDINATOR_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/worker_credential.h"
#include "coordinator/server/coordinator_server.h"
#include "grpcpp/grpcpp.h"
#include "ringleader/v1/user_service.grpc.pb.h"
#include "ringleader/v1/worker_service.grpc.pb.h"

namespace ringleader::testing {

// The real coordinator (CoordinatorServer: managers, gRPC services, timer
// thread) inside the test process, on a port the OS picks on 127.0.0.1, with
// its state in an in-memory SQLite database. Tests talk to it through real
// stubs, so they exercise the wire protocol and the status codes on it.
class InProcessCoordinator {
 public:
  // Loopback, port 0, ":memory:", the given lease with heartbeats at a third
  // of it, and lease sweeps every 50 ms; adjust the rest before Start.
  static CoordinatorServerConfig Config(
      absl::Duration lease = absl::Seconds(30));

  static absl::StatusOr<std::unique_ptr<InProcessCoordinator>> Start(
      const CoordinatorServerConfig& config = Config());

  int port() const { return server_->port(); }
  // "127.0.0.1:PORT".
  const std::string& target() const { return target_; }
  CoordinatorServer& server() { return *server_; }
  const std::shared_ptr<grpc::Channel>& channel() const { return channel_; }
  // Stubs over channel().
  v1::UserService::Stub& users() { return *users_; }
  v1::WorkerService::Stub& workers() { return *workers_; }
  // A channel with a connection of its own (channels created with equal
  // arguments share one), as separate worker processes would have.
  std::shared_ptr<grpc::Channel> NewChannel();

 private:
  InProcessCoordinator() = default;

  std::unique_ptr<CoordinatorServer> server_;
  std::string target_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::UserService::Stub> users_;
  std::unique_ptr<v1::WorkerService::Stub> workers_;
  int channels_made_ = 0;
};

// A client context whose deadline is `timeout` from now, so no RPC of a test
// can wait forever.
std::unique_ptr<grpc::ClientContext> ClientContext(
    absl::Duration timeout = absl::Seconds(30));
// The same, carrying a worker's credential (x-ringleader-worker metadata),
// as every WorkerService call after Register must.
std::unique_ptr<grpc::ClientContext> ClientContext(
    const WorkerCredential& worker, absl::Duration timeout = absl::Seconds(30));
// The credential a registration gave.
WorkerCredential CredentialOf(const v1::RegisterResponse& registered);

}  // namespace ringleader::testing

#endif  // RINGLEADER_TESTS_TESTING_IN_PROCESS_COORDINATOR_H_
