#include "common/signal_watch.h"

#include <unistd.h>

#include <csignal>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"

namespace ringleader {
namespace {

TEST(SignalWatchTest, SignalsReachTheHandlerOnItsOwnThread) {
  // Before any other thread starts (gtest_main starts none).
  ASSERT_TRUE(SignalWatch::Block({SIGUSR1, SIGUSR2}).ok());
  absl::Mutex mu;
  std::vector<int> got;
  std::vector<std::thread::id> on;
  const auto count_is = [&](size_t n) {
    return [&, n]()
               ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return got.size() == n; };
  };
  {
    SignalWatch watch({SIGUSR1, SIGUSR2}, [&](int signal) {
      absl::MutexLock lock(&mu);
      got.push_back(signal);
      on.push_back(std::this_thread::get_id());
    });
    // Sent to the process, as a supervisor sends them: blocked everywhere,
    // they wait for the watch's sigwait.
    ASSERT_EQ(::kill(::getpid(), SIGUSR1), 0);
    {
      absl::MutexLock lock(&mu);
      auto one = count_is(1);
      ASSERT_TRUE(
          mu.AwaitWithTimeout(absl::Condition(&one), absl::Seconds(30)));
    }
    ASSERT_EQ(::kill(::getpid(), SIGUSR2), 0);
    absl::MutexLock lock(&mu);
    auto two = count_is(2);
    ASSERT_TRUE(mu.AwaitWithTimeout(absl::Condition(&two), absl::Seconds(30)));
  }
  // The destructor's own wake-up is not a signal for the handler.
  absl::MutexLock lock(&mu);
  EXPECT_EQ(got, (std::vector<int>{SIGUSR1, SIGUSR2}));
  for (const std::thread::id& id : on) {
    EXPECT_NE(id, std::this_thread::get_id());
  }
}

}  // namespace
}  // namespace ringleader
