#ifndef RINGLEADER_COORDINATOR_SERVER_COORDINATOR_SERVER_H_
#define RINGLEADER_COORDINATOR_SERVER_COORDINATOR_SERVER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/clock.h"
#include "common/metrics.h"
#include "common/metrics_http.h"
#include "common/thread_timer_queue.h"
#include "common/tls_credentials.h"
#include "coordinator/coordinator.h"
#include "coordinator/server/call_auth.h"
#include "coordinator/server/user_service_impl.h"
#include "coordinator/server/worker_service_impl.h"
#include "coordinator/state_store.h"
#include "grpcpp/grpcpp.h"

namespace ringleader {

struct CoordinatorServerConfig {
  std::string listen = "127.0.0.1:7070";  // Port 0 picks a free port.
  std::string state_path = "ringleader-state.db";
  CoordinatorOptions options;
  int max_message_bytes = 16 << 20;
  // HOST:PORT serving Prometheus metrics at /metrics (port 0 picks a free
  // port); empty: no metrics server.
  std::string metrics_listen;
  // Serve the dashboard (coordinator/dashboard/) on the metrics server;
  // needs metrics_listen. With a TLS certificate that server speaks HTTPS,
  // with an auth token its pages need it.
  bool dashboard = false;
  // TLS when a certificate is named; with a client CA, WorkerService calls
  // need a client certificate it signed (coordinator/server/call_auth.h).
  ServerTlsFiles tls;
  // Non-empty: SubmitJob, CancelJob and DeleteJob need "authorization: Bearer
  // <it>".
  std::string auth_token;
};

// The coordinator process minus flag parsing: opens the state, recovers the
// jobs, and serves both services (plus grpc.health.v1) last, once everything
// is ready. Thread-safe.
class CoordinatorServer {
 public:
  static absl::StatusOr<std::unique_ptr<CoordinatorServer>> Start(
      const CoordinatorServerConfig& config);
  ~CoordinatorServer();

  int port() const { return port_; }
  // The metrics server's port (0 without one).
  int metrics_port() const {
    return metrics_http_ != nullptr ? metrics_http_->port() : 0;
  }
  metrics::Registry& metrics() { return metrics_; }
  Coordinator& coordinator() { return *coordinator_; }
  void Wait() { server_->Wait(); }
  void Shutdown();

 private:
  CoordinatorServer() = default;
  // The metrics server's: without the dashboard plain HTTP, /metrics only,
  // as before; with it HTTPS when the API has a certificate, and the pages.
  metrics::HttpServerOptions HttpOptions(const CoordinatorServerConfig& config);

  metrics::Registry metrics_;
  std::unique_ptr<StateStore> store_;
  std::unique_ptr<ThreadTimerQueue> timers_;
  std::unique_ptr<Coordinator> coordinator_;
  std::unique_ptr<BearerTokenCheck> auth_;
  std::unique_ptr<WorkerServiceImpl> worker_service_;
  std::unique_ptr<UserServiceImpl> user_service_;
  std::unique_ptr<grpc::Server> server_;
  // Reads the coordinator: stopped first.
  std::unique_ptr<metrics::HttpServer> metrics_http_;
  int port_ = 0;
};

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_SERVER_COORDINATOR_SERVER_H_
