#include "worker/comm/collective_wait.h"

#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace ringleader {
namespace {

// A communicator whose operations finish when the test opens the gate, the
// way a real one's wait for a peer that has not sent its part blocks.
class GatedCommunicator : public Communicator {
 public:
  class GatedWork : public Work {
   public:
    explicit GatedWork(GatedCommunicator* c) : c_(c) {}
    absl::Status Wait() override { return c_->Block(); }

   private:
    GatedCommunicator* const c_;
  };
  int rank() const override { return 0; }
  int world_size() const override { return 2; }
  std::unique_ptr<Work> AllReduceSumAsync(void*, size_t, DataType) override {
    return std::make_unique<GatedWork>(this);
  }
  absl::Status Broadcast(void*, size_t, int) override { return Block(); }
  void Abort() override { gate.Notify(); }

  absl::Status Block() {
    entered.Notify();
    if (!gate.WaitForNotificationWithTimeout(absl::Seconds(60))) {
      return absl::DeadlineExceededError("gate never opened");
    }
    return absl::AbortedError("aborted");
  }

  absl::Notification entered;
  absl::Notification gate;
};

TEST(CollectiveWaitTest, LaunchingIsNotWaiting) {
  CollectiveWaitClock clock;
  GatedCommunicator inner;
  WaitTimedCommunicator comm(&inner, &clock);
  EXPECT_EQ(comm.rank(), 0);
  EXPECT_EQ(comm.world_size(), 2);
  std::unique_ptr<Work> w =
      comm.AllReduceSumAsync(nullptr, 1, DataType::kFloat32);
  EXPECT_EQ(clock.Waiting().count(), 0);
  EXPECT_FALSE(inner.entered.HasBeenNotified());
}

TEST(CollectiveWaitTest, AWaitBlockedOnAPeerIsTimedUntilItEnds) {
  CollectiveWaitClock clock;
  GatedCommunicator inner;
  WaitTimedCommunicator comm(&inner, &clock);
  std::unique_ptr<Work> w =
      comm.AllReduceSumAsync(nullptr, 1, DataType::kFloat32);
  absl::Status result;
  std::thread waiter([&] { result = w->Wait(); });
  ASSERT_TRUE(inner.entered.WaitForNotificationWithTimeout(absl::Seconds(60)));
  const std::chrono::milliseconds first = clock.Waiting();
  EXPECT_GE(first.count(), 1);  // Waiting, however short so far.
  // Another thread (the heartbeat's) sees the wait grow while it lasts.
  const absl::Time give_up = absl::Now() + absl::Seconds(30);
  while (clock.Waiting() < std::chrono::milliseconds(5) &&
         absl::Now() < give_up) {
  }
  EXPECT_GE(clock.Waiting(), std::chrono::milliseconds(5));
  comm.Abort();
  waiter.join();
  EXPECT_TRUE(absl::IsAborted(result));
  EXPECT_EQ(clock.Waiting().count(), 0);
}

TEST(CollectiveWaitTest, BroadcastIsTimedToo) {
  CollectiveWaitClock clock;
  GatedCommunicator inner;
  WaitTimedCommunicator comm(&inner, &clock);
  absl::Status result;
  std::thread caller([&] { result = comm.Broadcast(nullptr, 8, 0); });
  ASSERT_TRUE(inner.entered.WaitForNotificationWithTimeout(absl::Seconds(60)));
  EXPECT_GE(clock.Waiting().count(), 1);
  inner.gate.Notify();
  caller.join();
  EXPECT_TRUE(absl::IsAborted(result));
  EXPECT_EQ(clock.Waiting().count(), 0);
}

// A device backend's host does not block in Wait: the clock also reads the
// age of the oldest collective still on the device, while that
// communicator is in use, and the longer of the two counts.
TEST(CollectiveWaitTest, ADevicesOutstandingCollectiveCountsWhileInUse) {
  class DeviceCommunicator : public GatedCommunicator {
   public:
    std::chrono::milliseconds DeviceWaiting() const override {
      return std::chrono::milliseconds(2500);
    }
  };
  DeviceCommunicator device;
  CollectiveWaitClock clock;
  EXPECT_EQ(clock.Waiting(), std::chrono::milliseconds(0));
  {
    WaitTimedCommunicator timed(&device, &clock);
    EXPECT_EQ(clock.Waiting(), std::chrono::milliseconds(2500));
    // Through a wrapper too (the daemon's fault-injection one forwards it).
    EXPECT_EQ(timed.DeviceWaiting(), std::chrono::milliseconds(2500));
  }
  EXPECT_EQ(clock.Waiting(), std::chrono::milliseconds(0));  // Out of use.
}

}  // namespace
}  // namespace ringleader
