#include "tests/testing/in_process_coordinator.h"

#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"

namespace ringleader::testing {

CoordinatorServerConfig InProcessCoordinator::Config(absl::Duration lease) {
  CoordinatorServerConfig config;
  config.listen = "127.0.0.1:0";
  config.state_path = ":memory:";
  config.options.lease = lease;
  config.options.heartbeat_interval = lease / 3;
  config.options.sweep_interval = absl::Milliseconds(50);
  return config;
}

absl::StatusOr<std::unique_ptr<InProcessCoordinator>>
InProcessCoordinator::Start(const CoordinatorServerConfig& config) {
  absl::StatusOr<std::unique_ptr<CoordinatorServer>> server =
      CoordinatorServer::Start(config);
  if (!server.ok()) return server.status();
  std::unique_ptr<InProcessCoordinator> c(new InProcessCoordinator());
  c->server_ = *std::move(server);
  c->target_ = absl::StrCat("127.0.0.1:", c->server_->port());
  c->channel_ = c->NewChannel();
  c->users_ = v1::UserService::NewStub(c->channel_);
  c->workers_ = v1::WorkerService::NewStub(c->channel_);
  return c;
}

std::shared_ptr<grpc::Channel> InProcessCoordinator::NewChannel() {
  grpc::ChannelArguments args;
  // An argument gRPC ignores, different per channel: no connection sharing.
  args.SetInt("ringleader.test_channel", channels_made_++);
  return grpc::CreateCustomChannel(target_, grpc::InsecureChannelCredentials(),
                                   args);
}

std::unique_ptr<grpc::ClientContext> ClientContext(absl::Duration timeout) {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() +
                    absl::ToChronoMilliseconds(timeout));
  return ctx;
}

std::unique_ptr<grpc::ClientContext> ClientContext(
    const WorkerCredential& worker, absl::Duration timeout) {
  std::unique_ptr<grpc::ClientContext> ctx = ClientContext(timeout);
  AttachWorkerCredential(ctx.get(), worker);
  return ctx;
}

WorkerCredential CredentialOf(const v1::RegisterResponse& registered) {
  return {registered.worker_id(), registered.worker_token()};
}

}  // namespace ringleader::testing
