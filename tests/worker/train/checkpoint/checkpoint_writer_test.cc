// The background writer: writes run one at a time in the order submitted,
// a submit waits while a write is in flight (the memory bound of one
// snapshot), what follows a write runs only after it succeeded, and the
// first failed write is the writer's error from then on.
#include "worker/train/checkpoint/checkpoint_writer.h"

#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace ringleader {
namespace {

constexpr absl::Duration kWait = absl::Seconds(30);

TEST(CheckpointWriterTest, WritesAndWhatFollowsThemRunInOrder) {
  absl::Mutex mu;
  std::vector<std::string> events;
  auto record = [&](std::string e) {
    absl::MutexLock lock(&mu);
    events.push_back(std::move(e));
  };
  CheckpointWriter writer;
  for (int i = 0; i < 5; ++i) {
    const std::string n = std::to_string(i);
    ASSERT_TRUE(writer
                    .Submit(
                        [&, n] {
                          record("write " + n);
                          return absl::OkStatus();
                        },
                        [&, n] { record("then " + n); })
                    .ok());
  }
  ASSERT_TRUE(writer.WaitIdle(kWait).ok());
  absl::MutexLock lock(&mu);
  EXPECT_EQ(events, (std::vector<std::string>{
                        "write 0", "then 0", "write 1", "then 1", "write 2",
                        "then 2", "write 3", "then 3", "write 4", "then 4"}));
}

TEST(CheckpointWriterTest, OneWriteInFlight) {
  CheckpointWriter writer;
  absl::Notification started, release;
  ASSERT_TRUE(writer
                  .Submit(
                      [&] {
                        started.Notify();
                        release.WaitForNotificationWithTimeout(kWait);
                        return absl::OkStatus();
                      },
                      nullptr)
                  .ok());
  ASSERT_TRUE(started.WaitForNotificationWithTimeout(kWait));
  EXPECT_TRUE(
      absl::IsDeadlineExceeded(writer.WaitIdle(absl::Milliseconds(20))));
  // A second submit waits for the first write to end.
  absl::Notification second_submitted, second_ran;
  std::thread submitter([&] {
    EXPECT_TRUE(writer
                    .Submit(
                        [&] {
                          second_ran.Notify();
                          return absl::OkStatus();
                        },
                        nullptr)
                    .ok());
    second_submitted.Notify();
  });
  EXPECT_FALSE(
      second_submitted.WaitForNotificationWithTimeout(absl::Milliseconds(50)));
  EXPECT_FALSE(second_ran.HasBeenNotified());
  release.Notify();
  EXPECT_TRUE(second_submitted.WaitForNotificationWithTimeout(kWait));
  EXPECT_TRUE(second_ran.WaitForNotificationWithTimeout(kWait));
  submitter.join();
  EXPECT_TRUE(writer.WaitIdle(kWait).ok());
}

TEST(CheckpointWriterTest, AFailedWriteIsTheErrorFromThenOn) {
  CheckpointWriter writer;
  bool followed = false, later_ran = false;
  ASSERT_TRUE(writer
                  .Submit([] { return absl::InternalError("disk full"); },
                          [&] { followed = true; })
                  .ok());
  const absl::Status s = writer.WaitIdle(kWait);
  EXPECT_EQ(s, absl::InternalError("disk full"));
  EXPECT_FALSE(followed);  // No commit for a file not on disk.
  EXPECT_EQ(writer.status(), s);
  EXPECT_EQ(writer.Submit(
                [&] {
                  later_ran = true;
                  return absl::OkStatus();
                },
                nullptr),
            s);
  EXPECT_TRUE(writer.WaitIdle(kWait) == s);
  EXPECT_FALSE(later_ran);
}

TEST(CheckpointWriterTest, TheWriteInFlightEndsBeforeTheWriterGoes) {
  bool written = false;
  {
    CheckpointWriter writer;
    ASSERT_TRUE(writer
                    .Submit(
                        [&] {
                          written = true;
                          return absl::OkStatus();
                        },
                        nullptr)
                    .ok());
  }
  EXPECT_TRUE(written);
}

}  // namespace
}  // namespace ringleader
