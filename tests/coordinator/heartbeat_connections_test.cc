#include "coordinator/heartbeat_connections.h"

#include "gtest/gtest.h"

namespace ringleader {
namespace {

constexpr absl::Duration kLease = absl::Seconds(3);

TEST(HeartbeatConnectionsTest, TheOnlyRecentConnectionSpeaksForTheProcess) {
  HeartbeatConnections c;
  const absl::Time t = absl::FromUnixSeconds(1000);
  EXPECT_FALSE(c.OnlyOver("w", "conn-a", t, kLease));  // Never heard.
  c.Heard("w", "conn-a", t);
  EXPECT_TRUE(c.OnlyOver("w", "conn-a", t + absl::Seconds(1), kLease));
  EXPECT_FALSE(c.OnlyOver("w", "conn-b", t + absl::Seconds(1), kLease));
  // Silent past the window: the close says nothing.
  EXPECT_FALSE(c.OnlyOver("w", "conn-a", t + kLease, kLease));
}

TEST(HeartbeatConnectionsTest, TwoRecentConnectionsMeanAReplacedChannel) {
  HeartbeatConnections c;
  const absl::Time t = absl::FromUnixSeconds(1000);
  c.Heard("w", "old", t);
  c.Heard("w", "new", t + absl::Seconds(1));
  // A heartbeat held back on the old connection arrives last.
  c.Heard("w", "old", t + absl::Seconds(2));
  EXPECT_FALSE(c.OnlyOver("w", "old", t + absl::Seconds(2), kLease));
  EXPECT_FALSE(c.OnlyOver("w", "new", t + absl::Seconds(2), kLease));
  // Once the old one is quiet for a lease, the new one alone speaks.
  c.Heard("w", "new", t + absl::Seconds(5));
  EXPECT_TRUE(c.OnlyOver("w", "new", t + absl::Seconds(5), kLease));
  c.Forget("w");
  EXPECT_FALSE(c.OnlyOver("w", "new", t + absl::Seconds(5), kLease));
}

}  // namespace
}  // namespace ringleader
