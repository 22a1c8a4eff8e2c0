#include "worker/comm/op_queue.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"

namespace ringleader {

// One queued collective. `status` is written once, before `done` fires;
// Notification orders that write before every reader's return from Wait.
struct OpQueue::Op {
  Body body;
  uint32_t seq = 0;               // Set when queued.
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

OpQueue::OpQueue(std::function<void()> on_first_failure, int lanes)
    : on_first_failure_(std::move(on_first_failure)),
      lanes_(lanes < 1 ? 1 : lanes),
      queues_(static_cast<size_t>(lanes_)) {
  threads_.reserve(static_cast<size_t>(lanes_));
  for (int lane = 0; lane < lanes_; ++lane) {
    threads_.emplace_back([this, lane] { Loop(lane); });
  }
}

OpQueue::~OpQueue() {
  Abort();
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  for (std::thread& t : threads_) t.join();
}

std::unique_ptr<Work> OpQueue::Enqueue(Body body,
                                       std::function<void()> on_done) {
  auto op = std::make_shared<Op>();
  op->body = std::move(body);
  op->on_done = std::move(on_done);
  {
    absl::MutexLock lock(&mu_);
    if (!aborted_) {
      // Numbered under the lock: issue order is sequence order, and so is
      // each lane's FIFO order.
      op->seq = next_seq_++;
      queues_[static_cast<size_t>(LaneOf(op->seq, lanes_))].push_back(op);
      return std::make_unique<OpWork>(std::move(op));
    }
  }
  op->Finish(absl::AbortedError("communicator aborted"));
  return std::make_unique<OpWork>(std::move(op));
}

bool OpQueue::Abort() {
  std::vector<std::deque<std::shared_ptr<Op>>> queued;
  {
    absl::MutexLock lock(&mu_);
    if (aborted_) return false;
    aborted_ = true;
    queued.resize(queues_.size());
    for (size_t i = 0; i < queues_.size(); ++i) queued[i].swap(queues_[i]);
  }
  // Queued operations never touched their buffers: fail them now.
  for (auto& lane : queued) {
    for (auto& op : lane) {
      op->Finish(absl::AbortedError("communicator aborted"));
    }
  }
  return true;
}

bool OpQueue::aborted() const {
  absl::MutexLock lock(&mu_);
  return aborted_;
}

absl::Status OpQueue::RefusalLocked() const {
  if (aborted_) return absl::AbortedError("communicator aborted");
  if (!broken_.ok()) {
    return absl::Status(
        broken_.code(),
        absl::StrCat("an earlier collective failed: ", broken_.message()));
  }
  return absl::OkStatus();
}

absl::Status OpQueue::RecordFailure(absl::Status s, bool* first) {
  absl::MutexLock lock(&mu_);
  if (aborted_) {
    // Abort() stopped it: report why, with the backend's words after.
    if (absl::IsAborted(s)) return s;
    return absl::AbortedError(
        absl::StrCat("communicator aborted (", s.message(), ")"));
  }
  if (broken_.ok()) {
    broken_ = s;
    *first = true;
    return s;
  }
  // Another lane failed first and its backend stopped this one: the first
  // failure is the cause worth reporting.
  return absl::Status(
      broken_.code(),
      absl::StrCat("another collective failed first: ", broken_.message(),
                   " (this one: ", s.message(), ")"));
}

void OpQueue::Loop(int lane) {
  const size_t mine = static_cast<size_t>(lane);
  while (true) {
    std::shared_ptr<Op> op;
    absl::Status refused;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this, mine]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stop_ || !queues_[mine].empty();
      };
      mu_.Await(absl::Condition(&ready));
      // Stopping, and nothing left to finish.
      if (queues_[mine].empty()) return;
      op = std::move(queues_[mine].front());
      queues_[mine].pop_front();
      refused = RefusalLocked();
    }
    if (!refused.ok()) {
      op->Finish(std::move(refused));
      continue;
    }
    absl::Status s = op->body(lane, op->seq);
    bool first_failure = false;
    if (!s.ok()) s = RecordFailure(std::move(s), &first_failure);
    if (first_failure && on_first_failure_) on_first_failure_();
    op->Finish(std::move(s));
  }
}

}  // namespace ringleader
