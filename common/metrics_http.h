#ifndef RINGLEADER_COMMON_METRICS_HTTP_H_
#define RINGLEADER_COMMON_METRICS_HTTP_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "common/metrics.h"

namespace httplib {
class Server;
}

namespace ringleader::metrics {

struct HttpServerOptions {
  // Both set: HTTPS with this PEM certificate chain and key (Debian's
  // cpp-httplib is built with OpenSSL). No client certificate is asked for.
  std::string tls_cert;
  std::string tls_key;
  // More routes beside /metrics (the coordinator's dashboard), added before
  // the server starts.
  std::function<void(httplib::Server&)> add_routes;
};

// Serves GET /metrics (Registry::Render, text format 0.0.4) over HTTP with
// cpp-httplib, on two threads of its own. Stops when destroyed.
class HttpServer {
 public:
  // `listen` is HOST:PORT ("[::1]:9464" for IPv6); port 0 picks a free port.
  // `registry` must outlive the server.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(
      const std::string& listen, const Registry* registry,
      const HttpServerOptions& options = {});
  ~HttpServer();

  int port() const { return port_; }

 private:
  HttpServer() = default;

  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  std::atomic<bool> done_{false};  // listen_after_bind returned.
  int port_ = 0;
};

}  // namespace ringleader::metrics

#endif  // RINGLEADER_COMMON_METRICS_HTTP_H_
