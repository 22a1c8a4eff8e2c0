#ifndef RINGLEADER_COORDINATOR_SCHEDULER_QUEUE_USAGE_H_
#define RINGLEADER_COORDINATOR_SCHEDULER_QUEUE_USAGE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "coordinator/scheduler/pool_state.h"

namespace ringleader::scheduler {

// The workers each queue holds as a plan is made, against its quota. A job
// naming a queue that is not configured is in a queue of quota 0, weight 1
// that may borrow: with no queues configured the pool is one shared queue.
class QueueUsage {
 public:
  QueueUsage(const std::vector<QueueConfig>& queues,
             const std::vector<JobState>& jobs);

  int32_t Used(const std::string& queue) const;
  // Workers held past the quota.
  int32_t Borrowed(const std::string& queue) const;
  // Borrowed workers over the queue's weight: smaller goes first, and a
  // queue with a larger share gives back first.
  double Share(const std::string& queue) const;
  // Whether the queue may take `workers` more: within its quota, or
  // borrowing where it may.
  bool MayTake(const std::string& queue, int32_t workers) const;
  // Whether the queue holds no more than its quota after taking `workers`.
  bool WithinQuotaAfter(const std::string& queue, int32_t workers) const;
  // The most the queue may take now (its quota left, or any if it may
  // borrow).
  int32_t Allowance(const std::string& queue) const;
  void Add(const std::string& queue, int32_t workers);

 private:
  QueueConfig Config(const std::string& queue) const;

  absl::flat_hash_map<std::string, QueueConfig> configs_;
  absl::flat_hash_map<std::string, int32_t> used_;
};

}  // namespace ringleader::scheduler

#endif  // RINGLEADER_COORDINATOR_SCHEDULER_QUEUE_USAGE_H_
