// The background sender's own rules, apart from its users' (progress
// reporter, commit queue, checkpoint writer: their tests hold their
// semantics): order, replacement and who waits for what, stopping at the
// first error, the bound on outstanding items, and going away.
#include "common/sender_loop.h"

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace ringleader {
namespace {

constexpr absl::Duration kWait = absl::Seconds(30);

// The far end: holds sends back until opened, answers each item with the
// status set for it (OK by default), records what arrived.
class Receiver {
 public:
  SenderLoop<int>::Send Send() {
    return [this](const int& item, const std::atomic<bool>* cancel) {
      absl::MutexLock lock(&mu_);
      ++attempts_;
      auto open = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return open_; };
      while (!mu_.AwaitWithTimeout(absl::Condition(&open),
                                   absl::Milliseconds(5))) {
        if (cancel->load()) return absl::CancelledError("gave up");
      }
      received_.push_back(item);
      return item < 0 ? absl::InternalError(std::to_string(item))
                      : absl::OkStatus();
    };
  }
  void Open() {
    absl::MutexLock lock(&mu_);
    open_ = true;
  }
  void WaitForAttempts(int n) {
    absl::MutexLock lock(&mu_);
    auto reached = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return attempts_ >= n;
    };
    ASSERT_TRUE(mu_.AwaitWithTimeout(absl::Condition(&reached), kWait));
  }
  std::vector<int> received() {
    absl::MutexLock lock(&mu_);
    return received_;
  }

 private:
  absl::Mutex mu_;
  bool open_ ABSL_GUARDED_BY(mu_) = false;
  int attempts_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<int> received_ ABSL_GUARDED_BY(mu_);
};

TEST(SenderLoopTest, SendsInOrder) {
  Receiver receiver;
  receiver.Open();
  SenderLoop<int> loop(receiver.Send());
  for (int i = 1; i <= 50; ++i) ASSERT_TRUE(loop.Submit(i).ok());
  ASSERT_TRUE(loop.Flush(kWait));
  std::vector<int> want;
  for (int i = 1; i <= 50; ++i) want.push_back(i);
  EXPECT_EQ(receiver.received(), want);
  EXPECT_EQ(loop.sent(), 50);
  EXPECT_EQ(loop.outstanding(), 0);
}

// Odd items may replace an odd item waiting; who waits for a replaced item
// gets the outcome of the one that took its place.
TEST(SenderLoopTest, ReplacesByTheRuleAndAnswersTheReplacedWaiter) {
  Receiver receiver;
  SenderLoop<int>::Rules rules;
  rules.replaces = [](const int& queued, const int& incoming) {
    return queued % 2 == 1 && incoming % 2 == 1;
  };
  SenderLoop<int> loop(receiver.Send(), rules);
  ASSERT_TRUE(loop.Submit(1).ok());
  receiver.WaitForAttempts(1);  // 1 is in flight: never replaced.
  std::optional<absl::Status> waited;
  std::thread waiter([&] { waited = loop.SubmitAndWait(3, kWait); });
  absl::SleepFor(absl::Milliseconds(20));
  ASSERT_TRUE(loop.Submit(5).ok());  // Replaces 3 (or 3 is still coming).
  ASSERT_TRUE(loop.Submit(6).ok());
  ASSERT_TRUE(loop.Submit(7).ok());
  ASSERT_TRUE(loop.Submit(9).ok());
  receiver.Open();
  waiter.join();
  ASSERT_TRUE(loop.Flush(kWait));
  ASSERT_TRUE(waited.has_value());
  EXPECT_TRUE(waited->ok());
  const std::vector<int> got = receiver.received();
  EXPECT_TRUE(got == (std::vector<int>{1, 5, 6, 9}) ||
              got == (std::vector<int>{1, 3, 6, 9}))
      << ::testing::PrintToString(got);
}

TEST(SenderLoopTest, SubmitAndWaitReturnsItsOwnOutcomeOrTimesOut) {
  Receiver receiver;
  SenderLoop<int> loop(receiver.Send());
  ASSERT_TRUE(loop.Submit(1).ok());
  receiver.WaitForAttempts(1);
  EXPECT_FALSE(loop.SubmitAndWait(2, absl::Milliseconds(20)).has_value());
  // Behind others: not waited for at all.
  EXPECT_FALSE(loop.SubmitAndWait(3, absl::Hours(1),
                                  SenderLoop<int>::WaitIf::kFirstInLine)
                   .has_value());
  EXPECT_EQ(loop.outstanding(), 3);
  receiver.Open();
  std::optional<absl::Status> failed = loop.SubmitAndWait(-4, kWait);
  ASSERT_TRUE(failed.has_value());
  EXPECT_EQ(*failed, absl::InternalError("-4"));
  EXPECT_EQ(receiver.received(), (std::vector<int>{1, 2, 3, -4}));
}

TEST(SenderLoopTest, FlushTimesOutAndHandsOverRecentErrorsOnce) {
  Receiver receiver;
  SenderLoop<int> loop(receiver.Send());
  ASSERT_TRUE(loop.Submit(-1).ok());
  EXPECT_FALSE(loop.Flush(absl::Milliseconds(20)));
  receiver.Open();
  ASSERT_TRUE(loop.Submit(-2).ok());
  absl::Status recent;
  ASSERT_TRUE(loop.Flush(kWait, &recent));
  EXPECT_EQ(recent, absl::InternalError("-1"));
  ASSERT_TRUE(loop.Flush(kWait, &recent));
  EXPECT_TRUE(recent.ok());
  EXPECT_EQ(loop.first_error(), absl::InternalError("-1"));  // Kept.
}

// Under stop_at_error nothing is sent after the first error: what is
// queued is answered with it, and new items are refused with it.
TEST(SenderLoopTest, StopsAtTheFirstError) {
  Receiver receiver;
  SenderLoop<int>::Rules rules;
  rules.stop_at_error = true;
  SenderLoop<int> loop(receiver.Send(), rules);
  ASSERT_TRUE(loop.Submit(1).ok());
  ASSERT_TRUE(loop.Submit(-2).ok());
  ASSERT_TRUE(loop.Submit(3).ok());
  std::optional<absl::Status> queued_behind;
  std::thread waiter([&] { queued_behind = loop.SubmitAndWait(4, kWait); });
  absl::SleepFor(absl::Milliseconds(20));
  receiver.Open();
  waiter.join();
  ASSERT_TRUE(queued_behind.has_value());
  EXPECT_EQ(*queued_behind, absl::InternalError("-2"));
  EXPECT_EQ(loop.Submit(5), absl::InternalError("-2"));
  std::optional<absl::Status> refused = loop.SubmitAndWait(6, kWait);
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(*refused, absl::InternalError("-2"));
  ASSERT_TRUE(loop.Flush(kWait));
  EXPECT_EQ(receiver.received(), (std::vector<int>{1, -2}));
  EXPECT_EQ(loop.sent(), 2);
}

// With a bound of one, Submit waits for the item in flight.
TEST(SenderLoopTest, MaxOutstandingMakesSubmitWait) {
  Receiver receiver;
  SenderLoop<int>::Rules rules;
  rules.max_outstanding = 1;
  SenderLoop<int> loop(receiver.Send(), rules);
  ASSERT_TRUE(loop.Submit(1).ok());
  receiver.WaitForAttempts(1);
  absl::Notification submitted;
  std::thread second([&] {
    EXPECT_TRUE(loop.Submit(2).ok());
    submitted.Notify();
  });
  EXPECT_FALSE(
      submitted.WaitForNotificationWithTimeout(absl::Milliseconds(50)));
  receiver.Open();
  EXPECT_TRUE(submitted.WaitForNotificationWithTimeout(kWait));
  second.join();
  ASSERT_TRUE(loop.Flush(kWait));
  EXPECT_EQ(receiver.received(), (std::vector<int>{1, 2}));
}

TEST(SenderLoopTest, GoingAwayCancelsTheSendInFlightAndDropsTheRest) {
  Receiver receiver;
  {
    SenderLoop<int> loop(receiver.Send());
    ASSERT_TRUE(loop.Submit(1).ok());
    receiver.WaitForAttempts(1);
    ASSERT_TRUE(loop.Submit(2).ok());
  }  // Returns although the far end never opens.
  EXPECT_TRUE(receiver.received().empty());
}

TEST(SenderLoopTest, GoingAwayCanSendWhatIsQueuedFirst) {
  std::vector<int> sent;
  {
    SenderLoop<int>::Rules rules;
    rules.send_queued_at_exit = true;
    SenderLoop<int> loop(
        [&sent](const int& item, const std::atomic<bool>* cancel) {
          EXPECT_FALSE(cancel->load());
          absl::SleepFor(absl::Milliseconds(5));
          sent.push_back(item);
          return absl::OkStatus();
        },
        rules);
    for (int i = 1; i <= 3; ++i) ASSERT_TRUE(loop.Submit(i).ok());
  }
  EXPECT_EQ(sent, (std::vector<int>{1, 2, 3}));
}

// An outcome other than a status: its error is the rules' to say.
TEST(SenderLoopTest, AnOutcomeOfItsOwnWithItsOwnErrors) {
  using Answer = absl::StatusOr<std::string>;
  SenderLoop<int, Answer>::Rules rules;
  rules.stop_at_error = true;
  rules.error_of = [](const int& item, const Answer& a) {
    if (!a.ok()) return a.status();
    return *a == "stop" ? absl::AbortedError(std::to_string(item))
                        : absl::OkStatus();
  };
  SenderLoop<int, Answer> loop(
      [](const int& item, const std::atomic<bool>*) -> Answer {
        return item == 2 ? "stop" : "go";
      },
      rules);
  std::optional<Answer> first = loop.SubmitAndWait(1, kWait);
  ASSERT_TRUE(first.has_value() && first->ok());
  EXPECT_EQ(**first, "go");
  std::optional<Answer> second = loop.SubmitAndWait(2, kWait);
  ASSERT_TRUE(second.has_value() && second->ok());
  EXPECT_EQ(**second, "stop");
  EXPECT_EQ(loop.first_error(), absl::AbortedError("2"));
  std::optional<Answer> third = loop.SubmitAndWait(3, kWait);
  ASSERT_TRUE(third.has_value());
  EXPECT_EQ(third->status(), absl::AbortedError("2"));
}

}  // namespace
}  // namespace ringleader
