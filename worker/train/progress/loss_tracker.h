#ifndef RINGLEADER_WORKER_TRAIN_PROGRESS_LOSS_TRACKER_H_
#define RINGLEADER_WORKER_TRAIN_PROGRESS_LOSS_TRACKER_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ringleader {

// The training loss the progress reports and the epoch's end carry: each
// micro-batch's mean loss, summed for the current report window and for the
// epoch. On a GPU (`on_device`) the sums stay on the device and are read
// only when a report or the epoch's end needs them: reading a loss makes
// the host wait for the GPU to finish the step, which would drain its queue
// every micro-step. On the CPU each loss is read at once (it costs nothing),
// so a non-finite loss is caught at its own step; on a GPU, at the next
// read, naming the steps since the last one. Not thread-safe.
class LossTracker {
 public:
  explicit LossTracker(bool on_device) : on_device_(on_device) {}

  // `loss`: a scalar of the micro-batch of optimizer step `step` (1-based)
  // in `epoch`, whose first sample has dataset index `first_sample`.
  // A job error when a loss read now is not finite.
  absl::Status Add(const at::Tensor& loss, int64_t step, int64_t epoch,
                   int64_t first_sample);
  // The sum of the window's losses (and starts the next window); a job
  // error when it is not finite.
  absl::StatusOr<double> TakeWindowSum();
  // The mean of the epoch's losses, 0 without any (and starts the next
  // epoch); a job error when it is not finite.
  absl::StatusOr<double> TakeEpochMean();

 private:
  struct Sum {
    at::Tensor device;  // float64 scalar; on_device only.
    double host = 0;
    int64_t count = 0;
    int64_t first_step = 0;
    int64_t epoch = 0;
  };
  void AddTo(Sum& sum, const at::Tensor& loss, double value, int64_t step,
             int64_t epoch);
  absl::StatusOr<double> Take(Sum& sum);

  const bool on_device_;
  Sum window_;
  Sum epoch_;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_TRAIN_PROGRESS_LOSS_TRACKER_H_
