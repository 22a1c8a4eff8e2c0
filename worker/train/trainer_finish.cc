// Trainer (worker/train/trainer.h): the end of an epoch and of the job.
//
// An epoch ends with its checkpoint and, when the spec asks, an evaluation
// queued as a report of its own. The job ends with the evaluation of the
// test split on rank 0's buffers, the commits still queued, rank 0's
// export, and the final report, in that order: once the coordinator counts
// every final report the job is SUCCEEDED, and what it names must exist.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/logging.h"
#include "worker/export/class_names_export.h"
#include "worker/export/model_export.h"
#include "worker/timeline/timeline.h"
#include "worker/train/checkpoint/checkpointer.h"
#include "worker/train/checkpoint/state_digest.h"
#include "worker/train/evaluator.h"
#include "worker/train/job_error.h"
#include "worker/train/progress/loss_tracker.h"
#include "worker/train/progress/progress_reporter.h"
#include "worker/train/progress/progress_window.h"
#include "worker/train/step/train_step.h"
#include "worker/train/trainer.h"

namespace ringleader {

absl::StatusOr<MetricSums> Trainer::EvaluateTestSplit() {
  TimelineSpan span(timeline_.get(), "evaluation", Phase::kEvaluation);
  VLOG(1) << "evaluating the test split";
  // Rank 0's buffers first, as DDP's wrapper broadcasts them before the
  // first forward after training, evaluation's included: every rank then
  // evaluates the model rank 0 checkpoints and exports, and the pooled
  // metrics are one model's on the whole split. Without it, each rank
  // evaluated with its own BatchNorm running statistics, which its last
  // training forward updated with its own batch.
  if (absl::Status s = step_->SyncBuffers(); !s.ok()) return Broken(s);
  absl::StatusOr<std::unique_ptr<BatchLoader>> test =
      source_->Test(std::max<int64_t>(256, gen_.spec().batch_size()));
  if (!test.ok()) return test.status();
  return Evaluate(*replica_.model, *replica_.task, test->get(),
                  source_->test_data(), device_);
}

absl::Status Trainer::EndEpoch(int64_t epoch) {
  const v1::JobSpec& spec = gen_.spec();
  absl::StatusOr<double> epoch_loss = losses_->TakeEpochMean();
  if (!epoch_loss.ok()) return epoch_loss.status();
  last_epoch_loss_ = *epoch_loss;
  if (checkpointer_->enabled()) {
    TimelineSpan span(timeline_.get(), "checkpoint", Phase::kCheckpoint);
    if (absl::Status s = checkpointer_->Save({epoch + 1, step_->done()}, 0);
        !s.ok()) {
      return s;
    }
  }
  if (!spec.evaluate_every_epoch() || epoch + 1 >= spec.epochs()) {
    return absl::OkStatus();
  }
  absl::StatusOr<MetricSums> sums = EvaluateTestSplit();
  if (!sums.ok()) return sums.status();
  reporter_->Submit(
      window_->Evaluated(epoch + 1, step_->done(), last_epoch_loss_, *sums));
  return absl::OkStatus();
}

absl::Status Trainer::Finish() {
  const v1::JobSpec& spec = gen_.spec();
  const absl::Duration bound = env_.send_timeout;
  absl::StatusOr<MetricSums> sums = EvaluateTestSplit();
  if (!sums.ok()) return sums.status();
  // After the evaluation synced rank 0's buffers: every rank's whole state.
  LogStateDigest("end", step_->done());
  // Commits still queued (the coordinator was away) go before the final
  // report: once the job is SUCCEEDED its checkpoint history is complete.
  if (absl::Status s = checkpointer_->Drain(bound); !s.ok()) return s;
  if (gen_.rank() == 0) {
    // Before the final report: once the job is SUCCEEDED the files are there.
    if (absl::Status s = ExportModel(*replica_.model, spec.export_());
        !s.ok()) {
      return JobError(s, "exporting the trained model");
    }
    if (absl::Status s =
            ExportClassNames(env_.data->class_names, spec.export_());
        !s.ok()) {
      return JobError(s, "exporting the class names");
    }
  }
  LOG(INFO) << "rank " << gen_.rank() << " done: train loss "
            << last_epoch_loss_ << ", test metrics "
            << absl::StrJoin(sums->sums(), ", ",
                             [](std::string* out, const v1::MetricSum& m) {
                               absl::StrAppend(
                                   out, m.name(), " ",
                                   m.count() > 0 ? m.sum() / m.count() : 0.0);
                             });
  // Written before the final report, so the file is there once the job is.
  FlushTimeline();
  window_->SetSkippedSamples(env_.data->train->skipped_samples() +
                             env_.data->test->skipped_samples());
  // After the reports queued before it (each evaluation's among them).
  return reporter_->Deliver(
      window_->Final(spec.epochs() - 1, step_->done(), last_epoch_loss_, *sums),
      bound);
}

void Trainer::LogStateDigest(const char* when, int64_t step) const {
  LOG(INFO) << "rank " << gen_.rank() << " state digest at step " << step
            << " (" << when
            << "): " << StateDigest(*replica_.model, *replica_.optimizer);
}

}  // namespace ringleader
