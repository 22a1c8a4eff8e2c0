#ifndef RINGLEADER_WORKER_TRAIN_METRIC_SUMS_H_
#define RINGLEADER_WORKER_TRAIN_METRIC_SUMS_H_

// A rank's running sums behind each evaluation metric: what it reports, so
// that the coordinator pools ranks by adding sums and counts and every test
// sample counts exactly once (common/eval_metrics.h).

#include <cstdint>
#include <string>
#include <vector>

#include "google/protobuf/repeated_field.h"
#include "ringleader/v1/job.pb.h"

namespace ringleader {

// Not thread-safe.
class MetricSums {
 public:
  // Adds to metric `name` (created, in first-use order, on first use).
  void Add(const std::string& name, double sum, int64_t count);
  // The sum and count of `name`; {0, 0} when absent.
  v1::MetricSum Get(const std::string& name) const;
  // sum / count of `name`; 0 when it has no count.
  double Mean(const std::string& name) const;

  void AppendTo(google::protobuf::RepeatedPtrField<v1::MetricSum>* out) const;
  const std::vector<v1::MetricSum>& sums() const { return sums_; }

 private:
  std::vector<v1::MetricSum> sums_;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_TRAIN_METRIC_SUMS_H_
