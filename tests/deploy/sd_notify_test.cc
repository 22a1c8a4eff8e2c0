// common/systemd/notify: messages reach $NOTIFY_SOCKET, the watchdog
// interval comes from $WATCHDOG_USEC/$WATCHDOG_PID, and the watchdog thread
// pings only while its liveness check passes.
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "common/systemd/notify.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/deploy/notify_socket.h"

namespace ringleader {
namespace {

class EnvTest : public ::testing::Test {
 protected:
  void TearDown() override {
    ::unsetenv("NOTIFY_SOCKET");
    ::unsetenv("WATCHDOG_USEC");
    ::unsetenv("WATCHDOG_PID");
  }
};

TEST_F(EnvTest, NotifyWithoutSocketIsANoOp) {
  ::unsetenv("NOTIFY_SOCKET");
  EXPECT_FALSE(SdNotify("READY=1"));
}

TEST_F(EnvTest, NotifyReachesTheSocket) {
  absl::StatusOr<testing::NotifySocket> sock = testing::NotifySocket::Bind();
  ASSERT_TRUE(sock.ok()) << sock.status();
  ::setenv("NOTIFY_SOCKET", sock->address().c_str(), 1);
  EXPECT_TRUE(SdNotify("READY=1\nSTATUS=serving"));
  std::optional<std::string> got = sock->Receive(absl::Seconds(10));
  ASSERT_TRUE(got.has_value());
  EXPECT_TRUE(testing::HasLine(*got, "READY=1")) << *got;
  EXPECT_TRUE(testing::HasLine(*got, "STATUS=serving")) << *got;
}

TEST_F(EnvTest, WatchdogTimeoutFromEnvironment) {
  ::unsetenv("WATCHDOG_USEC");
  EXPECT_EQ(SdWatchdogTimeout(), std::nullopt);
  ::setenv("WATCHDOG_USEC", "20000000", 1);
  EXPECT_EQ(SdWatchdogTimeout(), absl::Seconds(20));
  ::setenv("WATCHDOG_PID", std::to_string(::getpid()).c_str(), 1);
  EXPECT_EQ(SdWatchdogTimeout(), absl::Seconds(20));
  // Meant for another process (a child that inherited the environment).
  ::setenv("WATCHDOG_PID", std::to_string(::getpid() + 1).c_str(), 1);
  EXPECT_EQ(SdWatchdogTimeout(), std::nullopt);
  ::unsetenv("WATCHDOG_PID");
  ::setenv("WATCHDOG_USEC", "junk", 1);
  EXPECT_EQ(SdWatchdogTimeout(), std::nullopt);
}

TEST_F(EnvTest, StartIfEnabledUsesHalfTheTimeout) {
  ::unsetenv("WATCHDOG_USEC");
  EXPECT_EQ(SdWatchdog::StartIfEnabled([] { return true; }), nullptr);
  ::setenv("WATCHDOG_USEC", "30000000", 1);
  std::unique_ptr<SdWatchdog> w =
      SdWatchdog::StartIfEnabled([] { return true; });
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->period(), absl::Seconds(15));
}

// Counts liveness checks and pings; waits on them without sleeping.
struct Recorder {
  absl::Mutex mu;
  int checks ABSL_GUARDED_BY(mu) = 0;
  std::vector<std::string> sent ABSL_GUARDED_BY(mu);
  bool alive ABSL_GUARDED_BY(mu) = true;

  bool Check() {
    absl::MutexLock lock(&mu);
    ++checks;
    return alive;
  }
  void Send(const std::string& s) {
    absl::MutexLock lock(&mu);
    sent.push_back(s);
  }
  // Waits (bounded) until `n` more checks happened than `from`.
  bool WaitChecks(int n) {
    absl::MutexLock lock(&mu);
    const int target = checks + n;
    auto done = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
      return checks >= target;
    };
    return mu.AwaitWithTimeout(absl::Condition(&done), absl::Seconds(30));
  }
};

TEST(SdWatchdogTest, PingsOnlyWhileAlive) {
  Recorder r;
  SdWatchdog w(
      absl::Milliseconds(1), [&r] { return r.Check(); },
      [&r](const std::string& s) { r.Send(s); });
  ASSERT_TRUE(r.WaitChecks(3));
  {
    absl::MutexLock lock(&r.mu);
    ASSERT_GE(r.sent.size(), 2u);  // The check in flight may not have sent.
    for (const std::string& s : r.sent) EXPECT_EQ(s, "WATCHDOG=1");
    r.alive = false;
  }
  // One check may have passed before `alive` flipped; after it, none pings.
  ASSERT_TRUE(r.WaitChecks(1));
  size_t pings;
  {
    absl::MutexLock lock(&r.mu);
    pings = r.sent.size();
  }
  ASSERT_TRUE(r.WaitChecks(5));
  {
    absl::MutexLock lock(&r.mu);
    EXPECT_EQ(r.sent.size(), pings);
    r.alive = true;
  }
  ASSERT_TRUE(r.WaitChecks(3));
  absl::MutexLock lock(&r.mu);
  EXPECT_GT(r.sent.size(), pings) << "pings resume once alive again";
}

TEST(SdWatchdogTest, StopEndsTheThread) {
  Recorder r;
  auto w = std::make_unique<SdWatchdog>(
      absl::Hours(1), [&r] { return r.Check(); },
      [&r](const std::string& s) { r.Send(s); });
  // The first check runs at once; Stop does not wait out the hour.
  {
    absl::MutexLock lock(&r.mu);
    auto first = [&r]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(r.mu) {
      return r.checks >= 1;
    };
    ASSERT_TRUE(
        r.mu.AwaitWithTimeout(absl::Condition(&first), absl::Seconds(30)));
  }
  const absl::Time start = absl::Now();
  w.reset();
  EXPECT_LT(absl::Now() - start, absl::Seconds(30));
  absl::MutexLock lock(&r.mu);
  EXPECT_EQ(r.checks, 1);
}

}  // namespace
}  // namespace ringleader
