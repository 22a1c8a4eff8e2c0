#ifndef RINGLEADER_TESTS_TESTING_SLOW_CLIENTS_H_
#define RINGLEADER_TESTS_TESTING_SLOW_CLIENTS_H_

// Connections to an HTTP port that never finish their request (issue 49):
// a browser's preconnect or a keep-alive tab (idle), a client that stalls
// mid-request (half-sent), or one that sends a byte every few seconds
// (trickling). Held open until destroyed, each from one of `sources` (local
// addresses such as 127.0.0.2, so a per-peer limit sees several peers).
// Not thread-safe.

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace ringleader::testing {

class SlowClients {
 public:
  enum class Kind { kIdle, kHalfSent, kTrickling };

  SlowClients() = default;
  ~SlowClients();
  SlowClients(const SlowClients&) = delete;
  SlowClients& operator=(const SlowClients&) = delete;

  // Opens `n` connections to 127.0.0.1:`port`, kinds in turn (idle,
  // half-sent, trickling, idle, ...), sources in turn. A connection the
  // server refuses or closes at once still counts as opened (StillOpen()
  // tells). `tls`: the bytes sent are the start of a TLS ClientHello
  // record (512 bytes announced), else of an HTTP request.
  absl::Status Open(int port, int n, const std::vector<std::string>& sources,
                    bool tls = false);
  // One more byte on each trickling connection that is still open.
  void Trickle();
  // How many the server has not closed (a read would not return 0 or an
  // error).
  int StillOpen() const;

 private:
  struct Conn {
    int fd;
    Kind kind;
    size_t sent;  // Of the stream's bytes (Bytes()).
  };
  const std::string& Bytes() const;

  bool tls_ = false;
  std::vector<Conn> conns_;
};

// Resident memory of process `pid` (VmRSS), in bytes; 0 when unreadable.
long ResidentBytes(int pid);

}  // namespace ringleader::testing

#endif  // RINGLEADER_TESTS_TESTING_SLOW_CLIENTS_H_
