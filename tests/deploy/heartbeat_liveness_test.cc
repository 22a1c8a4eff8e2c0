// The worker's watchdog liveness source: CoordinatorClient::LastHeartbeatLoop
// advances with every beat (also while the coordinator is unreachable: the
// thread is alive), and reads InfinitePast once the heartbeat thread ended,
// by StopHeartbeats or by giving up on an unreachable coordinator.
#include <unistd.h>

#include <memory>

#include "gtest/gtest.h"
#include "tests/testing/eventually.h"
#include "tests/testing/in_process_coordinator.h"
#include "worker/coordinator_client.h"

namespace ringleader {
namespace {

using testing::InProcessCoordinator;

using testing::Eventually;

// Waits for `n` further beats.
bool Beats(const CoordinatorClient& client, int n) {
  // The thread may not have begun yet.
  if (!Eventually([&] {
        return client.LastHeartbeatLoop() != absl::InfiniteFuture();
      })) {
    return false;
  }
  for (int i = 0; i < n; ++i) {
    const absl::Time last = client.LastHeartbeatLoop();
    if (!Eventually([&] { return client.LastHeartbeatLoop() > last; })) {
      return false;
    }
  }
  return true;
}

CoordinatorClient::Options Options(absl::Duration unreachable_timeout) {
  CoordinatorClient::Options o;
  o.hostname = "liveness-test";
  o.pid = static_cast<int>(::getpid());
  o.unreachable_timeout = unreachable_timeout;
  o.rpc_timeout = absl::Seconds(1);
  o.max_backoff = absl::Milliseconds(50);
  return o;
}

TEST(HeartbeatLivenessTest, AdvancesWhileBeatingAndEndsWithTheThread) {
  absl::StatusOr<std::unique_ptr<InProcessCoordinator>> c =
      InProcessCoordinator::Start(
          InProcessCoordinator::Config(absl::Milliseconds(300)));
  ASSERT_TRUE(c.ok()) << c.status();
  CoordinatorClient client((*c)->NewChannel(), Options(absl::Minutes(5)));
  EXPECT_EQ(client.LastHeartbeatLoop(), absl::InfiniteFuture());
  {
    absl::Status s = client.Register();
    ASSERT_TRUE(s.ok()) << s;
  }
  EXPECT_EQ(client.LastHeartbeatLoop(), absl::InfiniteFuture())
      << "no beat before the thread starts";
  client.StartHeartbeats([](const v1::GenerationAbort&) {});
  ASSERT_TRUE(Beats(client, 3));
  EXPECT_LT(absl::Now() - client.LastHeartbeatLoop(), absl::Seconds(10));
  client.StopHeartbeats();
  EXPECT_EQ(client.LastHeartbeatLoop(), absl::InfinitePast());
}

TEST(HeartbeatLivenessTest, AliveWhileUnreachableUntilItGivesUp) {
  absl::StatusOr<std::unique_ptr<InProcessCoordinator>> c =
      InProcessCoordinator::Start(
          InProcessCoordinator::Config(absl::Milliseconds(300)));
  ASSERT_TRUE(c.ok()) << c.status();
  CoordinatorClient client((*c)->NewChannel(), Options(absl::Seconds(2)));
  {
    absl::Status s = client.Register();
    ASSERT_TRUE(s.ok()) << s;
  }
  client.StartHeartbeats([](const v1::GenerationAbort&) {});
  ASSERT_TRUE(Beats(client, 2));
  (*c)->server().Shutdown();
  // Failed beats are beats: the thread is alive, retrying.
  ASSERT_TRUE(Beats(client, 2));
  // Past unreachable_timeout the thread ends, and so does the liveness.
  EXPECT_TRUE(Eventually(
      [&] { return client.LastHeartbeatLoop() == absl::InfinitePast(); }));
}

}  // namespace
}  // namespace ringleader
