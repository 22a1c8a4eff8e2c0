#include "common/signal_watch.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <csignal>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace ringleader {
namespace {

// What a watch's handler saw, and on which threads.
class Seen {
 public:
  SignalWatch::Handler Handler() {
    return [this](int signal) {
      absl::MutexLock lock(&mu_);
      got_.push_back(signal);
      on_.push_back(std::this_thread::get_id());
    };
  }
  // Waits (at most 30 s) until `n` signals were seen.
  bool WaitFor(size_t n) {
    absl::MutexLock lock(&mu_);
    auto reached = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return got_.size() >= n;
    };
    return mu_.AwaitWithTimeout(absl::Condition(&reached), absl::Seconds(30));
  }
  std::vector<int> got() {
    absl::MutexLock lock(&mu_);
    return got_;
  }
  std::vector<std::thread::id> on() {
    absl::MutexLock lock(&mu_);
    return on_;
  }

 private:
  absl::Mutex mu_;
  std::vector<int> got_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread::id> on_ ABSL_GUARDED_BY(mu_);
};

void SetBlocked(int how, int signal) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, signal);
  ASSERT_EQ(pthread_sigmask(how, &set, nullptr), 0);
}

TEST(SignalWatchTest, SignalsReachTheHandlerOnItsOwnThread) {
  ASSERT_TRUE(SignalWatch::Install({SIGUSR1, SIGUSR2}).ok());
  Seen seen;
  {
    SignalWatch watch(seen.Handler());
    // Sent to the process, as a supervisor sends them.
    ASSERT_EQ(::kill(::getpid(), SIGUSR1), 0);
    ASSERT_TRUE(seen.WaitFor(1));
    ASSERT_EQ(::kill(::getpid(), SIGUSR2), 0);
    ASSERT_TRUE(seen.WaitFor(2));
  }
  // The destructor's own wake-up is not a signal for the handler.
  EXPECT_EQ(seen.got(), (std::vector<int>{SIGUSR1, SIGUSR2}));
  for (const std::thread::id& id : seen.on()) {
    EXPECT_NE(id, std::this_thread::get_id());
  }
}

TEST(SignalWatchTest, ASignalBeforeTheWatchWaitsForIt) {
  ASSERT_TRUE(SignalWatch::Install({SIGUSR1}).ok());
  // The daemons install first thing in main and start the watch later.
  ASSERT_EQ(::kill(::getpid(), SIGUSR1), 0);
  Seen seen;
  SignalWatch watch(seen.Handler());
  ASSERT_TRUE(seen.WaitFor(1));
  EXPECT_EQ(seen.got(), std::vector<int>{SIGUSR1});
}

// Issue 48: OpenBLAS starts its threads before main, unblocked. Here such a
// thread is the only one that does not block the signal, so the kernel must
// hand it the process-directed signal; with the default action it would end
// the process (SIGUSR1's default is to terminate, as SIGTERM's).
TEST(SignalWatchTest, ASignalTakenByAForeignThreadStillReachesTheWatch) {
  ASSERT_TRUE(SignalWatch::Install({SIGUSR1}).ok());
  absl::Notification foreign_ready, foreign_done;
  std::thread foreign([&] {
    SetBlocked(SIG_UNBLOCK, SIGUSR1);
    foreign_ready.Notify();
    // Busy as a BLAS thread between kernels; a sleep the handler interrupts
    // must go on (it is waited out, not cut short to an error).
    while (!foreign_done.WaitForNotificationWithTimeout(absl::Seconds(1))) {
    }
  });
  foreign_ready.WaitForNotification();
  SetBlocked(SIG_BLOCK, SIGUSR1);  // Here and in the watch's thread.
  Seen seen;
  {
    SignalWatch watch(seen.Handler());
    ASSERT_EQ(::kill(::getpid(), SIGUSR1), 0);
    ASSERT_TRUE(seen.WaitFor(1));
  }
  foreign_done.Notify();
  foreign.join();
  SetBlocked(SIG_UNBLOCK, SIGUSR1);
  EXPECT_EQ(seen.got(), std::vector<int>{SIGUSR1});
}

// A signal sent to one thread (tgkill), as `kill -TERM` of a thread id in
// /proc/PID/task does: taken on that thread, whatever it was doing.
TEST(SignalWatchTest, ASignalSentToOneThreadReachesTheWatch) {
  ASSERT_TRUE(SignalWatch::Install({SIGUSR2}).ok());
  absl::Notification ready, done;
  pid_t tid = 0;
  std::thread target([&] {
    tid = static_cast<pid_t>(::syscall(SYS_gettid));
    ready.Notify();
    done.WaitForNotification();
  });
  ready.WaitForNotification();
  Seen seen;
  {
    SignalWatch watch(seen.Handler());
    ASSERT_EQ(::syscall(SYS_tgkill, ::getpid(), tid, SIGUSR2), 0);
    ASSERT_TRUE(seen.WaitFor(1));
  }
  done.Notify();
  target.join();
  EXPECT_EQ(seen.got(), std::vector<int>{SIGUSR2});
}

TEST(SignalWatchTest, ABadSignalNumberIsRefused) {
  EXPECT_FALSE(SignalWatch::Install({0}).ok());
  EXPECT_FALSE(SignalWatch::Install({1000}).ok());
}

}  // namespace
}  // namespace ringleader
