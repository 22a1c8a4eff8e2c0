// VirtualNetwork: hosts reach each other over the bridge, drop rules cut
// exactly what they say and Heal restores it, programs run on a host with
// its address and a /dev/shm of their own, and namespaces do not outlive
// their test process.
#include "tests/testing/netns.h"

#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/process.h"

namespace ringleader::testing {
namespace {

using ::testing::HasSubstr;

constexpr absl::Duration kConnected = absl::Seconds(10);
// How long a connect waits where a rule drops its SYN: long enough for a
// slow machine to answer when it is not dropped.
constexpr absl::Duration kDropped = absl::Seconds(2);

class VirtualNetworkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (absl::Status s = VirtualNetwork::Supported(); !s.ok()) {
      GTEST_SKIP() << "skipped: " << s.message();
    }
    auto net = VirtualNetwork::Create({"a", "b", "c"});
    ASSERT_TRUE(net.ok()) << net.status();
    net_ = *std::move(net);
    auto listener = net_->ListenTcp("b");
    ASSERT_TRUE(listener.ok()) << listener.status();
    listen_fd_ = listener->first;
    port_ = listener->second;
  }
  void TearDown() override {
    if (listen_fd_ >= 0) close(listen_fd_);
  }

  // A connection from `from` to b's listener: OK, or why not.
  absl::Status ConnectToB(const std::string& from, absl::Duration timeout) {
    auto fd = net_->ConnectTcp(from, net_->Address("b"), port_, timeout);
    if (!fd.ok()) return fd.status();
    close(*fd);
    // Take it off the backlog so the next one finds room.
    const int accepted = accept(listen_fd_, nullptr, nullptr);
    if (accepted >= 0) close(accepted);
    return absl::OkStatus();
  }

  std::unique_ptr<VirtualNetwork> net_;
  int listen_fd_ = -1;
  int port_ = 0;
};

TEST_F(VirtualNetworkTest, HostsReachEachOtherOverTheBridge) {
  EXPECT_EQ(net_->Address("a"), "198.18.0.1");
  EXPECT_EQ(net_->Address("c"), "198.18.0.3");
  EXPECT_TRUE(ConnectToB("a", kConnected).ok());
  EXPECT_TRUE(ConnectToB("c", kConnected).ok());
}

TEST_F(VirtualNetworkTest, IsolateCutsTheHostOffUntilHealed) {
  ASSERT_TRUE(ConnectToB("a", kConnected).ok());
  ASSERT_TRUE(net_->Isolate("b").ok());
  EXPECT_TRUE(absl::IsDeadlineExceeded(ConnectToB("a", kDropped)));
  EXPECT_TRUE(absl::IsDeadlineExceeded(ConnectToB("c", kDropped)));
  auto dropped = net_->Heal();
  ASSERT_TRUE(dropped.ok()) << dropped.status();
  EXPECT_GE(*dropped, 2);  // At least each connection's first SYN.
  EXPECT_TRUE(ConnectToB("a", kConnected).ok());
  // Nothing left to drop.
  auto again = net_->Heal();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, 0);
}

TEST_F(VirtualNetworkTest, DropFromToCutsOnlyThatPair) {
  ASSERT_TRUE(net_->DropFromTo("a", "b").ok());
  EXPECT_TRUE(absl::IsDeadlineExceeded(ConnectToB("a", kDropped)));
  EXPECT_TRUE(ConnectToB("c", kConnected).ok());
  ASSERT_TRUE(net_->Heal().ok());
  absl::Status s = ConnectToB("a", kConnected);
  EXPECT_TRUE(s.ok()) << s;
}

TEST_F(VirtualNetworkTest, UnknownHostsAreErrors) {
  EXPECT_TRUE(absl::IsNotFound(net_->Isolate("z")));
  EXPECT_TRUE(absl::IsNotFound(net_->DropFromTo("a", "z")));
  EXPECT_TRUE(absl::IsInvalidArgument(VirtualNetwork::Create({"A"}).status()));
  EXPECT_TRUE(
      absl::IsInvalidArgument(VirtualNetwork::Create({"a", "a"}).status()));
}

TEST_F(VirtualNetworkTest, ProgramsRunWithTheHostsAddressAndOwnShm) {
  const std::string marker = absl::StrCat("rlvn-test-", getpid(), "-", port_);
  std::vector<std::string> argv = net_->CommandPrefix("a");
  for (const char* arg :
       {"/bin/sh", "-c",
        "touch /dev/shm/$1 && ls /dev/shm && cat /proc/net/fib_trie", "sh",
        marker.c_str()}) {
    argv.push_back(arg);
  }
  auto r = RunProcess(argv, absl::Seconds(30));
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->exit_code, 0) << r->err;
  EXPECT_THAT(r->out, HasSubstr(marker));
  EXPECT_THAT(r->out, HasSubstr("198.18.0.1"));
  // The root namespace's /dev/shm never saw it.
  EXPECT_FALSE(std::filesystem::exists("/dev/shm/" + marker));
}

TEST_F(VirtualNetworkTest, NamespacesGoWithTheNetwork) {
  const std::string ns = net_->Namespace("a");
  EXPECT_TRUE(std::filesystem::exists("/run/netns/" + ns));
  net_.reset();
  EXPECT_FALSE(std::filesystem::exists("/run/netns/" + ns));
}

TEST_F(VirtualNetworkTest, StaleNamespacesOfDeadTestsAreRemoved) {
  // A pid that is certainly gone: a child that exited and was reaped.
  auto child = Subprocess::Start({"/bin/true"});
  ASSERT_TRUE(child.ok()) << child.status();
  const pid_t pid = (*child)->pid();
  ASSERT_EQ((*child)->Wait(absl::Seconds(30)), 0);
  const std::string stale = absl::StrCat("rlvn", pid, "-x");
  auto added =
      RunProcess({"/bin/sh", "-c",
                  "PATH=/usr/sbin:/sbin:$PATH ip netns add \"$0\"", stale},
                 absl::Seconds(30));
  ASSERT_TRUE(added.ok() && added->exit_code == 0)
      << (added.ok() ? added->err : added.status().ToString());
  ASSERT_TRUE(std::filesystem::exists("/run/netns/" + stale));
  VirtualNetwork::RemoveStale();
  EXPECT_FALSE(std::filesystem::exists("/run/netns/" + stale));
  // Ours (a live pid) stay.
  EXPECT_TRUE(std::filesystem::exists("/run/netns/" + net_->Namespace("a")));
}

}  // namespace
}  // namespace ringleader::testing
