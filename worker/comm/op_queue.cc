#include "worker/comm/op_queue.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"

namespace ringleader {

// One queued collective. `status` is written once, before `done` fires;
// Notification orders that write before every reader's return from Wait.
struct OpQueue::Op {
  Body body;
  std::function<void()> on_done;  // Optional; runs before `done` fires.
  absl::Status status;
  absl::Notification done;

  void Finish(absl::Status s) {
    status = std::move(s);
    if (on_done) on_done();
    done.Notify();
  }
};

// Shares the Op, so a Work may outlive the queue (the destructor finishes
// every Op, with ABORTED if need be).
class OpQueue::OpWork : public Work {
 public:
  explicit OpWork(std::shared_ptr<Op> op) : op_(std::move(op)) {}
  absl::Status Wait() override {
    op_->done.WaitForNotification();
    return op_->status;
  }

 private:
  std::shared_ptr<Op> op_;
};

namespace {

class ReadyWorkImpl : public Work {
 public:
  explicit ReadyWorkImpl(absl::Status s) : status_(std::move(s)) {}
  absl::Status Wait() override { return status_; }

 private:
  const absl::Status status_;
};

}  // namespace

std::unique_ptr<Work> ReadyWork(absl::Status s, std::function<void()> on_done) {
  if (on_done) on_done();
  return std::make_unique<ReadyWorkImpl>(std::move(s));
}

OpQueue::OpQueue(std::function<void()> on_first_failure)
    : on_first_failure_(std::move(on_first_failure)),
      thread_([this] { Loop(); }) {}

OpQueue::~OpQueue() {
  Abort();
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  thread_.join();
}

std::unique_ptr<Work> OpQueue::Enqueue(Body body,
                                       std::function<void()> on_done) {
  auto op = std::make_shared<Op>();
  op->body = std::move(body);
  op->on_done = std::move(on_done);
  {
    absl::MutexLock lock(&mu_);
    if (!aborted_) {
      queue_.push_back(op);
      return std::make_unique<OpWork>(std::move(op));
    }
  }
  op->Finish(absl::AbortedError("communicator aborted"));
  return std::make_unique<OpWork>(std::move(op));
}

bool OpQueue::Abort() {
  std::deque<std::shared_ptr<Op>> queued;
  {
    absl::MutexLock lock(&mu_);
    if (aborted_) return false;
    aborted_ = true;
    queued.swap(queue_);
  }
  // Queued operations never touched their buffers: fail them now.
  for (auto& op : queued) {
    op->Finish(absl::AbortedError("communicator aborted"));
  }
  return true;
}

bool OpQueue::aborted() const {
  absl::MutexLock lock(&mu_);
  return aborted_;
}

void OpQueue::Loop() {
  uint32_t next_seq = 0;
  while (true) {
    std::shared_ptr<Op> op;
    absl::Status refused;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stop_ || !queue_.empty();
      };
      mu_.Await(absl::Condition(&ready));
      if (queue_.empty()) return;  // Stopping, and nothing left to finish.
      op = std::move(queue_.front());
      queue_.pop_front();
      if (aborted_) {
        refused = absl::AbortedError("communicator aborted");
      } else if (!broken_.ok()) {
        refused = absl::Status(
            broken_.code(),
            absl::StrCat("an earlier collective failed: ", broken_.message()));
      }
    }
    if (!refused.ok()) {
      op->Finish(std::move(refused));
      continue;
    }
    absl::Status s = op->body(next_seq++);
    bool first_failure = false;
    if (!s.ok()) {
      absl::MutexLock lock(&mu_);
      if (aborted_) {
        // Abort() stopped it: report why, with the backend's words after.
        if (!absl::IsAborted(s)) {
          s = absl::AbortedError(
              absl::StrCat("communicator aborted (", s.message(), ")"));
        }
      } else if (broken_.ok()) {
        broken_ = s;
        first_failure = true;
      }
    }
    if (first_failure && on_first_failure_) on_first_failure_();
    op->Finish(std::move(s));
  }
}

}  // namespace ringleader
