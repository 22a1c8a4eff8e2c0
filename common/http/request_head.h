#ifndef RINGLEADER_COMMON_HTTP_REQUEST_HEAD_H_
#define RINGLEADER_COMMON_HTTP_REQUEST_HEAD_H_

// Whether the bytes a client has sent so far hold one whole HTTP/1.1
// request: its head (up to the blank line) and, where Content-Length says
// so, its body. The connection loop (connection_loop.h) reads until then
// and only then hands the request to a thread, so a client that sends
// slowly holds bytes, never a thread. Not a parser of the request: httplib
// parses it afterwards.

#include <cstddef>

#include "absl/strings/string_view.h"

namespace ringleader::http {

struct RequestLimits {
  size_t max_head_bytes = 64 << 10;
  size_t max_body_bytes = 1 << 20;
};

struct RequestProgress {
  enum class Kind {
    kIncomplete,  // Read more.
    kComplete,    // `bytes` are the request.
    kTooLarge,    // Head or body past the limits: 431 or 413.
    kBad,         // A Content-Length that is no number, or chunked: 400.
  };
  Kind kind = Kind::kIncomplete;
  size_t bytes = 0;
  int status = 0;  // The answer for kTooLarge and kBad.
};

RequestProgress CheckRequest(absl::string_view received,
                             const RequestLimits& limits);

}  // namespace ringleader::http

#endif  // RINGLEADER_COMMON_HTTP_REQUEST_HEAD_H_
