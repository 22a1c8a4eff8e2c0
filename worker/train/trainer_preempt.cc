// Trainer (worker/train/trainer.h): leaving a generation for a preemption.
//
// In synchronous data parallelism every step has collectives with all
// ranks, so the first rank that stops after step s holds every other rank
// in step s+1, whose optimizer step never runs: every rank keeps the state
// after s. The coordinator tells the others (the preemption window,
// coordinator/preemption.h), they abort the step they are blocked in, and
// each rank that was itself signalled says it leaves at s. When every member
// does, rank 0 saves that state as the job's last checkpoint, at the exact
// sample position of step s, so the resumed job repeats no step and skips
// no sample.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "worker/train/checkpoint/checkpointer.h"
#include "worker/train/preempted.h"
#include "worker/train/step/train_step.h"
#include "worker/train/trainer.h"

namespace ringleader {
namespace {

constexpr absl::Duration kFinalCommitWait = absl::Seconds(20);

}  // namespace

bool Trainer::PreemptRequested() const {
  return env_.preempt != nullptr && env_.preempt->load();
}

bool Trainer::StopsForPreemption(bool last_of_epoch) const {
  return PreemptRequested() && !last_of_epoch && step_->done() < planned_steps_;
}

absl::Status Trainer::LeaveForPreemption(const absl::Status& s) {
  // A GPU rank interrupted after using an unfinished all-reduce applied a
  // wrong step: it holds no state worth saving.
  const bool holds_state =
      boundary_.has_value() && !env_.comm->InterruptedAfterUse();
  const int64_t step = holds_state ? boundary_->position.step : -1;
  LOG(WARNING) << "rank " << gen_.rank() << " leaves generation "
               << gen_.generation() << " of job " << job_id_
               << " for a preemption at step " << step << " (" << s.message()
               << ")";
  if (holds_state) RestoreBoundaryBuffers();
  v1::PreemptRequest r;
  r.set_job_id(job_id_);
  r.set_generation(gen_.generation());
  r.set_rank(gen_.rank());
  r.set_step(step);
  absl::StatusOr<v1::PreemptResponse> verdict = env_.link->Preempt(r);
  if (!verdict.ok()) {
    LOG(WARNING) << "the coordinator did not decide the preemption: "
                 << verdict.status();
    return Preempted(absl::StrCat(
        "preempted at step ", step,
        "; the coordinator did not answer: ", verdict.status().message()));
  }
  const bool whole = verdict->verdict() == v1::PREEMPT_VERDICT_WHOLE;
  LOG(INFO) << "preemption verdict: " << (whole ? "WHOLE" : "PARTIAL")
            << (whole && !verdict->steps_agree() ? " (ranks at other steps)"
                                                 : "");
  if (whole && verdict->save_checkpoint()) {
    absl::Status saved = absl::FailedPreconditionError(
        "the job has no checkpoint_dir: it resumes from its last checkpoint");
    if (checkpointer_ != nullptr && checkpointer_->enabled()) {
      // Within the worker's grace (30 s by default), not an outage's
      // patience: a commit that cannot land by then is lost with the
      // process anyway.
      saved = checkpointer_->SaveFinal(
          boundary_->position, boundary_->epoch_sample_offset,
          std::min(env_.send_timeout, kFinalCommitWait));
    }
    if (!saved.ok()) LOG(WARNING) << "no final checkpoint: " << saved;
    r.set_finished(true);
    r.set_step(saved.ok() ? step : -1);
    if (absl::StatusOr<v1::PreemptResponse> done = env_.link->Preempt(r);
        !done.ok()) {
      LOG(WARNING) << "could not tell the coordinator the checkpoint is in: "
                   << done.status();
    }
  }
  return Preempted(absl::StrCat("preempted at step ", step, " (",
                                whole ? "the whole job" : "this rank",
                                " stopped)"));
}

}  // namespace ringleader
