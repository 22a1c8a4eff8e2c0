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
#include "worker/comm/float16_sum.h"

namespace ringleader {

// N ranks as threads of one process, summing through shared memory: the
// process-group fake of c10d's reducer tests, for checking the Reducer's
// bucketing and ordering. Each rank runs its collectives in issue order on
// its own thread, like the real communicators with one lane, or (for the
// Reducer's indifference to completion order) newest first. Float32, and the
// 16-bit floats of compressed buckets, summed as the shared-memory communicator
// does: in float32 in rank order, rounded once.
class InProcessGroup {
 public:
  explicit InProcessGroup(int world) : world_(world) {}
  int world() const { return world_; }

  // Blocks until all ranks deposited op `seq`, then sums into every buffer.
  void AllReduce(int64_t seq, int rank, void* data, size_t count,
                 DataType type) {
    absl::MutexLock lock(&mu_);
    Op& op = ops_[seq];
    if (op.buffers.empty()) op.buffers.resize(world_);
    op.buffers[rank] = data;
    ++op.deposited;
    auto all_in = [&op, this] { return op.deposited == world_; };
    mu_.Await(absl::Condition(&all_in));
    const size_t bytes = count * DataTypeSize(type);
    if (op.sum.empty()) op.sum = Sum(op.buffers, count, type);
    ++op.read;
    auto all_read = [&op, this] { return op.read == world_; };
    mu_.Await(absl::Condition(&all_read));
    std::memcpy(data, op.sum.data(), bytes);
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
  // The sum's bytes.
  std::vector<char> Sum(const std::vector<void*>& buffers, size_t count,
                        DataType type) const {
    std::vector<char> out(count * DataTypeSize(type));
    if (type == DataType::kFloat16 || type == DataType::kBFloat16) {
      std::vector<const uint16_t*> in;
      for (void* b : buffers) in.push_back(static_cast<const uint16_t*>(b));
      SumFloat16RoundOnce(type == DataType::kFloat16 ? Float16Format::kFp16
                                                     : Float16Format::kBf16,
                          reinterpret_cast<uint16_t*>(out.data()), in.data(),
                          world_, count);
      return out;
    }
    if (type == DataType::kInt64) {  // The trainer's small agreements.
      std::vector<int64_t> sum(count, 0);
      for (void* b : buffers) {
        for (size_t i = 0; i < count; ++i) {
          sum[i] += static_cast<int64_t*>(b)[i];
        }
      }
      std::memcpy(out.data(), sum.data(), out.size());
      return out;
    }
    std::vector<float> sum(count, 0.f);  // Float32 otherwise.
    for (void* b : buffers) {
      for (size_t i = 0; i < count; ++i) sum[i] += static_cast<float*>(b)[i];
    }
    std::memcpy(out.data(), sum.data(), out.size());
    return out;
  }

  struct Op {
    std::vector<void*> buffers;  // By rank.
    int deposited = 0;
    std::vector<char> sum;
    std::vector<char> bytes;  // A broadcast's root data.
    bool has_bytes = false;
    int read = 0;
    int written = 0;
  };
  const int world_;
  absl::Mutex mu_;
  std::map<int64_t, Op> ops_;
};

// The order a rank's collectives run and complete in.
enum class CompletionOrder {
  // Issue order, one at a time: the shared-memory transport, one Gloo lane.
  kIssue,
  // Held until the rank first waits for one, then run newest first, so the
  // last issued completes first and the first last: the far end of what
  // Gloo's lanes (DdpSpec.buckets_in_flight) allow. Every rank reverses the
  // same way, so matching collectives still meet.
  kReversedUntilWaited,
};

class InProcessCommunicator final : public Communicator {
 public:
  InProcessCommunicator(InProcessGroup* group, int rank,
                        CompletionOrder order = CompletionOrder::kIssue)
      : group_(group),
        rank_(rank),
        order_(order),
        thread_([this] { Loop(); }) {}
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
                                          DataType type) override {
    auto work = std::make_unique<SimpleWork>(this);
    SimpleWork* w = work.get();
    absl::MutexLock lock(&mu_);
    const int64_t seq = next_seq_++;
    types_.push_back(type);
    completed_.push_back(false);
    IssueLocked([this, seq, data, count, type, w] {
      group_->AllReduce(seq, rank_, data, count, type);
      MarkCompleted(seq);
      w->done.Notify();
    });
    return work;
  }
  // Per collective issued, whether it has completed.
  std::vector<bool> completed() {
    absl::MutexLock lock(&mu_);
    return completed_;
  }
  // The sequence numbers of the collectives in the order they completed.
  std::vector<int64_t> completion_order() {
    absl::MutexLock lock(&mu_);
    return completion_order_;
  }
  // The type of every all-reduce issued, in order.
  std::vector<DataType> types() {
    absl::MutexLock lock(&mu_);
    return types_;
  }
  // Root's bytes, exactly, in issue order with the all-reduces.
  absl::Status Broadcast(void* data, size_t bytes, int root) override {
    absl::Notification done;
    {
      absl::MutexLock lock(&mu_);
      const int64_t seq = next_seq_++;
      completed_.push_back(false);
      IssueLocked([this, seq, data, bytes, root, &done] {
        group_->Broadcast(seq, rank_, root, data, bytes);
        MarkCompleted(seq);
        done.Notify();
      });
    }
    Release();
    done.WaitForNotification();
    return absl::OkStatus();
  }
  void Abort() override {}

 private:
  struct SimpleWork : Work {
    explicit SimpleWork(InProcessCommunicator* comm) : comm(comm) {}
    InProcessCommunicator* const comm;
    absl::Notification done;
    absl::Status Wait() override {
      comm->Release();
      done.WaitForNotification();
      return absl::OkStatus();
    }
  };
  void IssueLocked(std::function<void()> fn)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (order_ == CompletionOrder::kIssue) {
      queue_.push_back(std::move(fn));
    } else {
      held_.push_front(std::move(fn));  // Newest first.
    }
  }
  // Lets every held collective run, newest first.
  void Release() {
    absl::MutexLock lock(&mu_);
    for (auto& fn : held_) queue_.push_back(std::move(fn));
    held_.clear();
  }
  void MarkCompleted(int64_t seq) {
    absl::MutexLock lock(&mu_);
    completed_[static_cast<size_t>(seq)] = true;
    completion_order_.push_back(seq);
  }
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
  const CompletionOrder order_;
  absl::Mutex mu_;
  std::deque<std::function<void()>> queue_;
  std::deque<std::function<void()>> held_;  // kReversedUntilWaited.
  std::vector<bool> completed_;
  std::vector<int64_t> completion_order_;
  int64_t next_seq_ = 0;
  std::vector<DataType> types_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace ringleader

#endif  // RINGLEADER_TESTS_WORKER_DDP_IN_PROCESS_COMMUNICATOR_H_
