#ifndef RINGLEADER_TESTS_WORKER_DDP_IN_PROCESS_COMMUNICATOR_H_
#define RINGLEADER_TESTS_WORKER_DDP_IN_PROCESS_COMMUNICATOR_H_

#include <algorithm>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "worker/comm/communicator.h"

namespace ringleader {

// N ranks as threads of one process, summing through shared memory: the
// process-group fake of c10d's reducer tests, for checking the Reducer's
// bucketing and ordering. Each rank runs its collectives in issue order on
// its own thread, like the real communicators. Float32 only.
class InProcessGroup {
 public:
  explicit InProcessGroup(int world) : world_(world) {}
  int world() const { return world_; }

  // Blocks until all ranks deposited op `seq`, then sums into every buffer.
  void AllReduce(int64_t seq, float* data, size_t count) {
    absl::MutexLock lock(&mu_);
    Op& op = ops_[seq];
    op.buffers.push_back(data);
    auto all_in = [&op, this] { return op.buffers.size() == size_t(world_); };
    mu_.Await(absl::Condition(&all_in));
    if (op.sum.empty()) {
      op.sum.assign(count, 0.f);
      for (float* b : op.buffers) {
        for (size_t i = 0; i < count; ++i) op.sum[i] += b[i];
      }
    }
    ++op.read;
    auto all_read = [&op, this] { return op.read == world_; };
    mu_.Await(absl::Condition(&all_read));
    std::memcpy(data, op.sum.data(), count * sizeof(float));
    ++op.written;
    auto all_written = [&op, this] { return op.written == world_; };
    mu_.Await(absl::Condition(&all_written));
  }

  // Blocks until `root` deposited op `seq`'s bytes, then copies them.
  void Broadcast(int64_t seq, int rank, int root, void* data, size_t bytes) {
    absl::MutexLock lock(&mu_);
    Op& op = ops_[seq];
    if (rank == root) {
      op.bytes.assign(static_cast<char*>(data),
                      static_cast<char*>(data) + bytes);
      op.has_bytes = true;
    }
    auto ready = [&op] { return op.has_bytes; };
    mu_.Await(absl::Condition(&ready));
    std::memcpy(data, op.bytes.data(), std::min(bytes, op.bytes.size()));
    ++op.read;
    auto all_read = [&op, this] { return op.read == world_; };
    mu_.Await(absl::Condition(&all_read));
  }

 private:
  struct Op {
    std::vector<float*> buffers;
    std::vector<float> sum;
    std::vector<char> bytes;  // A broadcast's root data.
    bool has_bytes = false;
    int read = 0;
    int written = 0;
  };
  const int world_;
  absl::Mutex mu_;
  std::map<int64_t, Op> ops_;
};

class InProcessCommunicator final : public Communicator {
 public:
  InProcessCommunicator(InProcessGroup* group, int rank)
      : group_(group), rank_(rank), thread_([this] { Loop(); }) {}
  ~InProcessCommunicator() override {
    {
      absl::MutexLock lock(&mu_);
      stop_ = true;
    }
    thread_.join();
  }
  int rank() const override { return rank_; }
  int world_size() const override { return group_->world(); }

  std::unique_ptr<Work> AllReduceSumAsync(void* data, size_t count,
                                          DataType) override {
    auto work = std::make_unique<SimpleWork>();
    SimpleWork* w = work.get();
    absl::MutexLock lock(&mu_);
    const int64_t seq = next_seq_++;
    queue_.push_back([this, seq, data, count, w] {
      group_->AllReduce(seq, static_cast<float*>(data), count);
      w->done.Notify();
    });
    return work;
  }
  // Root's bytes, exactly, in issue order with the all-reduces.
  absl::Status Broadcast(void* data, size_t bytes, int root) override {
    absl::Notification done;
    {
      absl::MutexLock lock(&mu_);
      const int64_t seq = next_seq_++;
      queue_.push_back([this, seq, data, bytes, root, &done] {
        group_->Broadcast(seq, rank_, root, data, bytes);
        done.Notify();
      });
    }
    done.WaitForNotification();
    return absl::OkStatus();
  }
  void Abort() override {}

 private:
  struct SimpleWork : Work {
    absl::Notification done;
    absl::Status Wait() override {
      done.WaitForNotification();
      return absl::OkStatus();
    }
  };
  void Loop() {
    while (true) {
      std::function<void()> fn;
      {
        absl::MutexLock lock(&mu_);
        auto ready = [this] { return stop_ || !queue_.empty(); };
        mu_.Await(absl::Condition(&ready));
        if (queue_.empty()) return;
        fn = std::move(queue_.front());
        queue_.pop_front();
      }
      fn();
    }
  }

  InProcessGroup* const group_;
  const int rank_;
  absl::Mutex mu_;
  std::deque<std::function<void()>> queue_;
  int64_t next_seq_ = 0;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace ringleader

#endif  // RINGLEADER_TESTS_WORKER_DDP_IN_PROCESS_COMMUNICATOR_H_
