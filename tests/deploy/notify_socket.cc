#include "tests/deploy/notify_socket.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace ringleader::testing {

absl::StatusOr<NotifySocket> NotifySocket::Bind() {
  int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError(std::strerror(errno));
  // Autobind: the kernel picks a free abstract name, so parallel tests (in
  // PID namespaces sharing one network namespace) never collide.
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(sa_family_t)) !=
      0) {
    const int err = errno;
    ::close(fd);
    return absl::InternalError(absl::StrCat("bind: ", std::strerror(err)));
  }
  socklen_t len = sizeof(addr);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0 ||
      len <= offsetof(sockaddr_un, sun_path) + 1 || addr.sun_path[0] != '\0') {
    ::close(fd);
    return absl::InternalError("getsockname: no abstract name");
  }
  // An abstract name: a leading NUL, then the name (no terminator).
  const std::string name(addr.sun_path + 1,
                         len - offsetof(sockaddr_un, sun_path) - 1);
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
