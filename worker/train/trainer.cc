#include "worker/train/trainer.h"

#include <torch/torch.h>

#include <cmath>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/logging.h"
#include "worker/comm/metered_communicator.h"
#include "worker/data/batch_loader.h"
#include "worker/data/sample_stream.h"
#include "worker/ddp/buffer_sync.h"
#include "worker/ddp/reducer.h"
#include "worker/export/class_names_export.h"
#include "worker/export/model_export.h"
#include "worker/model/models.h"
#include "worker/model/optimizer.h"
#include "worker/train/batch_source.h"
#include "worker/train/checkpointer.h"
#include "worker/train/dataset_agreement.h"
#include "worker/train/evaluator.h"
#include "worker/train/job_error.h"
#include "worker/train/lr_schedule.h"
#include "worker/train/model_probe.h"
#include "worker/train/peer_recovery.h"
#include "worker/train/precision.h"
#include "worker/train/progress_reporter.h"
#include "worker/train/progress_schedule.h"
#include "worker/train/progress_window.h"
#include "worker/train/reducer_options.h"
#include "worker/train/state_digest.h"
#include "worker/train/step_plan.h"
#include "worker/train/task.h"
#include "worker/train/timeline.h"
#include "worker/train/token_vocabulary.h"
#include "worker/train/train_step.h"

namespace ringleader {

Trainer::Trainer(TrainerEnv env, std::string job_id,
                 v1::JoinRendezvousResponse generation)
    : env_(env),
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

void Trainer::FlushTimeline() {
  if (timeline_ == nullptr || timeline_flushed_) return;
  timeline_flushed_ = true;
  if (absl::Status s = timeline_->Flush(); !s.ok()) LOG(WARNING) << s.message();
}

absl::Status Trainer::Run() {
  absl::Status s = Train();
  // Every bucket's all-reduce has completed once the reducer is gone, so
  // the timeline records them all, however training ended.
  reducer_.reset();
  FlushTimeline();
  if (absl::IsAborted(s)) Keep();
  if (IsJobError(s)) {
    LOG(ERROR) << "job " << job_id_ << " cannot go on: " << s.message();
    ReportJobError(*env_.client, job_id_, gen_.generation(), gen_.rank(), s);
  }
  return s;
}

absl::Status Trainer::BuildModelAndTask() {
  const v1::JobSpec& spec = gen_.spec();
  task_ = std::make_unique<Task>(spec.task());
  absl::StatusOr<ModelShape> shape = ModelShapeFor(spec, *env_.data->train);
  if (!shape.ok()) return JobError(shape.status());
  // The same seed on every rank; rank 0's weights are broadcast anyway.
  torch::manual_seed(spec.seed());
  absl::StatusOr<std::shared_ptr<Model>> model =
      BuildModel(spec.model(), spec.seed(), *shape);
  if (!model.ok()) return JobError(model.status(), "building the model");
  model_ = *std::move(model);
  if (absl::Status s = model_->To(device_); !s.ok()) return s;
  if (absl::Status s = ApplyPrecision(spec, device_, *model_); !s.ok()) {
    return JobError(s);
  }
  // Before the probe reads the first windows: an id past the vocabulary
  // fails naming its position, not in the embedding's traceback.
  LimitTokenVocabulary(spec, *model_, *task_, *env_.data->train,
                       *env_.data->test, device_);
  if (absl::Status s = ProbeModel(*model_, *task_, *env_.data->train, device_);
      !s.ok()) {
    return JobError(s);
  }
  absl::StatusOr<std::unique_ptr<torch::optim::Optimizer>> optimizer =
      BuildOptimizer(spec.optimizer(), model_->Parameters());
  if (!optimizer.ok()) return JobError(optimizer.status());
  optimizer_ = *std::move(optimizer);
  return absl::OkStatus();
}

absl::Status Trainer::SetUpReplicas() {
  const v1::JobSpec& spec = gen_.spec();
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
  resumed_epoch_ = resumed->position.epoch;
  step_ = resumed->position.step;
  resumed_checkpoint_id_ = resumed->checkpoint_id;
  const bool fresh = resumed->position.step == 0 &&
                     resumed->position.epoch == 0 &&
                     resumed->epoch_sample_offset == 0;
  if (!fresh) {
    shard_resume_ = {resumed->position.epoch, resumed->epoch_sample_offset};
    // As loaded, before rank 0's parameters are broadcast: the ranks agree
    // by the recovery itself, not by the broadcast.
    LogStateDigest("resumed");
  }
  // The same on every rank: they resumed from the same checkpoint.
  planned_steps_ = PlannedOptimizerSteps(
      spec, env_.data->train->size(), gen_.world_size(),
      {resumed_epoch_, step_, resumed->epoch_sample_offset});
  LOG(INFO) << "rank " << gen_.rank() << " plans " << planned_steps_
            << " optimizer steps at world size " << gen_.world_size()
            << "; learning-rate decay horizon "
            << DecayHorizon(spec.lr_schedule(), planned_steps_);

  timeline_ = std::make_unique<Timeline>(
      spec.timeline_dir().empty()
          ? std::string()
          : Timeline::PathFor(spec.timeline_dir(), job_id_, gen_.rank()),
      gen_.rank(), spec.timeline_steps());
  timeline_->SetMetadata("job_id", job_id_);
  timeline_->SetMetadata("generation", absl::StrCat(gen_.generation()));
  Reducer::Options ropts = ReducerOptionsFor(spec.ddp());
  ropts.timeline = timeline_.get();
  Communicator* reducer_comm = env_.comm;
  if (env_.metrics != nullptr) {
    metered_ = std::make_unique<MeteredCommunicator>(
        env_.comm, env_.metrics->allreduce_bytes,
        env_.metrics->allreduce_seconds);
    reducer_comm = metered_.get();
    env_.metrics->rank->Set(gen_.rank());
    env_.metrics->world_size->Set(gen_.world_size());
  }
  absl::StatusOr<std::unique_ptr<Reducer>> reducer =
      Reducer::Create(reducer_comm, model_->Parameters(), ropts);
  if (!reducer.ok()) return reducer.status();
  reducer_ = *std::move(reducer);
  std::vector<at::Tensor> buffers;
  for (const NamedTensor& b : model_->NamedBuffers())
    buffers.push_back(b.tensor);
  if (absl::Status s = reducer_->BroadcastParameters(buffers); !s.ok()) {
    return Broken(CollectiveFailed(s));
  }
  reducer_->ZeroGrad();
  for (const at::Tensor& b : buffers) boundary_buffers_.push_back(b.clone());
  absl::StatusOr<std::unique_ptr<BufferSync>> sync =
      BufferSync::Create(env_.comm, std::move(buffers));
  if (!sync.ok()) return sync.status();
  buffers_ = *std::move(sync);
  // The replicas agree from here: a generation that ends now keeps this.
  boundary_.emplace();
  boundary_->job_id = job_id_;
  boundary_->position = resumed->position;
  boundary_->epoch_sample_offset = resumed->epoch_sample_offset;
  return absl::OkStatus();
}

void Trainer::LogStateDigest(const char* when) const {
  LOG(INFO) << "rank " << gen_.rank() << " state digest at step " << step_
            << " (" << when << "): " << StateDigest(*model_, *optimizer_);
}

absl::StatusOr<ResumePoint> Trainer::Resume() {
  const int64_t newest_offered =
      gen_.resume_candidates_size() > 0 ? gen_.resume_candidates(0).step() : -1;
  static const KeptState kNothingKept;
  absl::StatusOr<std::optional<ResumePoint>> peers = RecoverFromPeers(
      job_id_, env_.kept != nullptr ? *env_.kept : kNothingKept, newest_offered,
      *model_, *optimizer_, *env_.comm, device_, env_.before_state_broadcast);
  if (!peers.ok()) return peers.status();
  if (peers->has_value()) return **peers;
  return ResumeFromOffered(gen_, *model_, *optimizer_, *env_.comm, device_);
}

int64_t Trainer::SampleOffsetAfter(int64_t b, int64_t start_offset) const {
  return std::min<int64_t>(
      start_offset + (b + 1) * gen_.spec().batch_size() * gen_.world_size(),
      env_.data->train->size());
}

void Trainer::MarkStepBoundary(int64_t epoch, int64_t b, int64_t num_batches,
                               int64_t start_offset) {
  if (!boundary_.has_value()) return;
  if (b + 1 >= num_batches) {
    boundary_->position = {epoch + 1, step_};
    boundary_->epoch_sample_offset = 0;
  } else {
    boundary_->position = {epoch, step_};
    boundary_->epoch_sample_offset = SampleOffsetAfter(b, start_offset);
  }
  // Rank 0's buffers on every rank: the step's end broadcast them
  // (TrainStep), so any rank's copy is the job's.
  const std::vector<NamedTensor> buffers = model_->NamedBuffers();
  for (size_t i = 0; i < buffers.size() && i < boundary_buffers_.size(); ++i) {
    boundary_buffers_[i].copy_(buffers[i].tensor);
  }
}

void Trainer::NoteFirstStep() {
  const absl::Duration took = absl::Now() - joined_at_;
  joined_at_ = absl::InfinitePast();
  window_->SetJoinToFirstStep(took);
  LOG(INFO) << "rank " << gen_.rank() << " joined job " << job_id_
            << ": first step (" << step_ << ") " << absl::FormatDuration(took)
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
  torch::NoGradGuard no_grad;
  const std::vector<NamedTensor> buffers = model_->NamedBuffers();
  for (size_t i = 0; i < buffers.size() && i < boundary_buffers_.size(); ++i) {
    buffers[i].tensor.copy_(boundary_buffers_[i]);
  }
  absl::StatusOr<std::string> payload =
      SerializeCheckpoint(*model_, *optimizer_, boundary_->position);
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

absl::Status Trainer::Train() {
  const v1::JobSpec& spec = gen_.spec();
  if (absl::Status s = BuildModelAndTask(); !s.ok()) return s;
  if (absl::Status s = SetUpReplicas(); !s.ok()) return s;
  source_ = std::make_unique<BatchSource>(env_.data, gen_, shard_resume_,
                                          /*pin_memory=*/device_.is_cuda());
  StepParts parts;
  parts.model = model_.get();
  parts.task = task_.get();
  parts.reducer = reducer_.get();
  parts.buffers = buffers_.get();
  parts.optimizer = optimizer_.get();
  parts.timeline = timeline_.get();
  parts.device = device_;
  parts.data = env_.data->train.get();
  parts.clip_grad_norm = spec.clip_grad_norm();
  step_runner_ =
      std::make_unique<TrainStep>(parts, spec.gradient_accumulation_steps());
  // Commits and reports are queued and sent from threads of their own, and
  // retried through a coordinator outage: training does not wait for them.
  CoordinatorClient* client = env_.client;
  checkpointer_ = std::make_unique<Checkpointer>(
      [client](const v1::CommitCheckpointRequest& c,
               const std::atomic<bool>* cancel) {
        return client->CommitCheckpoint(c, cancel);
      },
      job_id_, gen_, model_.get(), optimizer_.get(), resumed_checkpoint_id_,
      env_.data->train->size());
  reporter_ = std::make_unique<ProgressReporter>(
      [client](const v1::ReportProgressRequest& r,
               const std::atomic<bool>* cancel) {
        return client->ReportProgress(r, cancel);
      });
  // Reporting waits out progress_min_interval_ms (0 in a spec that skipped
  // WithDefaults: by steps alone).
  const absl::Time now = absl::Now();
  schedule_ = std::make_unique<ProgressSchedule>(
      spec.progress_every_steps(),
      absl::Milliseconds(spec.progress_min_interval_ms()), now);
  losses_ = std::make_unique<LossTracker>(/*on_device=*/device_.is_cuda());
  window_ = std::make_unique<ProgressWindow>(job_id_, gen_.generation(),
                                             gen_.rank(), planned_steps_,
                                             env_.data->train->size(), now);
  if (gen_.rank() == 0) window_->SetClassNames(env_.data->class_names);
  for (int64_t epoch = resumed_epoch_; epoch < spec.epochs(); ++epoch) {
    if (absl::Status s = RunEpoch(epoch); !s.ok()) return s;
  }
  return Finish();
}

absl::Status Trainer::RunEpoch(int64_t epoch) {
  absl::StatusOr<BatchSource::Epoch> e = source_->Train(epoch);
  if (!e.ok()) return e.status();
  if (env_.metrics != nullptr) {
    env_.metrics->epoch->Set(static_cast<double>(epoch));
    env_.metrics->total_steps->Set(static_cast<double>(planned_steps_));
  }
  const int accumulate = std::max(1, gen_.spec().gradient_accumulation_steps());
  const int64_t num_batches = e->loader->num_batches();
  step_start_ = absl::Now();
  for (int64_t b = 0; b < num_batches; ++b) {
    if (*env_.aborted) return Aborted();
    // A commit answered late that ended the generation (or was refused)
    // stops training here, as one answered at once stops it at Save.
    if (absl::Status s = checkpointer_->Verdict(); !s.ok()) return s;
    timeline_->SetStep(step_ + 1);
    std::optional<Batch> batch;
    {
      TimelineSpan span(timeline_.get(), "data_wait");
      batch = e->loader->Next();
    }
    if (!batch.has_value()) {
      return JobError(
          e->loader->status(),
          absl::StrCat("reading the ", source_->train_data().Describe()));
    }
    const bool sync = (b + 1) % accumulate == 0 || b + 1 == num_batches;
    // The batch's first sample's position in the epoch's permutation (ranks
    // are strided): where its dropout stream starts.
    const int64_t position = e->shard.start_offset() +
                             b * gen_.spec().batch_size() * gen_.world_size() +
                             gen_.rank();
    if (absl::Status s = RunBatch(epoch, *batch, sync, position); !s.ok()) {
      return s;
    }
    if (!sync) continue;
    // Decided before the step, so the gradient norm the report carries is
    // measured on the step it reports.
    const bool report = schedule_->Due(step_ + 1, absl::Now());
    if (absl::Status s = OptimizerStep(epoch, report); !s.ok()) return s;
    ++step_;
    MarkStepBoundary(epoch, b, num_batches, e->shard.start_offset());
    if (joined_at_ != absl::InfinitePast()) NoteFirstStep();
    env_.client->SetStep(step_);
    if (absl::Status s =
            AfterStep(epoch, b, num_batches, e->loader->num_samples(),
                      e->shard.start_offset(), report);
        !s.ok()) {
      return s;
    }
  }
  return EndEpoch(epoch);
}

absl::Status Trainer::RunBatch(int64_t epoch, const Batch& batch, bool sync,
                               int64_t position) {
  // With GLOG_v=1 every batch's sample ids are logged with the optimizer
  // step they go into: tests check from them that a resumed run sees each
  // sample of an epoch once.
  VLOG(1) << "samples generation=" << gen_.generation()
          << " rank=" << gen_.rank() << " epoch=" << epoch
          << " step=" << step_ + 1
          << " ids=" << absl::StrJoin(batch.sample_ids, ",");
  absl::StatusOr<at::Tensor> loss = step_runner_->Micro(
      batch, sync, SampleStreamSeed(gen_.spec().seed(), epoch, position));
  if (!loss.ok()) {
    return IsJobError(loss.status()) ? loss.status() : Broken(loss.status());
  }
  window_->AddBatch(batch.size());
  return losses_->Add(*loss, step_ + 1, epoch, batch.sample_ids.front());
}

absl::Status Trainer::OptimizerStep(int64_t epoch, bool report) {
  const v1::JobSpec& spec = gen_.spec();
  // Measured on every step when clipping, else only for a report: the norm
  // costs a pass over the gradients.
  const std::optional<double> norm = step_runner_->ClipGradients(report);
  if (norm.has_value()) {
    if (!std::isfinite(*norm)) {
      // Every rank holds the same averaged gradients, so every rank that
      // measured sees it; stepping would make every parameter NaN.
      return JobError(absl::InvalidArgumentError(absl::StrCat(
          "the gradient norm is ", *norm, " at step ", step_ + 1, " (epoch ",
          epoch,
          "; lower the learning rate, clip gradients or check the data)")));
    }
    window_->SetGradNorm(*norm);
  }
  step_runner_->Apply(LearningRateAt(spec.lr_schedule(),
                                     spec.optimizer().learning_rate(), step_,
                                     planned_steps_));
  return absl::OkStatus();
}

absl::Status Trainer::AfterStep(int64_t epoch, int64_t b, int64_t num_batches,
                                int64_t epoch_samples, int64_t start_offset,
                                bool report) {
  const v1::JobSpec& spec = gen_.spec();
  const absl::Time now = absl::Now();
  if (env_.metrics != nullptr) {
    env_.metrics->step_seconds->Observe(
        absl::ToDoubleSeconds(now - step_start_));
    env_.metrics->steps->Increment();
    env_.metrics->step->Set(static_cast<double>(step_));
  }
  step_start_ = now;
  window_->AddStep();
  if (report) {
    absl::StatusOr<double> loss_sum = losses_->TakeWindowSum();
    if (!loss_sum.ok()) return loss_sum.status();
    window_->AddLossSum(*loss_sum);
    window_->SetSkippedSamples(env_.data->train->skipped_samples() +
                               env_.data->test->skipped_samples());
    v1::ReportProgressRequest p = window_->Take(epoch, step_, now);
    if (env_.metrics != nullptr) {
      env_.metrics->samples_per_second->Set(p.samples_per_sec());
    }
    reporter_->Submit(std::move(p));
  }
  // Mid-epoch checkpoints only at full global batches, where the consumed
  // samples are exactly a prefix of the epoch's permutation.
  const bool full = (b + 1) * spec.batch_size() <= epoch_samples;
  if (!checkpointer_->enabled() || spec.checkpoint_every_steps() <= 0 ||
      step_ % spec.checkpoint_every_steps() != 0 || !full ||
      b + 1 >= num_batches) {
    return absl::OkStatus();
  }
  return checkpointer_->Save({epoch, step_},
                             SampleOffsetAfter(b, start_offset));
}

absl::StatusOr<MetricSums> Trainer::EvaluateTestSplit() {
  // Rank 0's buffers first, as DDP's wrapper broadcasts them before the
  // first forward after training, evaluation's included: every rank then
  // evaluates the model rank 0 checkpoints and exports, and the pooled
  // metrics are one model's on the whole split. Without it, each rank
  // evaluated with its own BatchNorm running statistics, which its last
  // training forward updated with its own batch.
  if (absl::Status s = buffers_->Sync(); !s.ok()) {
    return Broken(CollectiveFailed(s));
  }
  absl::StatusOr<std::unique_ptr<BatchLoader>> test =
      source_->Test(std::max<int64_t>(256, gen_.spec().batch_size()));
  if (!test.ok()) return test.status();
  return Evaluate(*model_, *task_, test->get(), source_->test_data(), device_);
}

absl::Status Trainer::EndEpoch(int64_t epoch) {
  const v1::JobSpec& spec = gen_.spec();
  absl::StatusOr<double> epoch_loss = losses_->TakeEpochMean();
  if (!epoch_loss.ok()) return epoch_loss.status();
  last_epoch_loss_ = *epoch_loss;
  if (checkpointer_->enabled()) {
    if (absl::Status s = checkpointer_->Save({epoch + 1, step_}, 0); !s.ok()) {
      return s;
    }
  }
  if (!spec.evaluate_every_epoch() || epoch + 1 >= spec.epochs()) {
    return absl::OkStatus();
  }
  absl::StatusOr<MetricSums> sums = EvaluateTestSplit();
  if (!sums.ok()) return sums.status();
  reporter_->Submit(
      window_->Evaluated(epoch + 1, step_, last_epoch_loss_, *sums));
  return absl::OkStatus();
}

absl::Status Trainer::Finish() {
  const v1::JobSpec& spec = gen_.spec();
  // Waits no longer than the client keeps retrying a call.
  const absl::Duration bound = env_.client->options().unreachable_timeout;
  absl::StatusOr<MetricSums> sums = EvaluateTestSplit();
  if (!sums.ok()) return sums.status();
  // After the evaluation synced rank 0's buffers: every rank's whole state.
  LogStateDigest("end");
  // Commits still queued (the coordinator was away) go before the final
  // report: once the job is SUCCEEDED its checkpoint history is complete.
  if (absl::Status s = checkpointer_->Drain(bound); !s.ok()) return s;
  if (gen_.rank() == 0) {
    // Before the final report: once the job is SUCCEEDED the files are there.
    if (absl::Status s = ExportModel(*model_, spec.export_()); !s.ok()) {
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
      window_->Final(spec.epochs() - 1, step_, last_epoch_loss_, *sums), bound);
}

}  // namespace ringleader
