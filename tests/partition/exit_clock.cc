#include "tests/partition/exit_clock.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "absl/time/clock.h"

namespace ringleader::testing {

ExitClock::ExitClock(const std::vector<pid_t>& pids)
    : stop_fd_(eventfd(0, EFD_CLOEXEC)), exits_(pids.size()) {
  for (pid_t pid : pids) {
    pidfds_.push_back(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));
  }
  thread_ = std::thread([this] { Watch(); });
}

ExitClock::~ExitClock() {
  const uint64_t one = 1;
  if (write(stop_fd_, &one, sizeof(one)) != sizeof(one)) {
    // Cannot happen on an eventfd below its maximum; the thread would then
    // run until every process has exited.
  }
  thread_.join();
  for (int fd : pidfds_) {
    if (fd >= 0) close(fd);
  }
  close(stop_fd_);
}

std::optional<absl::Time> ExitClock::ExitTime(size_t i,
                                              absl::Duration wait) const {
  absl::MutexLock lock(&mu_);
  if (i >= exits_.size()) return std::nullopt;
  auto seen = [this, i]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return exits_[i].has_value();
  };
  mu_.AwaitWithTimeout(absl::Condition(&seen), wait);
  return exits_[i];
}

void ExitClock::Watch() {
  // Each round records at least one exit or ends: bounded by the number of
  // processes plus the stop event (EINTR aside).
  while (true) {
    std::vector<pollfd> fds = {{stop_fd_, POLLIN, 0}};
    std::vector<size_t> which;
    {
      absl::MutexLock lock(&mu_);
      for (size_t i = 0; i < pidfds_.size(); ++i) {
        if (pidfds_[i] >= 0 && !exits_[i].has_value()) {
          fds.push_back({pidfds_[i], POLLIN, 0});
          which.push_back(i);
        }
      }
    }
    const int n = poll(fds.data(), fds.size(), -1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 || (fds[0].revents & POLLIN) != 0) return;
    const absl::Time now = absl::Now();
    absl::MutexLock lock(&mu_);
    for (size_t k = 1; k < fds.size(); ++k) {
      if (fds[k].revents != 0) exits_[which[k - 1]] = now;
    }
  }
}

}  // namespace ringleader::testing
