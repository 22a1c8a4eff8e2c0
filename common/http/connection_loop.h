#ifndef RINGLEADER_COMMON_HTTP_CONNECTION_LOOP_H_
#define RINGLEADER_COMMON_HTTP_CONNECTION_LOOP_H_

// Many HTTP connections on one thread (epoll), so that a client that
// connects and then sends slowly, or nothing at all, costs a few bytes and
// never a thread (issue 49: two such connections stopped httplib's
// thread-per-connection pool of two, and with it /metrics and the
// dashboard). The loop accepts, runs the TLS handshake, reads until the
// request is whole (request_head.h), and only then hands it to one of a
// few threads that compute the response (the handler: httplib's routing,
// buffered_server.h); the loop writes the response and closes.
//
// Bounds: a connection has `request_timeout` from accept to a whole request
// (handshake included) and `response_timeout` to take its response, else
// it is closed; at most `max_connections` are open and `max_per_peer` from
// one address (more are closed at accept); at most `max_queued` whole
// requests wait for a thread (more are answered 503). One request per
// connection ("Connection: close"). Memory: per open connection what it has
// sent (at most the request limits) and its response while it is written.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/http/handler_pool.h"
#include "common/http/request_head.h"
#include "common/http/transport.h"

namespace ringleader::http {

struct LoopOptions {
  RequestLimits limits;
  absl::Duration request_timeout = absl::Seconds(10);
  absl::Duration response_timeout = absl::Seconds(30);
  int max_connections = 4096;
  int max_per_peer = 256;
  int threads = 4;
  int max_queued = 1024;
};

// What the loop has done, for tests and metrics.
struct LoopStats {
  int64_t open = 0;       // Connections open now.
  int64_t accepted = 0;   // Since the start.
  int64_t refused = 0;    // Closed at accept: a limit was reached.
  int64_t timed_out = 0;  // Closed at a deadline.
  int64_t served = 0;     // Responses written whole.
  int64_t peak_open = 0;
};

class ConnectionLoop {
 public:
  // `handler` (handler_pool.h) runs on the loop's threads, several at once.
  // Takes `listen_fd` (bound and listening; closed by the destructor) and
  // starts serving on it. `tls`, when not null, must outlive the loop.
  static absl::StatusOr<std::unique_ptr<ConnectionLoop>> Start(
      int listen_fd, Handler handler, TlsContext* tls,
      const LoopOptions& options);
  // Stops the threads and closes every connection.
  ~ConnectionLoop();
  ConnectionLoop(const ConnectionLoop&) = delete;
  ConnectionLoop& operator=(const ConnectionLoop&) = delete;

  LoopStats stats() const;

 private:
  class Impl;
  explicit ConnectionLoop(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ringleader::http

#endif  // RINGLEADER_COMMON_HTTP_CONNECTION_LOOP_H_
