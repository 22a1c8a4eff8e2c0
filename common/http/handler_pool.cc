#include "common/http/handler_pool.h"

#include <utility>

namespace ringleader::http {

HandlerPool::HandlerPool(int threads, int max_queued, Handler handler,
                         std::function<void()> wake)
    : max_queued_(max_queued),
      handler_(std::move(handler)),
      wake_(std::move(wake)) {
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Run(); });
}

HandlerPool::~HandlerPool() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  for (std::thread& t : threads_) t.join();
}

bool HandlerPool::Submit(Job job) {
  absl::MutexLock lock(&mu_);
  if (static_cast<int>(queue_.size()) >= max_queued_) return false;
  queue_.push_back(std::move(job));
  return true;
}

std::vector<HandlerPool::Done> HandlerPool::TakeDone() {
  absl::MutexLock lock(&mu_);
  return std::exchange(done_, {});
}

bool HandlerPool::HasWorkOrStopping() const {
  return stopping_ || !queue_.empty();
}

void HandlerPool::Run() {
  // Bounded by the pool: it ends when the destructor sets stopping_.
  while (true) {
    Job job;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(this, &HandlerPool::HasWorkOrStopping));
      if (stopping_) return;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    Done done{job.id, handler_(job.request, job.peer_ip, job.peer_port)};
    {
      absl::MutexLock lock(&mu_);
      done_.push_back(std::move(done));
    }
    wake_();
  }
}

}  // namespace ringleader::http
