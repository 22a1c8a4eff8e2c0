#include "worker/train/progress/loss_tracker.h"

#include <ATen/ATen.h>

#include <cmath>

#include "absl/strings/str_cat.h"
#include "worker/train/job_error.h"

namespace ringleader {
namespace {

// Every later step would be non-finite too: the job's own failure.
absl::Status NotFinite(double value, const std::string& where) {
  return JobError(absl::InvalidArgumentError(
      absl::StrCat("the training loss is ", value, " ", where,
                   "; lower the learning rate or check the data")));
}

}  // namespace

absl::Status LossTracker::Add(const at::Tensor& loss, int64_t step,
                              int64_t epoch, int64_t first_sample) {
  double value = 0;
  if (!on_device_) {
    value = loss.item<double>();
    if (!std::isfinite(value)) {
      return NotFinite(
          value, absl::StrCat("at step ", step, " (epoch ", epoch,
                              ", a batch of samples ", first_sample, ", ...)"));
    }
  }
  AddTo(window_, loss, value, step, epoch);
  AddTo(epoch_, loss, value, step, epoch);
  return absl::OkStatus();
}

void LossTracker::AddTo(Sum& sum, const at::Tensor& loss, double value,
                        int64_t step, int64_t epoch) {
  if (sum.count == 0) {
    sum.first_step = step;
    sum.epoch = epoch;
  }
  ++sum.count;
  if (!on_device_) {
    sum.host += value;
    return;
  }
  // Queued on the device like the step itself; nothing waits for it.
  const at::Tensor l = loss.detach().to(at::kDouble);
  sum.device = sum.device.defined() ? sum.device.add(l) : l;
}

absl::StatusOr<double> LossTracker::Take(Sum& sum) {
  const double total =
      on_device_ && sum.device.defined() ? sum.device.item<double>() : sum.host;
  const Sum taken = sum;
  sum = Sum();
  if (!std::isfinite(total)) {
    return NotFinite(total, absl::StrCat("in the steps from ", taken.first_step,
                                         " (epoch ", taken.epoch, ") on"));
  }
  return total;
}

absl::StatusOr<double> LossTracker::TakeWindowSum() { return Take(window_); }

absl::StatusOr<double> LossTracker::TakeEpochMean() {
  const int64_t count = epoch_.count;
  absl::StatusOr<double> total = Take(epoch_);
  if (!total.ok() || count == 0) return total;
  return *total / static_cast<double>(count);
}

}  // namespace ringleader
