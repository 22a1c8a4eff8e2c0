#include "coordinator/scheduler/queue_usage.h"

#include <algorithm>
#include <limits>

namespace ringleader::scheduler {

QueueUsage::QueueUsage(const std::vector<QueueConfig>& queues,
                       const std::vector<JobState>& jobs) {
  for (const QueueConfig& q : queues) configs_[q.name] = q;
  for (const JobState& j : jobs) used_[j.queue] += j.workers;
}

QueueConfig QueueUsage::Config(const std::string& queue) const {
  auto it = configs_.find(queue);
  if (it != configs_.end()) return it->second;
  QueueConfig shared;
  shared.name = queue;
  return shared;
}

int32_t QueueUsage::Used(const std::string& queue) const {
  auto it = used_.find(queue);
  return it == used_.end() ? 0 : it->second;
}

int32_t QueueUsage::Borrowed(const std::string& queue) const {
  return std::max(0, Used(queue) - Config(queue).quota);
}

double QueueUsage::Share(const std::string& queue) const {
  // A weight of 0 (or less, or not a number) borrows last and gives back
  // first.
  const double weight = Config(queue).weight;
  if (!(weight > 0)) {
    return Borrowed(queue) > 0 ? std::numeric_limits<double>::infinity() : 0;
  }
  return Borrowed(queue) / weight;
}

bool QueueUsage::MayTake(const std::string& queue, int32_t workers) const {
  return workers <= Allowance(queue);
}

bool QueueUsage::WithinQuotaAfter(const std::string& queue,
                                  int32_t workers) const {
  return Used(queue) + workers <= Config(queue).quota;
}

int32_t QueueUsage::Allowance(const std::string& queue) const {
  const QueueConfig c = Config(queue);
  if (c.may_borrow) return std::numeric_limits<int32_t>::max();
  return std::max(0, c.quota - Used(queue));
}

void QueueUsage::Add(const std::string& queue, int32_t workers) {
  used_[queue] += workers;
}

}  // namespace ringleader::scheduler
