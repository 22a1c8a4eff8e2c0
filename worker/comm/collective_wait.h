#ifndef RINGLEADER_WORKER_COMM_COLLECTIVE_WAIT_H_
#define RINGLEADER_WORKER_COMM_COLLECTIVE_WAIT_H_

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>

#include "absl/synchronization/mutex.h"
#include "worker/comm/communicator.h"

namespace ringleader {

// How long this rank has been blocked waiting for a collective to finish
// (Work::Wait, Broadcast). Heartbeats carry it: peers blocked while a member
// is silent are the coordinator's evidence that the member is hung
// (coordinator/member_liveness.h). Costs two clock reads and two relaxed
// atomic stores per wait. Waits come from one thread at a time (the
// Communicator contract); the reader may be any thread.
class CollectiveWaitClock {
 public:
  void Enter() { since_ns_.store(NowNs(), std::memory_order_relaxed); }
  void Leave() { since_ns_.store(0, std::memory_order_relaxed); }
  // How long the current wait has lasted, rounded up to a millisecond, or
  // the device's oldest outstanding collective if longer; zero when neither.
  std::chrono::milliseconds Waiting() const {
    std::chrono::milliseconds device(0);
    {
      absl::MutexLock lock(&mu_);
      if (device_ != nullptr) device = device_->DeviceWaiting();
    }
    const int64_t since = since_ns_.load(std::memory_order_relaxed);
    if (since == 0) return device;
    return std::max(
        device,
        std::chrono::ceil<std::chrono::milliseconds>(
            std::chrono::nanoseconds(std::max<int64_t>(NowNs() - since, 1))));
  }
  // The communicator whose DeviceWaiting counts too (a GPU's: its host does
  // not block in Wait); null to stop. Set while it is in use.
  void SetDevice(const Communicator* comm) {
    absl::MutexLock lock(&mu_);
    device_ = comm;
  }

 private:
  static int64_t NowNs() {
    // steady_clock's epoch is boot: never 0 on a running system.
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  std::atomic<int64_t> since_ns_{0};
  mutable absl::Mutex mu_;
  const Communicator* device_ ABSL_GUARDED_BY(mu_) = nullptr;
};

// A Communicator that times every wait for a collective on a
// CollectiveWaitClock, then forwards to `inner`. Launching an operation
// costs nothing more; only the blocking part (Wait, Broadcast) is timed.
class WaitTimedCommunicator final : public ForwardingCommunicator {
 public:
  WaitTimedCommunicator(Communicator* inner, CollectiveWaitClock* clock)
      : ForwardingCommunicator(inner), clock_(clock) {
    clock_->SetDevice(inner);
  }
  ~WaitTimedCommunicator() override { clock_->SetDevice(nullptr); }

  std::unique_ptr<Work> AllReduceSumAsync(void* data, size_t count,
                                          DataType type) override {
    return Timed(inner()->AllReduceSumAsync(data, count, type));
  }
  // `on_done` still runs where `inner` completes the operation.
  std::unique_ptr<Work> AllReduceSumAsyncThen(
      void* data, size_t count, DataType type,
      std::function<void()> on_done) override {
    return Timed(
        inner()->AllReduceSumAsyncThen(data, count, type, std::move(on_done)));
  }
  absl::Status Broadcast(void* data, size_t bytes, int root) override {
    clock_->Enter();
    absl::Status s = inner()->Broadcast(data, bytes, root);
    clock_->Leave();
    return s;
  }

 private:
  class TimedWork final : public Work {
   public:
    TimedWork(std::unique_ptr<Work> inner, CollectiveWaitClock* clock)
        : inner_(std::move(inner)), clock_(clock) {}
    absl::Status Wait() override {
      clock_->Enter();
      absl::Status s = inner_->Wait();
      clock_->Leave();
      return s;
    }

   private:
    const std::unique_ptr<Work> inner_;
    CollectiveWaitClock* const clock_;
  };
  std::unique_ptr<Work> Timed(std::unique_ptr<Work> work) {
    return std::make_unique<TimedWork>(std::move(work), clock_);
  }

  CollectiveWaitClock* const clock_;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_COMM_COLLECTIVE_WAIT_H_
