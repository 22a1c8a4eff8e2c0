#include "common/signal_watch.h"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

namespace ringleader {
namespace {

// The pipe the handler writes to, made once by the first Install(). Plain
// ints the handler reads: set before any handler is installed.
int g_read_fd = -1;
int g_write_fd = -1;
// What the destructor writes to end the loop: no signal has number 0.
constexpr unsigned char kStopByte = 0;

absl::Mutex g_install_mu;

// Async-signal-safe: write(2) only, errno kept for the interrupted code. A
// full pipe (64 KiB of unread signals) drops this one: the watch has more
// than enough already to act on.
extern "C" void WriteSignalToPipe(int signal) {
  const int saved = errno;
  const unsigned char byte = static_cast<unsigned char>(signal);
  [[maybe_unused]] const ssize_t n = ::write(g_write_fd, &byte, 1);
  errno = saved;
}

absl::Status MakePipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe2: ", std::strerror(errno)));
  }
  // The handler must never block; the reader does.
  if (::fcntl(fds[1], F_SETFL, O_NONBLOCK) != 0) {
    return absl::InternalError(absl::StrCat("fcntl: ", std::strerror(errno)));
  }
  g_read_fd = fds[0];
  g_write_fd = fds[1];
  return absl::OkStatus();
}

}  // namespace

absl::Status SignalWatch::Install(const std::vector<int>& signals) {
  absl::MutexLock lock(&g_install_mu);
  if (g_write_fd < 0) {
    if (absl::Status s = MakePipe(); !s.ok()) return s;
  }
  sigset_t set;
  sigemptyset(&set);
  for (int s : signals) {
    if (s <= 0 || s > 255) {
      return absl::InvalidArgumentError(absl::StrCat("signal ", s));
    }
    struct sigaction action {};
    action.sa_handler = WriteSignalToPipe;
    // Interrupted reads and writes of other threads go on by themselves.
    action.sa_flags = SA_RESTART;
    sigfillset(&action.sa_mask);
    if (::sigaction(s, &action, nullptr) != 0) {
      return absl::InternalError(
          absl::StrCat("sigaction(", s, "): ", std::strerror(errno)));
    }
    sigaddset(&set, s);
  }
  // A parent may have started us with them blocked (the mask is inherited
  // through exec); the threads started from here on inherit this.
  if (const int err = pthread_sigmask(SIG_UNBLOCK, &set, nullptr); err != 0) {
    return absl::InternalError(
        absl::StrCat("pthread_sigmask: ", std::strerror(err)));
  }
  return absl::OkStatus();
}

SignalWatch::SignalWatch(Handler handler) : handler_(std::move(handler)) {
  thread_ = std::thread([this] { Loop(); });
}

SignalWatch::~SignalWatch() {
  // Blocking is fine here (not a handler); EINTR retried.
  const unsigned char stop = kStopByte;
  while (::write(g_write_fd, &stop, 1) < 0 && errno == EINTR) {
  }
  thread_.join();
}

void SignalWatch::Loop() {
  if (g_read_fd < 0) return;  // Nothing Install()ed: no signal will come.
  // Bounded by the process: it ends when the destructor writes its byte.
  while (true) {
    unsigned char byte = 0;
    const ssize_t n = ::read(g_read_fd, &byte, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || byte == kStopByte) return;
    handler_(byte);
  }
}

}  // namespace ringleader
