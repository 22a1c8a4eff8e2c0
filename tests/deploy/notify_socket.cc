#include "tests/deploy/notify_socket.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace ringleader::testing {

absl::StatusOr<NotifySocket> NotifySocket::Bind() {
  static std::atomic<int> counter{0};
  const std::string name = absl::StrCat("ringleader-test-notify-", ::getpid(),
                                        "-", counter.fetch_add(1));
  int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError(std::strerror(errno));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  // Abstract: a leading NUL, then the name (no terminator).
  std::memcpy(addr.sun_path + 1, name.data(), name.size());
  const socklen_t len =
      static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0) {
    const int err = errno;
    ::close(fd);
    return absl::InternalError(absl::StrCat("bind: ", std::strerror(err)));
  }
  return NotifySocket(fd, "@" + name);
}

NotifySocket::NotifySocket(NotifySocket&& other) noexcept
    : fd_(other.fd_), address_(std::move(other.address_)) {
  other.fd_ = -1;
}

NotifySocket::~NotifySocket() {
  if (fd_ >= 0) ::close(fd_);
}

std::optional<std::string> NotifySocket::Receive(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    const int64_t ms =
        std::max<int64_t>(0, absl::ToInt64Milliseconds(deadline - absl::Now()));
    pollfd p{fd_, POLLIN, 0};
    const int n = ::poll(&p, 1, static_cast<int>(ms));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    char buf[4096];
    const ssize_t got = ::recv(fd_, buf, sizeof(buf), 0);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return std::nullopt;
    return std::string(buf, static_cast<size_t>(got));
  }
}

absl::StatusOr<std::vector<std::string>> NotifySocket::WaitForLine(
    const std::string& line, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  std::vector<std::string> got;
  // Bounded: each pass either receives or reaches the deadline.
  while (absl::Now() < deadline) {
    std::optional<std::string> m = Receive(deadline - absl::Now());
    if (!m.has_value()) break;
    got.push_back(*m);
    if (HasLine(*m, line)) return got;
  }
  return absl::DeadlineExceededError(
      absl::StrCat("no ", line, " within ", absl::FormatDuration(timeout),
                   "; received [", absl::StrJoin(got, " | "), "]"));
}

bool HasLine(const std::string& datagram, const std::string& line) {
  for (absl::string_view l : absl::StrSplit(datagram, '\n')) {
    if (l == line) return true;
  }
  return false;
}

}  // namespace ringleader::testing
