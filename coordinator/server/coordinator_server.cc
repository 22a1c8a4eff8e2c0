#include "coordinator/server/coordinator_server.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "coordinator/dashboard/routes.h"
#include "coordinator/server/bad_request_interceptor.h"
#include "coordinator/server/coordinator_metrics.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"

namespace ringleader {
namespace {

// Health is reported for the whole server ("") and per service.
constexpr const char* kHealthServiceNames[] = {
    "ringleader.v1.WorkerService",
    "ringleader.v1.UserService",
};

}  // namespace

absl::StatusOr<std::unique_ptr<CoordinatorServer>> CoordinatorServer::Start(
    const CoordinatorServerConfig& config) {
  if (config.dashboard && config.metrics_listen.empty()) {
    return absl::InvalidArgumentError(
        "--dashboard is served on the metrics server: it needs "
        "--metrics_listen");
  }
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials =
      MakeServerCredentials(config.tls);
  if (!credentials.ok()) return credentials.status();
  if (!config.tls.client_ca.empty()) {
    (*credentials)->SetAuthMetadataProcessor(NewWorkerCertProcessor());
  }
  std::unique_ptr<CoordinatorServer> s(new CoordinatorServer());
  absl::StatusOr<std::unique_ptr<StateStore>> store =
      StateStore::Open(config.state_path);
  if (!store.ok()) return store.status();
  s->store_ = *std::move(store);
  s->timers_ = std::make_unique<ThreadTimerQueue>();
  s->coordinator_ = std::make_unique<Coordinator>(
      config.options, s->store_.get(), RealClock::Get(), s->timers_.get());
  RegisterCoordinatorMetrics(s->coordinator_.get(), RealClock::Get(),
                             &s->metrics_);
  if (absl::Status st = s->coordinator_->Start(); !st.ok()) return st;
  BarrierOutbox::Limits barrier_stream;
  barrier_stream.max_message_bytes =
      static_cast<size_t>(config.max_message_bytes);
  s->worker_service_ = std::make_unique<WorkerServiceImpl>(
      s->coordinator_.get(), barrier_stream);
  s->auth_ = std::make_unique<BearerTokenCheck>(config.auth_token);
  s->user_service_ =
      std::make_unique<UserServiceImpl>(s->coordinator_.get(), s->auth_.get());

  // grpc.health.v1 (Kubernetes' grpc probes) and server reflection. The
  // explicit plugin call also keeps libgrpc++_reflection linked.
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(config.listen, *credentials, &s->port_);
  builder.SetMaxReceiveMessageSize(config.max_message_bytes);
  builder.SetMaxSendMessageSize(config.max_message_bytes);
  builder.RegisterService(s->worker_service_.get());
  builder.RegisterService(s->user_service_.get());
  std::vector<
      std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
      interceptors;
  interceptors.push_back(NewBadRequestInterceptorFactory());
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
  s->server_ = builder.BuildAndStart();
  if (s->server_ == nullptr || s->port_ == 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", config.listen));
  }
  // The state is recovered and both services are registered: SERVING (the
  // default service answers SERVING for "" once the server started).
  if (grpc::HealthCheckServiceInterface* health =
          s->server_->GetHealthCheckService()) {
    for (const char* name : kHealthServiceNames) {
      health->SetServingStatus(name, true);
    }
  }
  if (!config.metrics_listen.empty()) {
    absl::StatusOr<std::unique_ptr<metrics::HttpServer>> http =
        metrics::HttpServer::Start(config.metrics_listen, &s->metrics_,
                                   s->HttpOptions(config));
    if (!http.ok()) return http.status();
    s->metrics_http_ = *std::move(http);
  }
  return s;
}

metrics::HttpServerOptions CoordinatorServer::HttpOptions(
    const CoordinatorServerConfig& config) {
  metrics::HttpServerOptions options;
  if (!config.dashboard) return options;
  options.tls_cert = config.tls.cert;
  options.tls_key = config.tls.key;
  dashboard::DashboardConfig dashboard;
  dashboard.auth_token = config.auth_token;
  dashboard.tls = !config.tls.cert.empty();
  Coordinator* coordinator = coordinator_.get();
  options.add_routes = [coordinator, dashboard](httplib::Server& server) {
    dashboard::AddDashboardRoutes(server, coordinator, dashboard);
  };
  return options;
}

void CoordinatorServer::Shutdown() {
  if (server_ == nullptr) return;
  // Probes see NOT_SERVING (for "" and every service) from here on.
  if (grpc::HealthCheckServiceInterface* health =
          server_->GetHealthCheckService()) {
    health->Shutdown();
  }
  coordinator_->Stop();
  // Pending waits are answered by their deadlines; don't wait for them.
  server_->Shutdown(std::chrono::system_clock::now() +
                    std::chrono::milliseconds(500));
}

CoordinatorServer::~CoordinatorServer() {
  metrics_http_.reset();  // No scrape reads a coordinator going away.
  Shutdown();
  if (server_ != nullptr) server_->Wait();
  // No timer may fire into a coordinator being destroyed.
  if (timers_ != nullptr) timers_->Shutdown();
  coordinator_.reset();
}

}  // namespace ringleader
