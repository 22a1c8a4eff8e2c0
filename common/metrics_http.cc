#include "common/metrics_http.h"

#include <netdb.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace ringleader::metrics {
namespace {

// A listening, non-blocking socket on `host`:`port` (0: any free port), and
// the port it got.
absl::StatusOr<std::pair<int, int>> Listen(const std::string& host, int port,
                                           const std::string& listen) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints,
                    &found) != 0 ||
      found == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("metrics address '", listen, "': unknown host"));
  }
  const int fd =
      ::socket(found->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  // SO_REUSEADDR only: SO_REUSEPORT (httplib's default) lets a second
  // daemon bind the same port and silently take half the scrapes.
  int yes = 1;
  const bool ok =
      fd >= 0 &&
      ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes)) == 0 &&
      ::bind(fd, found->ai_addr, found->ai_addrlen) == 0 &&
      ::listen(fd, SOMAXCONN) == 0;
  ::freeaddrinfo(found);
  sockaddr_storage bound{};
  socklen_t len = sizeof(bound);
  if (!ok || ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len)) {
    const std::string why = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    return absl::UnavailableError(
        absl::StrCat("cannot serve metrics on ", listen, ": ", why));
  }
  const int got = ntohs(bound.ss_family == AF_INET6
                            ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                            : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  return std::make_pair(fd, got);
}

// Room for `connections` descriptors beyond the process's others: the soft
// limit raised toward the hard one (often 1024 soft, far more hard).
void AllowDescriptors(int connections) {
  rlimit r{};
  if (::getrlimit(RLIMIT_NOFILE, &r) != 0) return;
  const rlim_t want = static_cast<rlim_t>(connections) + 1024;
  if (r.rlim_cur >= want) return;
  r.rlim_cur = std::min(want, r.rlim_max);
  ::setrlimit(RLIMIT_NOFILE, &r);
}

absl::StatusOr<std::pair<std::string, int>> HostPort(
    const std::string& listen) {
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
  return std::make_pair(host, port);
}

}  // namespace

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(
    const std::string& listen, const Registry* registry,
    const HttpServerOptions& options) {
  absl::StatusOr<std::pair<std::string, int>> where = HostPort(listen);
  if (!where.ok()) return where.status();
  std::unique_ptr<HttpServer> s(new HttpServer());
  if (options.tls_cert.empty() != options.tls_key.empty()) {
    return absl::InvalidArgumentError(
        "HTTPS needs both a certificate and its key");
  }
  if (!options.tls_cert.empty()) {
    absl::StatusOr<std::unique_ptr<http::TlsContext>> tls =
        http::TlsContext::FromFiles(options.tls_cert, options.tls_key);
    if (!tls.ok()) return tls.status();
    s->tls_ = *std::move(tls);
  }
  s->server_ = std::make_unique<http::BufferedServer>();
  s->server_->Get("/metrics",
                  [registry](const httplib::Request&, httplib::Response& res) {
                    res.set_content(registry->Render(), kContentType);
                  });
  if (options.add_routes) options.add_routes(*s->server_);
  absl::StatusOr<std::pair<int, int>> bound =
      Listen(where->first, where->second, listen);
  if (!bound.ok()) return bound.status();
  s->port_ = bound->second;
  AllowDescriptors(options.loop.max_connections);
  http::BufferedServer* server = s->server_.get();
  absl::StatusOr<std::unique_ptr<http::ConnectionLoop>> loop =
      http::ConnectionLoop::Start(
          bound->first,
          [server](absl::string_view request, const std::string& ip, int port) {
            return server->Respond(request, ip, port);
          },
          s->tls_.get(), options.loop);
  if (!loop.ok()) return loop.status();  // It closed the socket.
  s->loop_ = *std::move(loop);
  return s;
}

HttpServer::~HttpServer() = default;

}  // namespace ringleader::metrics
