#ifndef RINGLEADER_TESTS_DEPLOY_NOTIFY_SOCKET_H_
#define RINGLEADER_TESTS_DEPLOY_NOTIFY_SOCKET_H_

// What systemd does for a Type=notify unit, for tests: a bound unix datagram
// socket (abstract, so the path length of $TEST_TMPDIR does not matter) whose
// name goes in $NOTIFY_SOCKET, and bounded waits for the daemon's messages.

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace ringleader::testing {

class NotifySocket {
 public:
  static absl::StatusOr<NotifySocket> Bind();
  NotifySocket(NotifySocket&& other) noexcept;
  NotifySocket& operator=(NotifySocket&&) = delete;
  ~NotifySocket();

  // The value for $NOTIFY_SOCKET ("@name").
  const std::string& address() const { return address_; }

  // The next datagram, or nullopt when none arrives within `timeout`.
  std::optional<std::string> Receive(absl::Duration timeout);

  // Receives until a datagram has a line equal to `line` ("READY=1");
  // returns every datagram received, the matching one last. DeadlineExceeded
  // (listing what came) when none does within `timeout`.
  absl::StatusOr<std::vector<std::string>> WaitForLine(const std::string& line,
                                                       absl::Duration timeout);

 private:
  NotifySocket(int fd, std::string address)
      : fd_(fd), address_(std::move(address)) {}
  int fd_;
  std::string address_;
};

// Whether `datagram` has the line `line` (messages are newline-separated
// VAR=value assignments).
bool HasLine(const std::string& datagram, const std::string& line);

}  // namespace ringleader::testing

#endif  // RINGLEADER_TESTS_DEPLOY_NOTIFY_SOCKET_H_
