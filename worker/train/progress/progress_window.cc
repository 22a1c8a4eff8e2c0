#include "worker/train/progress/progress_window.h"

#include <cmath>
#include <utility>

namespace ringleader {
namespace {

// The pre-metrics fields: correct predictions of the test samples, which
// older coordinators and clients read.
void SetCorrect(const MetricSums& sums, int64_t* correct, int64_t* samples) {
  const v1::MetricSum accuracy = sums.Get("accuracy");
  *correct = std::llround(accuracy.sum());
  *samples = accuracy.count();
}

}  // namespace

ProgressWindow::ProgressWindow(std::string job_id, int64_t generation,
                               int32_t rank, int64_t total_steps,
                               int64_t train_size, absl::Time start)
    : job_id_(std::move(job_id)),
      generation_(generation),
      rank_(rank),
      total_steps_(total_steps),
      train_size_(train_size),
      start_(start) {}

void ProgressWindow::AddBatch(int64_t samples) {
  ++batches_;
  samples_ += samples;
}

v1::ReportProgressRequest ProgressWindow::Header(int64_t epoch,
                                                 int64_t step) const {
  v1::ReportProgressRequest r;
  r.set_job_id(job_id_);
  r.set_generation(generation_);
  r.set_rank(rank_);
  r.set_epoch(epoch);
  r.set_step(step);
  r.set_total_steps(total_steps_);
  r.set_train_size(train_size_);
  r.set_grad_norm(grad_norm_);
  r.set_learning_rate(learning_rate_);
  r.set_join_to_first_step_ms(join_to_first_step_ms_);
  r.set_skipped_samples(skipped_samples_);
  return r;
}

void ProgressWindow::AddEvaluation(v1::ReportProgressRequest& r) const {
  if (eval_epoch_ == 0) return;
  r.set_eval_epoch(eval_epoch_);
  int64_t correct = 0, samples = 0;
  SetCorrect(eval_, &correct, &samples);
  r.set_eval_correct(correct);
  r.set_eval_samples(samples);
  eval_.AppendTo(r.mutable_eval_metrics());
}

v1::ReportProgressRequest ProgressWindow::Take(int64_t epoch, int64_t step,
                                               absl::Time now) {
  v1::ReportProgressRequest r = Header(epoch, step);
  const double secs = absl::ToDoubleSeconds(now - start_);
  r.set_loss(batches_ > 0 ? loss_sum_ / batches_ : 0);
  r.set_samples_per_sec(secs > 0 ? samples_ / secs : 0);
  r.set_step_time_ms(steps_ > 0 ? 1000 * secs / steps_ : 0);
  r.set_data_wait_share(
      secs > 0 ? std::clamp(absl::ToDoubleSeconds(data_wait_) / secs, 0.0, 1.0)
               : 0);
  AddEvaluation(r);
  if (!class_names_sent_) {
    r.mutable_class_names()->Assign(class_names_.begin(), class_names_.end());
    class_names_sent_ = true;
  }
  loss_sum_ = 0;
  batches_ = samples_ = steps_ = 0;
  data_wait_ = absl::ZeroDuration();
  start_ = now;
  return r;
}

v1::ReportProgressRequest ProgressWindow::Evaluated(int64_t epochs,
                                                    int64_t step,
                                                    double epoch_loss,
                                                    const MetricSums& sums) {
  eval_epoch_ = epochs;
  eval_ = sums;
  v1::ReportProgressRequest r = Header(epochs, step);
  r.set_loss(epoch_loss);
  AddEvaluation(r);
  return r;
}

v1::ReportProgressRequest ProgressWindow::Final(int64_t last_epoch,
                                                int64_t step, double train_loss,
                                                const MetricSums& test) const {
  v1::ReportProgressRequest r = Header(last_epoch, step);
  r.set_loss(train_loss);
  r.set_finished(true);
  r.set_final_train_loss(train_loss);
  int64_t correct = 0, samples = 0;
  SetCorrect(test, &correct, &samples);
  r.set_test_correct(correct);
  r.set_test_samples(samples);
  test.AppendTo(r.mutable_test_metrics());
  // Again on the last report: the first may have been replaced in flight.
  r.mutable_class_names()->Assign(class_names_.begin(), class_names_.end());
  return r;
}

}  // namespace ringleader
