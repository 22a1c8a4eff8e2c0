#ifndef RINGLEADER_COMMON_METRICS_HTTP_H_
#define RINGLEADER_COMMON_METRICS_HTTP_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/http/buffered_server.h"
#include "common/http/connection_loop.h"
#include "common/http/transport.h"
#include "common/metrics.h"

namespace ringleader::metrics {

struct HttpServerOptions {
  // Both set: HTTPS with this PEM certificate chain and key (Debian's
  // cpp-httplib is built with OpenSSL). No client certificate is asked for.
  std::string tls_cert;
  std::string tls_key;
  // More routes beside /metrics (the coordinator's dashboard), added before
  // the server starts.
  std::function<void(httplib::Server&)> add_routes;
  // Time limits, connection limits and threads (common/http/
  // connection_loop.h): a slow or idle client holds bytes, not a thread.
  http::LoopOptions loop;
};

// Serves GET /metrics (Registry::Render, text format 0.0.4) over HTTP or
// HTTPS: connections on one epoll thread (common/http/connection_loop.h),
// requests routed and answered by cpp-httplib on a few threads
// (common/http/buffered_server.h). Stops when destroyed.
class HttpServer {
 public:
  // `listen` is HOST:PORT ("[::1]:9464" for IPv6); port 0 picks a free port.
  // `registry` must outlive the server.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(
      const std::string& listen, const Registry* registry,
      const HttpServerOptions& options = {});
  ~HttpServer();

  int port() const { return port_; }
  http::LoopStats stats() const { return loop_->stats(); }

 private:
  HttpServer() = default;

  std::unique_ptr<http::BufferedServer> server_;
  std::unique_ptr<http::TlsContext> tls_;
  // Last: stopped first, before what its threads use.
  std::unique_ptr<http::ConnectionLoop> loop_;
  int port_ = 0;
};

}  // namespace ringleader::metrics

#endif  // RINGLEADER_COMMON_METRICS_HTTP_H_
