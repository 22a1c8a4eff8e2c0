#include "worker/train/trainer.h"

#include <torch/torch.h>

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/logging.h"
#include "worker/comm/metered_communicator.h"
#include "worker/data/batch_loader.h"
#include "worker/timeline/timeline.h"
#include "worker/train/checkpoint/peer_recovery.h"
#include "worker/train/dataset_agreement.h"
#include "worker/train/job_error.h"
#include "worker/train/preempted.h"
#include "worker/train/progress/loss_tracker.h"
#include "worker/train/progress/progress_reporter.h"
#include "worker/train/progress/progress_schedule.h"
#include "worker/train/progress/progress_window.h"
#include "worker/train/progress/tensorboard_writer.h"
#include "worker/train/step/lr_schedule.h"
#include "worker/train/step/step_plan.h"
#include "worker/train/step/train_step.h"

namespace ringleader {

Trainer::Trainer(TrainerEnv env, std::string job_id,
                 v1::JoinRendezvousResponse generation)
    : env_(std::move(env)),
      joined_at_(env_.joined_at),
      job_id_(std::move(job_id)),
      gen_(std::move(generation)),
      device_(env_.device) {}

Trainer::~Trainer() = default;

absl::Status Trainer::Aborted() const {
  return absl::AbortedError(absl::StrCat("generation ", gen_.generation(),
                                         " of job ", job_id_, " ended"));
}

absl::Status Trainer::Broken(const absl::Status& s) const {
  return *env_.aborted ? Aborted() : s;
}

absl::Status Trainer::Interrupted() const {
  if (*env_.aborted) return Aborted();
  // A commit answered late that ended the generation (or was refused)
  // stops training here, as one answered at once stops it at Save.
  return checkpointer_->Verdict();
}

void Trainer::FlushTimeline() {
  if (timeline_ == nullptr || timeline_flushed_) return;
  timeline_flushed_ = true;
  if (absl::Status s = timeline_->Flush(); !s.ok()) LOG(WARNING) << s.message();
}

absl::Status Trainer::Run() {
  absl::Status s = Train();
  // Every bucket's all-reduce has completed once the step (its reducer) is
  // gone, so the timeline records them all, however training ended.
  step_.reset();
  FlushTimeline();
  if (!s.ok() && !IsJobError(s) &&
      (PreemptRequested() || (absl::IsAborted(s) && env_.await_own_preemption &&
                              env_.await_own_preemption()))) {
    return LeaveForPreemption(s);
  }
  if (absl::IsAborted(s)) Keep();
  if (IsJobError(s)) {
    LOG(ERROR) << "job " << job_id_ << " cannot go on: " << s.message();
    ReportJobError(*env_.link, job_id_, gen_.generation(), gen_.rank(), s);
  }
  return s;
}

absl::Status Trainer::Train() {
  MakeTimeline();
  if (absl::Status s = BuildReplica(); !s.ok()) return s;
  {
    TimelineSpan span(timeline_.get(), "recovery", Phase::kRecovery);
    if (absl::Status s = SetUpReplicas(); !s.ok()) return s;
  }
  source_ = std::make_unique<BatchSource>(env_.data, gen_, shard_resume_,
                                          /*pin_memory=*/device_.is_cuda());
  // A GPU's step is timed by its stream, not by the host's clock; the
  // GPUs of a job are alike.
  if (gen_.spec().ddp().balance_batches() && gen_.world_size() > 1 &&
      !device_.is_cuda()) {
    BatchBalancer::Options o;
    o.per_rank_batch = gen_.spec().batch_size();
    o.prefetch = source_->prefetch();
    balancer_ = std::make_unique<BatchBalancer>(env_.comm, device_, o);
  }
  if (absl::Status s = StartSenders(); !s.ok()) return s;
  for (int64_t epoch = resumed_.position.epoch; epoch < gen_.spec().epochs();
       ++epoch) {
    if (absl::Status s = RunEpoch(epoch); !s.ok()) return s;
  }
  return Finish();
}

void Trainer::MakeTimeline() {
  const v1::JobSpec& spec = gen_.spec();
  timeline_ = std::make_unique<Timeline>(
      spec.timeline_dir().empty()
          ? std::string()
          : Timeline::PathFor(spec.timeline_dir(), job_id_, gen_.rank()),
      gen_.rank(), spec.timeline_steps());
  timeline_->SetMetadata("job_id", job_id_);
  timeline_->SetMetadata("generation", absl::StrCat(gen_.generation()));
  // Its spans also say what this rank is doing, for the heartbeats.
  timeline_->SetPhases(env_.phases);
  if (env_.phases != nullptr) env_.phases->ResetSteps();
}

absl::Status Trainer::BuildReplica() {
  absl::StatusOr<Replica> replica =
      ringleader::BuildReplica(gen_.spec(), *env_.data, device_);
  if (!replica.ok()) return replica.status();
  replica_ = *std::move(replica);
  return absl::OkStatus();
}

absl::Status Trainer::SetUpReplicas() {
  // Before anything is planned from them: every rank plans its shards from
  // its own copy's sizes.
  SplitSizes sizes;
  sizes.train = env_.data->train->size();
  sizes.test = env_.data->test->size();
  sizes.train_name = env_.data->train->Describe();
  sizes.test_name = env_.data->test->Describe();
  if (absl::Status s = AgreeOnDatasetSizes(*env_.comm, device_, gen_.rank(),
                                           gen_.world_size(), sizes);
      !s.ok()) {
    return IsJobError(s) ? s : Broken(s);
  }
  absl::StatusOr<ResumePoint> resumed = Resume();
  if (!resumed.ok()) return Broken(resumed.status());
  resumed_ = *resumed;
  if (resumed_.position.step != 0 || resumed_.position.epoch != 0 ||
      resumed_.epoch_sample_offset != 0) {
    shard_resume_ = {resumed_.position.epoch, resumed_.epoch_sample_offset};
    // As loaded, before rank 0's parameters are broadcast: the ranks agree
    // by the recovery itself, not by the broadcast.
    LogStateDigest("resumed", resumed_.position.step);
  }
  if (absl::Status s = CreateStep(resumed_); !s.ok()) return s;
  if (absl::Status s = step_->BroadcastFromRoot(); !s.ok()) return Broken(s);
  std::vector<at::Tensor> buffers;
  for (const NamedTensor& b : replica_.model->NamedBuffers()) {
    buffers.push_back(b.tensor);
  }
  boundary_buffers_ = std::make_unique<BufferSnapshot>(std::move(buffers));
  // The replicas agree from here: a generation that ends now keeps this.
  boundary_.emplace();
  boundary_->job_id = job_id_;
  boundary_->position = resumed_.position;
  boundary_->epoch_sample_offset = resumed_.epoch_sample_offset;
  return absl::OkStatus();
}

absl::StatusOr<ResumePoint> Trainer::Resume() {
  const int64_t newest_offered =
      gen_.resume_candidates_size() > 0 ? gen_.resume_candidates(0).step() : -1;
  static const KeptState kNothingKept;
  absl::StatusOr<std::optional<ResumePoint>> peers = RecoverFromPeers(
      job_id_, env_.kept != nullptr ? *env_.kept : kNothingKept, newest_offered,
      *replica_.model, *replica_.optimizer, *env_.comm, device_,
      env_.before_state_broadcast);
  if (!peers.ok()) return peers.status();
  if (peers->has_value()) return **peers;
  return ResumeFromOffered(gen_, *replica_.model, *replica_.optimizer,
                           *env_.comm, device_);
}

absl::Status Trainer::CreateStep(const ResumePoint& resumed) {
  const v1::JobSpec& spec = gen_.spec();
  // The same on every rank: they resumed from the same state.
  planned_steps_ =
      PlannedOptimizerSteps(spec, env_.data->train->size(), gen_.world_size(),
                            {resumed.position.epoch, resumed.position.step,
                             resumed.epoch_sample_offset});
  LOG(INFO) << "rank " << gen_.rank() << " plans " << planned_steps_
            << " optimizer steps at world size " << gen_.world_size()
            << "; learning-rate decay horizon "
            << DecayHorizon(spec.lr_schedule(), planned_steps_);
  StepParts parts;
  parts.model = replica_.model.get();
  parts.task = replica_.task.get();
  parts.optimizer = replica_.optimizer.get();
  parts.comm = env_.comm;
  parts.timeline = timeline_.get();
  parts.device = device_;
  parts.data = env_.data->train.get();
  if (env_.metrics != nullptr) {
    metered_ = std::make_unique<MeteredCommunicator>(
        env_.comm, env_.metrics->allreduce_bytes,
        env_.metrics->allreduce_seconds);
    parts.comm = metered_.get();
    env_.metrics->rank->Set(gen_.rank());
    env_.metrics->world_size->Set(gen_.world_size());
  }
  absl::StatusOr<std::unique_ptr<TrainStep>> step = TrainStep::Create(
      parts, StepRecipe::ForJob(spec, planned_steps_), resumed.position.step);
  if (!step.ok()) return step.status();
  step_ = *std::move(step);
  return absl::OkStatus();
}

absl::Status Trainer::StartSenders() {
  const v1::JobSpec& spec = gen_.spec();
  if (gen_.rank() == 0 && !spec.export_().tensorboard_dir().empty()) {
    absl::StatusOr<std::unique_ptr<TensorBoardWriter>> tb =
        TensorBoardWriter::Open(spec.export_().tensorboard_dir(), spec.task(),
                                absl::Now());
    if (!tb.ok()) return JobError(tb.status(), "export.tensorboard_dir");
    tensorboard_ = *std::move(tb);
    LOG(INFO) << "rank 0 writes TensorBoard events to " << tensorboard_->path();
  }
  // Commits and reports are queued and sent from threads of their own, and
  // retried through a coordinator outage: training does not wait for them.
  CoordinatorLink* link = env_.link;
  checkpointer_ = std::make_unique<Checkpointer>(
      [link](const v1::CommitCheckpointRequest& c,
             const std::atomic<bool>* cancel) {
        return link->CommitCheckpoint(c, cancel);
      },
      job_id_, gen_, replica_.model.get(), replica_.optimizer.get(),
      resumed_.checkpoint_id, env_.data->train->size());
  // Rank 0's event file is written on the reporter's thread, before each
  // send: a coordinator outage does not hold TensorBoard's points back.
  TensorBoardWriter* tb = tensorboard_.get();
  reporter_ = std::make_unique<ProgressReporter>(
      [link, tb](const v1::ReportProgressRequest& r,
                 const std::atomic<bool>* cancel) {
        if (tb != nullptr) tb->Record(r);
        return link->ReportProgress(r, cancel);
      });
  // Reporting waits out progress_min_interval_ms (0 in a spec that skipped
  // WithDefaults: by steps alone).
  const absl::Time now = env_.clock->Now();
  schedule_ = std::make_unique<ProgressSchedule>(
      spec.progress_every_steps(),
      absl::Milliseconds(spec.progress_min_interval_ms()), now);
  losses_ = std::make_unique<LossTracker>(/*on_device=*/device_.is_cuda());
  window_ = std::make_unique<ProgressWindow>(job_id_, gen_.generation(),
                                             gen_.rank(), planned_steps_,
                                             env_.data->train->size(), now);
  if (gen_.rank() == 0) window_->SetClassNames(env_.data->class_names);
  return absl::OkStatus();
}

absl::Status Trainer::RunEpoch(int64_t epoch) {
  // Every rank starts the epoch with the split last agreed.
  split_.reset();
  if (balancer_ != nullptr) {
    split_ = std::make_unique<BatchSplitSchedule>(balancer_->counts());
  }
  absl::StatusOr<BatchSource::Epoch> e = source_->Train(epoch, split_.get());
  if (!e.ok()) return e.status();
  if (env_.metrics != nullptr) {
    env_.metrics->epoch->Set(static_cast<double>(epoch));
    env_.metrics->total_steps->Set(static_cast<double>(planned_steps_));
  }
  step_started_ = env_.clock->Now();
  for (int64_t b = 0; b < e->loader->num_batches(); ++b) {
    if (absl::Status s = Interrupted(); !s.ok()) return s;
    absl::StatusOr<bool> completes_step = RunMicroBatch(epoch, *e, b);
    if (!completes_step.ok()) return completes_step.status();
    if (absl::Status s = Rebalance(*e, b); !s.ok()) return s;
    if (!*completes_step) continue;
    // Every rank that gets past here holds the job's state after the step
    // (step boundary): where training may stop or be saved.
    if (absl::Status s = FinishStep(epoch, *e, b); !s.ok()) return s;
    // The first rank to stop here holds every other at the next step's
    // first collective: all keep the state after this one.
    if (StopsForPreemption(b + 1 == e->loader->num_batches())) {
      return Preempted(absl::StrCat("rank ", gen_.rank(),
                                    " stopped after step ", step_->done()));
    }
  }
  return EndEpoch(epoch);
}

absl::StatusOr<bool> Trainer::RunMicroBatch(int64_t epoch,
                                            const BatchSource::Epoch& e,
                                            int64_t b) {
  const int64_t step = step_->done() + 1;  // The step it goes into.
  timeline_->SetStep(step);
  std::optional<Batch> batch;
  {
    TimelineSpan span(timeline_.get(), "data_wait", Phase::kDataLoading);
    const absl::Time asked = env_.clock->Now();
    batch = e.loader->Next();
    window_->AddDataWait(env_.clock->Now() - asked);
  }
  if (!batch.has_value()) {
    return JobError(
        e.loader->status(),
        absl::StrCat("reading the ", source_->train_data().Describe()));
  }
  // With GLOG_v=1 every batch's sample ids are logged with the optimizer
  // step they go into: tests check from them that a resumed run sees each
  // sample of an epoch once.
  VLOG(1) << "samples generation=" << gen_.generation()
          << " rank=" << gen_.rank() << " epoch=" << epoch << " step=" << step
          << " ids=" << absl::StrJoin(batch->sample_ids, ",");
  MicroBatchPlace place;
  place.epoch = epoch;
  place.position = source_->SamplePosition(e, b);
  place.last_of_epoch = b + 1 == e.loader->num_batches();
  place.loss_weight = source_->LossWeight(e, b, batch->size());
  absl::StatusOr<TrainStep::MicroResult> micro = step_->Micro(*batch, place);
  if (!micro.ok()) {
    return IsJobError(micro.status()) ? micro.status() : Broken(micro.status());
  }
  if (balancer_ != nullptr) balancer_->Add(batch->size(), micro->busy);
  window_->AddBatch(batch->size());
  if (absl::Status s =
          losses_->Add(micro->loss, step, epoch, batch->sample_ids.front());
      !s.ok()) {
    return s;
  }
  return micro->completes_step;
}

absl::Status Trainer::Rebalance(const BatchSource::Epoch& e, int64_t b) {
  if (balancer_ == nullptr) return absl::OkStatus();
  absl::StatusOr<std::optional<BatchBalancer::Change>> change =
      balancer_->AfterMicroBatch(b);
  if (!change.ok()) return Broken(change.status());
  // A change past the epoch's end takes effect with the next epoch's
  // schedule, made from balancer_->counts().
  if (change->has_value() && (*change)->from_batch < e.loader->num_batches()) {
    split_->Set((*change)->from_batch, (*change)->counts);
  }
  return absl::OkStatus();
}

absl::Status Trainer::FinishStep(int64_t epoch, const BatchSource::Epoch& e,
                                 int64_t b) {
  const v1::JobSpec& spec = gen_.spec();
  // Decided before the step is applied, so the gradient norm the report
  // carries is measured on the step it reports.
  const bool report = schedule_->Due(step_->done() + 1, env_.clock->Now());
  absl::StatusOr<std::optional<double>> norm = step_->Apply(report);
  if (!norm.ok()) return norm.status();
  if (norm->has_value()) window_->SetGradNorm(**norm);
  window_->SetLearningRate(step_->learning_rate());
  const int64_t step = step_->done();
  const bool last = b + 1 >= e.loader->num_batches();
  const Boundary at =
      last ? Boundary{{epoch + 1, step}, 0}
           : Boundary{{epoch, step}, source_->ConsumedAfter(e, b)};
  MarkBoundary(at);
  if (joined_at_ != absl::InfinitePast()) NoteFirstStep();
  env_.link->SetStep(step);
  if (absl::Status s = RecordStep(epoch, report); !s.ok()) return s;
  // Mid-epoch checkpoints only at full global batches, where the consumed
  // samples are exactly a prefix of the epoch's permutation (the epoch's
  // end saves its own).
  const bool full = (b + 1) * spec.batch_size() <= e.loader->num_samples();
  if (!checkpointer_->enabled() || spec.checkpoint_every_steps() <= 0 ||
      step % spec.checkpoint_every_steps() != 0 || !full || last) {
    return absl::OkStatus();
  }
  TimelineSpan span(timeline_.get(), "checkpoint", Phase::kCheckpoint);
  return checkpointer_->Save(at.position, at.epoch_sample_offset);
}

absl::Status Trainer::RecordStep(int64_t epoch, bool report) {
  const absl::Time now = env_.clock->Now();
  if (env_.metrics != nullptr) {
    env_.metrics->step_seconds->Observe(
        absl::ToDoubleSeconds(now - step_started_));
    env_.metrics->steps->Increment();
    env_.metrics->step->Set(static_cast<double>(step_->done()));
  }
  step_started_ = now;
  window_->AddStep();
  if (!report) return absl::OkStatus();
  absl::StatusOr<double> loss_sum = losses_->TakeWindowSum();
  if (!loss_sum.ok()) return loss_sum.status();
  window_->AddLossSum(*loss_sum);
  window_->SetSkippedSamples(env_.data->train->skipped_samples() +
                             env_.data->test->skipped_samples());
  v1::ReportProgressRequest p = window_->Take(epoch, step_->done(), now);
  if (env_.metrics != nullptr) {
    env_.metrics->samples_per_second->Set(p.samples_per_sec());
  }
  reporter_->Submit(std::move(p));
  return absl::OkStatus();
}

void Trainer::MarkBoundary(const Boundary& at) {
  if (!boundary_.has_value()) return;
  boundary_->position = at.position;
  boundary_->epoch_sample_offset = at.epoch_sample_offset;
  // Rank 0's buffers on every rank: the step's end broadcast them
  // (TrainStep), so any rank's copy is the job's.
  boundary_buffers_->Take();
}

void Trainer::NoteFirstStep() {
  const absl::Duration took = env_.clock->Now() - joined_at_;
  joined_at_ = absl::InfinitePast();
  window_->SetJoinToFirstStep(took);
  LOG(INFO) << "rank " << gen_.rank() << " joined job " << job_id_
            << ": first step (" << step_->done() << ") "
            << absl::FormatDuration(took)
            << " after its first heartbeat or the job's assignment";
}

void Trainer::Keep() {
  if (env_.kept == nullptr || !boundary_.has_value()) return;
  if (env_.comm->InterruptedAfterUse()) {
    // A GPU does not wait for a step's all-reduces before applying it: one
    // that never completed left the applied step wrong.
    LOG(WARNING) << "rank " << gen_.rank()
                 << " keeps no state: an all-reduce the GPU had already "
                    "used did not complete, so the last step applied "
                    "partial sums (recovery from a peer or a checkpoint)";
    return;
  }
  // Parameters and optimizer state are as the last completed step left
  // them (a step is applied only after its all-reduces completed, or was
  // ordered after them on the GPU and checked above); the buffers go back
  // to that step's end.
  RestoreBoundaryBuffers();
  absl::StatusOr<std::string> payload = SerializeCheckpoint(
      *replica_.model, *replica_.optimizer, boundary_->position);
  if (!payload.ok()) {
    LOG(WARNING) << "rank " << gen_.rank()
                 << " cannot keep its state: " << payload.status();
    return;
  }
  boundary_->payload = *std::move(payload);
  *env_.kept = *std::move(boundary_);
  boundary_.reset();
  LOG(INFO) << "rank " << gen_.rank() << " keeps its state at epoch "
            << env_.kept->position.epoch << " step " << env_.kept->position.step
            << " offset " << env_.kept->epoch_sample_offset << " ("
            << env_.kept->payload.size() << " bytes)";
}

void Trainer::RestoreBoundaryBuffers() {
  if (boundary_buffers_ != nullptr) boundary_buffers_->Restore();
}

}  // namespace ringleader
