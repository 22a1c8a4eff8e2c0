#include "common/metrics_http.h"

#include <httplib.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace ringleader::metrics {

namespace {

absl::StatusOr<std::unique_ptr<httplib::Server>> NewServer(
    const HttpServerOptions& options) {
  if (options.tls_cert.empty() != options.tls_key.empty()) {
    return absl::InvalidArgumentError(
        "HTTPS needs both a certificate and its key");
  }
  if (options.tls_cert.empty()) return std::make_unique<httplib::Server>();
  auto server = std::make_unique<httplib::SSLServer>(options.tls_cert.c_str(),
                                                     options.tls_key.c_str());
  if (!server->is_valid()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot serve HTTPS with certificate '", options.tls_cert,
                     "' and key '", options.tls_key,
                     "': unreadable, or the key does not match"));
  }
  return server;
}

}  // namespace

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(
    const std::string& listen, const Registry* registry,
    const HttpServerOptions& options) {
  const size_t colon = listen.rfind(':');
  int port = -1;
  if (colon == std::string::npos ||
      !absl::SimpleAtoi(listen.substr(colon + 1), &port) || port < 0 ||
      port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("metrics address must be HOST:PORT, got '", listen, "'"));
  }
  std::string host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host.empty()) host = "0.0.0.0";

  std::unique_ptr<HttpServer> s(new HttpServer());
  absl::StatusOr<std::unique_ptr<httplib::Server>> made = NewServer(options);
  if (!made.ok()) return made.status();
  s->server_ = *std::move(made);
  // SO_REUSEADDR only: httplib's default also sets SO_REUSEPORT, which lets
  // a second daemon bind the same port and silently take half the scrapes.
  s->server_->set_socket_options([](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  s->server_->new_task_queue = [] { return new httplib::ThreadPool(2); };
  s->server_->Get("/metrics",
                  [registry](const httplib::Request&, httplib::Response& res) {
                    res.set_content(registry->Render(), kContentType);
                  });
  if (options.add_routes) options.add_routes(*s->server_);
  if (port == 0) {
    port = s->server_->bind_to_any_port(host);
    if (port < 0) port = 0;
  } else if (!s->server_->bind_to_port(host, port)) {
    port = 0;
  }
  if (port == 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot serve metrics on ", listen));
  }
  s->port_ = port;
  // Bound already: connections made before the loop runs wait in the
  // backlog.
  httplib::Server* server = s->server_.get();
  std::atomic<bool>* done = &s->done_;
  s->thread_ = std::thread([server, done] {
    server->listen_after_bind();
    *done = true;
  });
  return s;
}

HttpServer::~HttpServer() {
  if (server_ == nullptr) return;
  // stop() only acts on a running loop: wait until the thread got there (or
  // gave up).
  while (thread_.joinable() && !server_->is_running() && !done_) {
    std::this_thread::yield();
  }
  server_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace ringleader::metrics
