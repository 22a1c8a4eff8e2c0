#ifndef RINGLEADER_COMMON_HTTP_BUFFERED_SERVER_H_
#define RINGLEADER_COMMON_HTTP_BUFFERED_SERVER_H_

// httplib's routing and HTTP handling over a request that has already
// arrived whole, answering with the response's bytes: httplib parses,
// routes and writes as it does for its own sockets, and the connection
// loop (connection_loop.h) owns the sockets, so no thread ever waits on a
// client. Add routes (Get, Post, ...) before the first Respond().

#include <httplib.h>

#include <string>

#include "absl/strings/string_view.h"

namespace ringleader::http {

class BufferedServer : public httplib::Server {
 public:
  // The response to `request` (one whole request, as CheckRequest
  // found it) from `peer_ip`:`peer_port`, with "Connection: close".
  // Thread-safe once the routes are added.
  std::string Respond(absl::string_view request, const std::string& peer_ip,
                      int peer_port);
};

}  // namespace ringleader::http

#endif  // RINGLEADER_COMMON_HTTP_BUFFERED_SERVER_H_
