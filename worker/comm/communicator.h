#ifndef RINGLEADER_WORKER_COMM_COMMUNICATOR_H_
#define RINGLEADER_WORKER_COMM_COMMUNICATOR_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>

#include "absl/status/status.h"

namespace ringleader {

// kFloat16 and kBFloat16 are 16-bit floats held as their raw bits
// (worker/comm/float16.h); every backend sums them with each addition
// rounded to nearest even, NCCL natively, the CPU backends in float32
// (shared memory rounds once per element, Gloo once per ring hop).
enum class DataType { kFloat32, kFloat64, kInt64, kFloat16, kBFloat16 };

size_t DataTypeSize(DataType type);

// The handle of an asynchronous collective (c10d's Work). Wait returns once
// the result is visible to what the caller does next, and the outcome known
// by then: host backends (shared memory, Gloo) block until the operation
// finished on this rank; a device backend (NCCL) instead orders the device's
// producer stream after the operation, as c10d's WorkNCCL::wait does, so the
// host does not block and a failure that comes later shows in the
// communicator's next operation and in InterruptedAfterUse(). An aborted
// communicator fails pending and later work with ABORTED.
class Work {
 public:
  virtual ~Work() = default;
  virtual absl::Status Wait() = 0;
};

// Collectives over raw buffers of one device: host memory for Gloo, CUDA
// device memory for NCCL. The DDP Reducer is written against this interface
// only. Collectives must be issued in the same order on every rank. Work may
// complete out of issue order (Gloo with several lanes runs collectives side
// by side): a caller that needs an operation done waits for its own Work.
// Implementations are thread-safe for Abort() against everything else; the
// collectives themselves are issued from one thread.
class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int world_size() const = 0;

  // In-place sum over all ranks of `count` elements at `data`. `data` must
  // stay valid until the returned work's Wait() has returned.
  virtual std::unique_ptr<Work> AllReduceSumAsync(void* data, size_t count,
                                                  DataType type) = 0;
  // The same, and `on_done` runs once when the operation has completed on
  // this rank (whatever its outcome), before the work's Wait() returns, on
  // whichever thread completed it: the communicator's own thread where it has
  // one (Gloo). The default, for backends whose completion the host sees only
  // by waiting (NCCL), runs it inside Wait(); the work must then be waited.
  virtual std::unique_ptr<Work> AllReduceSumAsyncThen(
      void* data, size_t count, DataType type, std::function<void()> on_done);
  // Copies `bytes` at `data` from rank `root` to every rank.
  virtual absl::Status Broadcast(void* data, size_t bytes, int root) = 0;
  // The same, issued in order with the other collectives; `data` must stay
  // valid, and unread, until the work's Wait() has returned. The default
  // runs Broadcast at once (a backend with no queue of its own; NCCL's
  // broadcast returns once it is enqueued on the device anyway).
  virtual std::unique_ptr<Work> BroadcastAsync(void* data, size_t bytes,
                                               int root);
  // Fails pending and future operations; never blocks for peers, nor on the
  // backend's own teardown (NCCL's runs on a thread of its own). Survivors
  // call it when the coordinator ends their generation.
  virtual void Abort() = 0;
  // True once the communicator failed while the device was already told to
  // use a collective's result (Wait returned) that never completed: what was
  // computed from it, an optimizer step, is wrong. Host backends return a
  // result only when it is complete, so never.
  virtual bool InterruptedAfterUse() const { return false; }
  // The device stream the collectives run on, as LibTorch names a stream
  // (c10::Stream's device type, device index and id), so that torch code
  // can record the buffers it hands over on it (the caching allocator's
  // recordStream); !valid for host backends.
  struct DeviceStream {
    bool valid = false;
    int8_t device_type = 0;
    int8_t device_index = 0;
    int64_t id = 0;
  };
  virtual DeviceStream device_stream() const { return {}; }
  // How long the oldest collective still running on the device has been
  // outstanding, for a device backend, whose Wait does not block the host
  // (so timing Wait says nothing); zero when none, and for host backends.
  virtual std::chrono::milliseconds DeviceWaiting() const {
    return std::chrono::milliseconds(0);
  }

  absl::Status AllReduceSum(void* data, size_t count, DataType type) {
    return AllReduceSumAsync(data, count, type)->Wait();
  }
};

// The base of a decorator: forwards every call to `inner` (not owned), so
// a decorator overrides only what it changes.
class ForwardingCommunicator : public Communicator {
 public:
  explicit ForwardingCommunicator(Communicator* inner) : inner_(inner) {}

  int rank() const override { return inner_->rank(); }
  int world_size() const override { return inner_->world_size(); }
  std::unique_ptr<Work> AllReduceSumAsync(void* data, size_t count,
                                          DataType type) override {
    return inner_->AllReduceSumAsync(data, count, type);
  }
  // `on_done` runs where `inner` completes the operation.
  std::unique_ptr<Work> AllReduceSumAsyncThen(
      void* data, size_t count, DataType type,
      std::function<void()> on_done) override {
    return inner_->AllReduceSumAsyncThen(data, count, type, std::move(on_done));
  }
  absl::Status Broadcast(void* data, size_t bytes, int root) override {
    return inner_->Broadcast(data, bytes, root);
  }
  std::unique_ptr<Work> BroadcastAsync(void* data, size_t bytes,
                                       int root) override {
    return inner_->BroadcastAsync(data, bytes, root);
  }
  void Abort() override { inner_->Abort(); }
  bool InterruptedAfterUse() const override {
    return inner_->InterruptedAfterUse();
  }
  DeviceStream device_stream() const override {
    return inner_->device_stream();
  }
  std::chrono::milliseconds DeviceWaiting() const override {
    return inner_->DeviceWaiting();
  }

 protected:
  Communicator* inner() const { return inner_; }

 private:
  Communicator* const inner_;
};

namespace internal {
// Runs a callback once, after the wrapped work's Wait().
class ThenWork final : public Work {
 public:
  ThenWork(std::unique_ptr<Work> inner, std::function<void()> on_done)
      : inner_(std::move(inner)), on_done_(std::move(on_done)) {}
  absl::Status Wait() override {
    absl::Status s = inner_->Wait();
    if (on_done_) {
      std::function<void()> f = std::move(on_done_);
      on_done_ = nullptr;
      f();
    }
    return s;
  }

 private:
  std::unique_ptr<Work> inner_;
  std::function<void()> on_done_;
};

// An operation already over, with its outcome.
class DoneWork final : public Work {
 public:
  explicit DoneWork(absl::Status s) : status_(std::move(s)) {}
  absl::Status Wait() override { return status_; }

 private:
  const absl::Status status_;
};
}  // namespace internal

inline std::unique_ptr<Work> Communicator::AllReduceSumAsyncThen(
    void* data, size_t count, DataType type, std::function<void()> on_done) {
  return std::make_unique<internal::ThenWork>(
      AllReduceSumAsync(data, count, type), std::move(on_done));
}

inline std::unique_ptr<Work> Communicator::BroadcastAsync(void* data,
                                                          size_t bytes,
                                                          int root) {
  return std::make_unique<internal::DoneWork>(Broadcast(data, bytes, root));
}

inline size_t DataTypeSize(DataType type) {
  switch (type) {
    case DataType::kFloat32:
      return 4;
    case DataType::kFloat64:
    case DataType::kInt64:
      return 8;
    case DataType::kFloat16:
    case DataType::kBFloat16:
      return 2;
  }
  return 0;
}

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_COMM_COMMUNICATOR_H_
