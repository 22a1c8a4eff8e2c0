#ifndef RINGLEADER_WORKER_TRAIN_PROGRESS_PROGRESS_WINDOW_H_
#define RINGLEADER_WORKER_TRAIN_PROGRESS_PROGRESS_WINDOW_H_

// What a rank's progress reports say: the training loss, throughput and
// step time since the previous report, the latest gradient norm measured,
// the latest per-epoch evaluation (carried on every later report: a report
// may replace another in flight), and at the end the final train loss and
// the test metrics' sums.

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "ringleader/v1/worker_service.pb.h"
#include "worker/train/metric_sums.h"

namespace ringleader {

// Not thread-safe.
class ProgressWindow {
 public:
  // `train_size`: the training split's size, which every report carries
  // (ReportProgressRequest.train_size).
  ProgressWindow(std::string job_id, int64_t generation, int32_t rank,
                 int64_t total_steps, int64_t train_size, absl::Time start);

  // One micro-batch of `samples`.
  void AddBatch(int64_t samples);
  // The sum of the window's micro-batch mean losses (LossTracker's): the
  // report carries their mean.
  void AddLossSum(double sum) { loss_sum_ += sum; }
  void AddStep() { ++steps_; }
  // The global gradient norm of the latest step measured; every later
  // report carries it.
  void SetGradNorm(double norm) { grad_norm_ = norm; }
  // The learning rate of the latest step; every later report carries it.
  void SetLearningRate(double lr) { learning_rate_ = lr; }
  // Time the training thread waited for a batch the loader had not ready:
  // the report carries its share of the window.
  void AddDataWait(absl::Duration d) { data_wait_ += d; }
  // How long this rank's worker took from joining the job to its first
  // step; every later report carries it.
  void SetJoinToFirstStep(absl::Duration d) {
    join_to_first_step_ms_ = std::max<int64_t>(1, absl::ToInt64Milliseconds(d));
  }

  // Samples the job's data skipped as unreadable so far; every later
  // report carries it.
  void SetSkippedSamples(int64_t n) { skipped_samples_ = n; }
  // Rank 0's: the class names its first report and its final one carry.
  void SetClassNames(std::vector<std::string> names) {
    class_names_ = std::move(names);
  }

  // The report of the window ending at `now`, which starts the next one.
  v1::ReportProgressRequest Take(int64_t epoch, int64_t step, absl::Time now);
  // Records an evaluation after `epochs` epochs and returns its report.
  v1::ReportProgressRequest Evaluated(int64_t epochs, int64_t step,
                                      double epoch_loss,
                                      const MetricSums& sums);
  // The rank's last report of the job.
  v1::ReportProgressRequest Final(int64_t last_epoch, int64_t step,
                                  double train_loss,
                                  const MetricSums& test) const;

 private:
  v1::ReportProgressRequest Header(int64_t epoch, int64_t step) const;
  void AddEvaluation(v1::ReportProgressRequest& r) const;

  const std::string job_id_;
  const int64_t generation_;
  const int32_t rank_;
  const int64_t total_steps_;
  const int64_t train_size_;
  absl::Time start_;
  double loss_sum_ = 0;
  int64_t batches_ = 0;
  int64_t samples_ = 0;
  int64_t steps_ = 0;
  double grad_norm_ = 0;               // 0: none measured yet.
  double learning_rate_ = 0;           // 0: no step yet.
  absl::Duration data_wait_;           // In the window.
  int64_t join_to_first_step_ms_ = 0;  // 0: not a newcomer, or no step yet.
  int64_t eval_epoch_ = 0;             // 0: no evaluation yet.
  int64_t skipped_samples_ = 0;
  std::vector<std::string> class_names_;
  bool class_names_sent_ = false;
  MetricSums eval_;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_TRAIN_PROGRESS_PROGRESS_WINDOW_H_
