// OpQueue's lanes without a backend: which lane each operation runs on, the
// order within a lane, lanes running side by side, and how one lane's failure
// and Abort() reach every lane. The bodies stand in for a backend's
// collectives; the Gloo lanes themselves are tested in
// gloo_communicator_test.cc.
#include "worker/comm/op_queue.h"

#include <atomic>
#include <map>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace ringleader {
namespace {

// Bounds every wait on another lane: a failure, not a hang.
constexpr absl::Duration kPatience = absl::Seconds(30);

// What each body saw, in the order the bodies ran.
struct Ran {
  int lane;
  uint32_t seq;
  std::thread::id thread;
};

class Recorder {
 public:
  OpQueue::Body Body() {
    return [this](int lane, uint32_t seq) {
      absl::MutexLock lock(&mu_);
      runs_.push_back({lane, seq, std::this_thread::get_id()});
      return absl::OkStatus();
    };
  }
  std::vector<Ran> runs() {
    absl::MutexLock lock(&mu_);
    return runs_;
  }

 private:
  absl::Mutex mu_;
  std::vector<Ran> runs_ ABSL_GUARDED_BY(mu_);
};

TEST(OpQueueTest, LaneOfIsRoundRobinBySequenceNumber) {
  for (uint32_t seq = 0; seq < 12; ++seq) {
    EXPECT_EQ(OpQueue::LaneOf(seq, 1), 0);
    EXPECT_EQ(OpQueue::LaneOf(seq, 3), static_cast<int>(seq % 3));
  }
  // The counter wraps the same way on every rank.
  EXPECT_EQ(OpQueue::LaneOf(0xffffffffu, 2), 1);
  EXPECT_EQ(OpQueue(nullptr, 0).lanes(), 1);
  EXPECT_EQ(OpQueue(nullptr, 4).lanes(), 4);
}

TEST(OpQueueTest, OneLaneRunsEverythingInIssueOrderOnOneThread) {
  Recorder rec;
  std::vector<std::unique_ptr<Work>> works;
  {
    OpQueue queue;
    for (int i = 0; i < 40; ++i) works.push_back(queue.Enqueue(rec.Body(), {}));
    for (auto& w : works) ASSERT_TRUE(w->Wait().ok());
  }
  const std::vector<Ran> runs = rec.runs();
  ASSERT_EQ(runs.size(), 40u);
  for (size_t i = 0; i < runs.size(); ++i) {
    EXPECT_EQ(runs[i].lane, 0);
    EXPECT_EQ(runs[i].seq, i);
    EXPECT_EQ(runs[i].thread, runs[0].thread);
  }
}

// Operation `seq` runs on lane seq % K; each lane runs its share in issue
// order on a thread of its own.
TEST(OpQueueTest, LanesTakeOperationsRoundRobinEachInIssueOrder) {
  constexpr int kLanes = 3, kOps = 60;
  Recorder rec;
  std::vector<std::unique_ptr<Work>> works;
  {
    OpQueue queue(nullptr, kLanes);
    for (int i = 0; i < kOps; ++i) {
      works.push_back(queue.Enqueue(rec.Body(), {}));
    }
    for (auto& w : works) ASSERT_TRUE(w->Wait().ok());
  }
  const std::vector<Ran> runs = rec.runs();
  ASSERT_EQ(runs.size(), static_cast<size_t>(kOps));
  std::map<int, uint32_t> next;  // Per lane: the sequence number due next.
  std::map<int, std::thread::id> thread_of;
  std::set<uint32_t> seen;
  for (const Ran& r : runs) {
    EXPECT_EQ(r.lane, static_cast<int>(r.seq % kLanes)) << r.seq;
    if (next.count(r.lane) == 0) next[r.lane] = static_cast<uint32_t>(r.lane);
    EXPECT_EQ(r.seq, next[r.lane]) << "lane " << r.lane << " out of order";
    next[r.lane] = r.seq + kLanes;
    if (thread_of.count(r.lane) == 0) thread_of[r.lane] = r.thread;
    EXPECT_EQ(r.thread, thread_of[r.lane]);
    seen.insert(r.seq);
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(kOps));
  ASSERT_EQ(thread_of.size(), static_cast<size_t>(kLanes));
  EXPECT_NE(thread_of[0], thread_of[1]);
  EXPECT_NE(thread_of[1], thread_of[2]);
  EXPECT_NE(thread_of[0], thread_of[2]);
}

// Operation 0 (lane 0) cannot finish before operation 1 (lane 1) has
// finished: on one lane that would wait out kPatience and fail; on two, 1
// completes first.
TEST(OpQueueTest, LanesRunSideBySideAndCompleteOutOfIssueOrder) {
  OpQueue queue(nullptr, 2);
  absl::Notification second_done;
  std::unique_ptr<Work> first = queue.Enqueue(
      [&](int, uint32_t) {
        if (!second_done.WaitForNotificationWithTimeout(kPatience)) {
          return absl::DeadlineExceededError("lane 1 never ran");
        }
        return absl::OkStatus();
      },
      {});
  std::unique_ptr<Work> second =
      queue.Enqueue([](int, uint32_t) { return absl::OkStatus(); },
                    [&] { second_done.Notify(); });
  EXPECT_TRUE(second->Wait().ok());
  EXPECT_TRUE(first->Wait().ok());
}

// A failure on lane 1 while lane 0 runs: the backend is told once, lane 0's
// operation (which the backend then stops) reports the first failure, and
// every later operation on either lane fails fast with it.
TEST(OpQueueTest, FirstFailureOnOneLaneReachesEveryLane) {
  absl::Notification backend_told;
  std::atomic<int> told{0};
  OpQueue queue(
      [&] {
        told++;
        backend_told.Notify();
      },
      2);
  absl::Notification first_running;
  std::unique_ptr<Work> first = queue.Enqueue(
      [&](int, uint32_t) {
        first_running.Notify();
        // The backend's stop: its pairs fail once it is told.
        if (!backend_told.WaitForNotificationWithTimeout(kPatience)) {
          return absl::OkStatus();
        }
        return absl::UnavailableError("connection closed");
      },
      {});
  ASSERT_TRUE(first_running.WaitForNotificationWithTimeout(kPatience));
  std::unique_ptr<Work> second = queue.Enqueue(
      [](int, uint32_t) { return absl::DeadlineExceededError("timed out"); },
      {});
  std::atomic<int> ran_after{0};
  auto counted = [&](int, uint32_t) {
    ran_after++;
    return absl::OkStatus();
  };
  std::unique_ptr<Work> third = queue.Enqueue(counted, {});   // Lane 0.
  std::unique_ptr<Work> fourth = queue.Enqueue(counted, {});  // Lane 1.

  const absl::Status s2 = second->Wait();
  EXPECT_TRUE(absl::IsDeadlineExceeded(s2)) << s2;
  EXPECT_EQ(s2.message(), "timed out");
  const absl::Status s1 = first->Wait();
  EXPECT_TRUE(absl::IsDeadlineExceeded(s1)) << s1;
  EXPECT_TRUE(absl::StrContains(s1.message(), "another collective failed"))
      << s1;
  EXPECT_TRUE(absl::StrContains(s1.message(), "timed out")) << s1;
  EXPECT_TRUE(absl::StrContains(s1.message(), "connection closed")) << s1;
  for (Work* w : {third.get(), fourth.get()}) {
    const absl::Status s = w->Wait();
    EXPECT_TRUE(absl::IsDeadlineExceeded(s)) << s;
    EXPECT_TRUE(absl::StrContains(s.message(), "earlier")) << s;
  }
  EXPECT_EQ(ran_after.load(), 0);
  EXPECT_EQ(told.load(), 1);
  EXPECT_FALSE(queue.aborted());
}

// Abort() with every lane busy: the queued operations of every lane fail
// before Abort() returns; those running fail once the backend stops them,
// as ABORTED; later ones fail at once.
TEST(OpQueueTest, AbortFailsEveryLanesQueuedAndRunningOperations) {
  constexpr int kLanes = 3;
  OpQueue queue(nullptr, kLanes);
  absl::Notification stop;  // The backend's stop, after Abort().
  std::atomic<int> running{0};
  absl::Notification all_running;
  std::vector<std::unique_ptr<Work>> busy, queued;
  for (int i = 0; i < kLanes; ++i) {
    busy.push_back(queue.Enqueue(
        [&](int, uint32_t) {
          if (++running == kLanes) all_running.Notify();
          stop.WaitForNotificationWithTimeout(kPatience);
          return absl::UnavailableError("pair signalled");
        },
        {}));
  }
  ASSERT_TRUE(all_running.WaitForNotificationWithTimeout(kPatience));
  std::atomic<int> queued_done{0};
  for (int i = 0; i < 2 * kLanes; ++i) {
    queued.push_back(
        queue.Enqueue([](int, uint32_t) { return absl::OkStatus(); },
                      [&] { queued_done++; }));
  }
  EXPECT_TRUE(queue.Abort());
  EXPECT_EQ(queued_done.load(), 2 * kLanes);  // Before the running ones end.
  for (auto& w : queued) EXPECT_TRUE(absl::IsAborted(w->Wait()));
  stop.Notify();
  for (auto& w : busy) {
    const absl::Status s = w->Wait();
    EXPECT_TRUE(absl::IsAborted(s)) << s;
    EXPECT_TRUE(absl::StrContains(s.message(), "pair signalled")) << s;
  }
  EXPECT_TRUE(absl::IsAborted(
      queue.Enqueue([](int, uint32_t) { return absl::OkStatus(); }, {})
          ->Wait()));
  EXPECT_FALSE(queue.Abort());
}

// Issue order across threads is the order of the calls: whatever thread
// issues, each lane still runs its operations in sequence order.
TEST(OpQueueTest, ConcurrentIssuersStillGetOneSequence) {
  constexpr int kLanes = 2, kThreads = 4, kPerThread = 25;
  Recorder rec;
  std::vector<std::unique_ptr<Work>> works(kThreads * kPerThread);
  {
    OpQueue queue(nullptr, kLanes);
    std::vector<std::thread> issuers;
    for (int t = 0; t < kThreads; ++t) {
      issuers.emplace_back([&, t] {
        for (int i = 0; i < kPerThread; ++i) {
          works[t * kPerThread + i] = queue.Enqueue(rec.Body(), {});
        }
      });
    }
    for (auto& t : issuers) t.join();
    for (auto& w : works) ASSERT_TRUE(w->Wait().ok());
  }
  std::map<int, int64_t> last;
  std::set<uint32_t> seqs;
  for (const Ran& r : rec.runs()) {
    EXPECT_EQ(r.lane, static_cast<int>(r.seq % kLanes));
    if (last.count(r.lane) != 0) EXPECT_EQ(r.seq, last[r.lane] + kLanes);
    last[r.lane] = r.seq;
    seqs.insert(r.seq);
  }
  ASSERT_EQ(seqs.size(), static_cast<size_t>(kThreads * kPerThread));
  EXPECT_EQ(*seqs.rbegin(), static_cast<uint32_t>(kThreads * kPerThread - 1));
}

}  // namespace
}  // namespace ringleader
