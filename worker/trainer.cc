#include "worker/trainer.h"

#include <torch/torch.h>

#include <optional>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/distributed_sampler.h"
#include "glog/logging.h"
#include "worker/checkpoint.h"
#include "worker/comm/metered_communicator.h"
#include "worker/data/batch_loader.h"
#include "worker/ddp/reducer.h"
#include "worker/model/models.h"
#include "worker/model/optimizer.h"
#include "worker/progress_reporter.h"
#include "worker/progress_schedule.h"
#include "worker/resume.h"
#include "worker/timeline.h"

namespace ringleader {
namespace {

absl::Status Aborted(const std::string& job_id, int64_t generation) {
  return absl::AbortedError(
      absl::StrCat("generation ", generation, " of job ", job_id, " ended"));
}

// A failed collective means the generation is broken (a peer died or was
// aborted), whatever the transport said: the caller rejoins, and the
// coordinator decides whether the job goes on.
absl::Status CollectiveFailed(const absl::Status& s) {
  return absl::AbortedError(absl::StrCat("collective failed: ", s.message()));
}

}  // namespace

Trainer::Trainer(TrainerEnv env, std::string job_id,
                 v1::JoinRendezvousResponse generation)
    : env_(env), job_id_(std::move(job_id)), gen_(std::move(generation)) {}

absl::Status Trainer::Run() {
  const v1::JobSpec& spec = gen_.spec();
  const int32_t rank = gen_.rank();
  const int32_t world = gen_.world_size();
  const int64_t generation = gen_.generation();
  torch::Device device(env_.device);

  // The same seed on every rank; rank 0's weights are broadcast anyway.
  torch::manual_seed(spec.seed());
  absl::StatusOr<std::shared_ptr<Model>> model =
      BuildModel(spec.model(), spec.seed());
  if (!model.ok()) return model.status();
  if (absl::Status s = (*model)->To(device); !s.ok()) return s;
  absl::StatusOr<std::unique_ptr<torch::optim::Optimizer>> optimizer =
      BuildOptimizer(spec.optimizer(), (*model)->Parameters());
  if (!optimizer.ok()) return optimizer.status();

  // Resume: the first readable of the offered checkpoints (newest first),
  // the same one on every rank, checked by an all-reduce of one-hot votes
  // (on the model's device: the communicator may be NCCL).
  CheckpointPosition pos;
  int64_t resumed_id = 0;
  std::vector<v1::CheckpointRecord> candidates(gen_.resume_candidates().begin(),
                                               gen_.resume_candidates().end());
  if (candidates.empty() && gen_.resume_from().checkpoint_id() != 0) {
    candidates.push_back(gen_.resume_from());  // A coordinator without them.
  }
  if (!candidates.empty()) {
    absl::StatusOr<ResumeChoice> choice = ChooseCheckpoint(
        candidates, [&](const v1::CheckpointRecord& c) -> absl::Status {
          absl::StatusOr<CheckpointPosition> loaded =
              LoadCheckpoint(c.path(), **model, optimizer->get());
          if (!loaded.ok()) return loaded.status();
          pos = *loaded;
          return absl::OkStatus();
        });
    if (!choice.ok()) return choice.status();
    for (const std::string& why : choice->skipped) {
      LOG(WARNING) << "rank " << rank << " skips unreadable checkpoint " << why;
    }
    std::vector<int64_t> vote = ResumeVote(choice->index, candidates.size());
    torch::Tensor votes =
        torch::tensor(vote, torch::dtype(torch::kInt64)).to(device);
    if (absl::Status s = env_.comm->AllReduceSum(
            votes.data_ptr(), static_cast<size_t>(votes.numel()),
            DataType::kInt64);
        !s.ok()) {
      return *env_.aborted ? Aborted(job_id_, generation) : CollectiveFailed(s);
    }
    votes = votes.cpu();
    absl::StatusOr<int> agreed = AgreedCheckpoint(
        std::vector<int64_t>(votes.data_ptr<int64_t>(),
                             votes.data_ptr<int64_t>() + votes.numel()),
        world, candidates, *choice);
    if (!agreed.ok()) {
      // Retrying cannot help: every rank fails the job with the same reason.
      v1::ReportProgressRequest f;
      f.set_job_id(job_id_);
      f.set_generation(generation);
      f.set_rank(rank);
      f.set_fatal_error(std::string(agreed.status().message()).substr(0, 4096));
      env_.client->ReportProgress(f).IgnoreError();  // The job may be gone.
      return agreed.status();
    }
    const v1::CheckpointRecord& from = candidates[*agreed];
    resumed_id = from.checkpoint_id();
    LOG(INFO) << "rank " << rank << " resumes from checkpoint " << resumed_id
              << " (" << from.path() << ") at epoch " << pos.epoch << " step "
              << pos.step << " offset " << from.epoch_sample_offset()
              << (*agreed > 0 ? absl::StrCat(", skipping ", *agreed,
                                             " unreadable newer one(s)")
                              : "");
  }

  // Rank 0 saves, commits, then prunes files older than the last
  // kKeepCheckpoints commits (only after this commit succeeded).
  auto checkpoint = [&](int64_t epoch, int64_t at_step,
                        int64_t offset) -> absl::Status {
    const std::string path =
        CheckpointPath(spec.checkpoint_dir(), spec.name(), at_step);
    if (absl::Status s =
            SaveCheckpoint(path, **model, **optimizer, {epoch, at_step});
        !s.ok()) {
      return s;
    }
    v1::CommitCheckpointRequest c;
    c.set_job_id(job_id_);
    c.set_generation(generation);
    c.set_rank(0);
    c.set_epoch(epoch);
    c.set_step(at_step);
    c.set_epoch_sample_offset(offset);
    c.set_path(path);
    absl::StatusOr<v1::CommitCheckpointResponse> committed =
        env_.client->CommitCheckpoint(c);
    if (!committed.ok()) return committed.status();
    if (absl::Status s = PruneCheckpointFiles(
            spec.checkpoint_dir(), spec.name(), at_step, kKeepCheckpoints);
        !s.ok()) {
      LOG(WARNING) << "checkpoint pruning: " << s.message();
    }
    if (committed->generation_ended()) {
      // A scale-up: stop here, where nothing is lost; the peers fail their
      // next collective when this rank's communicator goes away.
      return absl::AbortedError(absl::StrCat(
          "generation ", generation, " of job ", job_id_,
          " ended at checkpoint step ", at_step, " for a scale-up"));
    }
    return absl::OkStatus();
  };

  // The per-rank timeline (JobSpec.timeline_dir), written however Run ends;
  // declared before the reducer so that every bucket's all-reduce has
  // completed (the reducer waits for them) when it is written.
  Timeline timeline(spec.timeline_dir().empty()
                        ? std::string()
                        : Timeline::PathFor(spec.timeline_dir(), job_id_, rank),
                    rank, spec.timeline_steps());
  timeline.SetMetadata("job_id", job_id_);
  timeline.SetMetadata("generation", absl::StrCat(generation));
  struct FlushTimeline {
    const Timeline& t;
    bool done = false;
    void Now() {
      if (done) return;
      done = true;
      if (absl::Status s = t.Flush(); !s.ok()) LOG(WARNING) << s.message();
    }
    ~FlushTimeline() { Now(); }
  } flush_timeline{timeline};

  Reducer::Options ropts;
  ropts.timeline = &timeline;
  if (spec.ddp().bucket_cap_bytes() > 0) {
    ropts.bucket_cap_bytes = spec.ddp().bucket_cap_bytes();
  }
  if (spec.ddp().first_bucket_bytes() > 0) {
    ropts.first_bucket_bytes = spec.ddp().first_bucket_bytes();
  }
  ropts.overlap = !spec.ddp().allreduce_after_backward();
  // The reducer's bucket all-reduces are metered (declared first: it
  // outlives the reducer).
  std::optional<MeteredCommunicator> metered;
  Communicator* reducer_comm = env_.comm;
  if (env_.metrics != nullptr) {
    metered.emplace(env_.comm, env_.metrics->allreduce_bytes,
                    env_.metrics->allreduce_seconds);
    reducer_comm = &*metered;
    env_.metrics->rank->Set(rank);
    env_.metrics->world_size->Set(world);
  }
  absl::StatusOr<std::unique_ptr<Reducer>> reducer =
      Reducer::Create(reducer_comm, (*model)->Parameters(), ropts);
  if (!reducer.ok()) return reducer.status();
  std::vector<at::Tensor> buffers;
  for (const NamedTensor& b : (*model)->NamedBuffers()) {
    buffers.push_back(b.tensor);
  }
  if (absl::Status s = (*reducer)->BroadcastParameters(buffers); !s.ok()) {
    return *env_.aborted ? Aborted(job_id_, generation) : CollectiveFailed(s);
  }
  (*reducer)->ZeroGrad();

  ProgressReporter reporter([this](const v1::ReportProgressRequest& r) {
    return env_.client->ReportProgress(r);
  });
  // Reporting waits out progress_min_interval_ms (0 in a spec that skipped
  // WithDefaults: by steps alone).
  ProgressSchedule progress(spec.progress_every_steps(),
                            absl::Milliseconds(spec.progress_min_interval_ms()),
                            absl::Now());
  const int accumulate = std::max(1, spec.gradient_accumulation_steps());
  const int64_t train_size = env_.data->train->size();
  const int64_t steps_per_epoch =
      (StepsPerEpoch(train_size, world, spec.batch_size(),
                     spec.dataset().drop_last()) +
       accumulate - 1) /
      accumulate;
  const int64_t total_steps = steps_per_epoch * spec.epochs();

  // Evaluation on this rank's part of the test split, padding excluded, so
  // the coordinator's pooled accuracy counts every test sample exactly once.
  struct EvalResult {
    int64_t correct = 0;
    int64_t samples = 0;
  };
  auto evaluate = [&]() -> absl::StatusOr<EvalResult> {
    EvalResult out;
    if (env_.data->test->size() == 0) return out;
    v1::GetShardRequest tr;
    tr.set_job_id(job_id_);
    tr.set_generation(generation);
    tr.set_rank(rank);
    tr.set_epoch(0);
    tr.set_test_split(true);
    tr.set_dataset_size(env_.data->test->size());
    absl::StatusOr<v1::ShardAssignment> test_shard = env_.client->GetShard(tr);
    if (!test_shard.ok()) return test_shard.status();
    std::vector<int64_t> test_indices = ShardIndices(*test_shard);
    test_indices.resize(UnpaddedShardSize(*test_shard));
    auto loader = BatchLoader::Create(*env_.data->test, std::move(test_indices),
                                      std::max(256, spec.batch_size()));
    if (!loader.ok()) return loader.status();
    (*model)->Train(false);
    torch::NoGradGuard no_grad;
    while (std::optional<Batch> batch = (*loader)->Next()) {
      absl::StatusOr<at::Tensor> out_logits =
          (*model)->Forward(batch->inputs[0].to(device));
      if (!out_logits.ok()) return out_logits.status();
      torch::Tensor pred = out_logits->argmax(1).cpu();
      out.correct += pred.eq(batch->targets).sum().item<int64_t>();
      out.samples += batch->targets.size(0);
    }
    if (!(*loader)->status().ok()) return (*loader)->status();
    return out;
  };
  // The latest per-epoch evaluation, carried on every later report.
  int64_t eval_epoch = 0;
  EvalResult last_eval;

  double last_epoch_loss = 0;
  int64_t step = pos.step;
  for (int64_t epoch = pos.epoch; epoch < spec.epochs(); ++epoch) {
    v1::GetShardRequest sr;
    sr.set_job_id(job_id_);
    sr.set_generation(generation);
    sr.set_rank(rank);
    sr.set_epoch(epoch);
    sr.set_dataset_size(train_size);
    sr.set_resume_checkpoint_id(resumed_id);
    absl::StatusOr<v1::ShardAssignment> shard = env_.client->GetShard(sr);
    if (!shard.ok()) return shard.status();
    absl::StatusOr<std::vector<int64_t>> indices = CheckedShardIndices(*shard);
    if (!indices.ok()) return indices.status();
    // With GLOG_v=1 every batch's sample ids are logged with the optimizer
    // step they go into: tests check from them that a resumed run sees each
    // sample of an epoch once.
    std::vector<int64_t> logged_ids;
    if (VLOG_IS_ON(1)) logged_ids = *indices;
    auto loader = BatchLoader::Create(*env_.data->train, *std::move(indices),
                                      spec.batch_size());
    if (!loader.ok()) return loader.status();
    (*model)->Train(true);

    double window_loss = 0, epoch_loss = 0;
    int64_t window_batches = 0, epoch_batches = 0, window_samples = 0;
    int64_t window_steps = 0;
    absl::Time window_start = absl::Now();
    absl::Time step_start = window_start;
    if (env_.metrics != nullptr) {
      env_.metrics->epoch->Set(static_cast<double>(epoch));
      env_.metrics->total_steps->Set(static_cast<double>(total_steps));
    }
    const int64_t num_batches = (*loader)->num_batches();
    for (int64_t b = 0; b < num_batches; ++b) {
      if (*env_.aborted) return Aborted(job_id_, generation);
      timeline.SetStep(step + 1);
      std::optional<Batch> batch;
      {
        TimelineSpan span(&timeline, "data_wait");
        batch = (*loader)->Next();
      }
      if (!batch.has_value()) return (*loader)->status();
      if (VLOG_IS_ON(1)) {
        const size_t from = static_cast<size_t>(b * spec.batch_size());
        const size_t to = std::min(
            logged_ids.size(), from + static_cast<size_t>(spec.batch_size()));
        VLOG(1) << "samples generation=" << generation << " rank=" << rank
                << " epoch=" << epoch << " step=" << step + 1 << " ids="
                << absl::StrJoin(logged_ids.begin() + from,
                                 logged_ids.begin() + to, ",");
      }
      const bool sync = (b + 1) % accumulate == 0 || b + 1 == num_batches;
      (*reducer)->PrepareForBackward(sync);
      torch::Tensor loss;
      try {
        {
          TimelineSpan span(&timeline, "forward");
          absl::StatusOr<at::Tensor> out =
              (*model)->Forward(batch->inputs[0].to(device));
          if (!out.ok()) return out.status();
          loss = torch::nn::functional::cross_entropy(*out,
                                                      batch->targets.to(device));
        }
        TimelineSpan span(&timeline, "backward");
        (loss / accumulate).backward();
      } catch (const c10::Error& e) {
        return absl::InternalError(
            absl::StrCat("training step failed: ", e.what_without_backtrace()));
      }
      {
        TimelineSpan span(sync ? &timeline : nullptr, "allreduce_wait");
        if (absl::Status s = (*reducer)->FinishBackward(); !s.ok()) {
          return *env_.aborted ? Aborted(job_id_, generation)
                               : CollectiveFailed(s);
        }
      }
      const double l = loss.item<double>();
      window_loss += l;
      epoch_loss += l;
      ++window_batches;
      ++epoch_batches;
      window_samples += batch->targets.size(0);
      if (!sync) continue;
      {
        TimelineSpan span(&timeline, "optimizer");
        (*optimizer)->step();
        (*reducer)->ZeroGrad();
      }
      ++step;
      if (env_.metrics != nullptr) {
        const absl::Time now = absl::Now();
        env_.metrics->step_seconds->Observe(
            absl::ToDoubleSeconds(now - step_start));
        step_start = now;
        env_.metrics->steps->Increment();
        env_.metrics->step->Set(static_cast<double>(step));
      }
      ++window_steps;
      if (const absl::Time now = absl::Now(); progress.Due(step, now)) {
        const double secs = absl::ToDoubleSeconds(now - window_start);
        v1::ReportProgressRequest p;
        p.set_job_id(job_id_);
        p.set_generation(generation);
        p.set_rank(rank);
        p.set_epoch(epoch);
        p.set_step(step);
        p.set_total_steps(total_steps);
        p.set_loss(window_loss / window_batches);
        p.set_samples_per_sec(secs > 0 ? window_samples / secs : 0);
        if (env_.metrics != nullptr) {
          env_.metrics->samples_per_second->Set(p.samples_per_sec());
        }
        p.set_step_time_ms(window_steps > 0 ? 1000 * secs / window_steps : 0);
        if (eval_epoch > 0) {
          p.set_eval_epoch(eval_epoch);
          p.set_eval_correct(last_eval.correct);
          p.set_eval_samples(last_eval.samples);
        }
        reporter.Submit(std::move(p));
        window_loss = 0;
        window_batches = 0;
        window_samples = 0;
        window_steps = 0;
        window_start = absl::Now();
      }
      // Rank 0 checkpoints mid-epoch only at full global batches, where the
      // consumed samples are exactly a prefix of the epoch's permutation.
      const bool full = (b + 1) * spec.batch_size() <=
                        static_cast<int64_t>((*loader)->num_samples());
      if (rank == 0 && !spec.checkpoint_dir().empty() &&
          spec.checkpoint_every_steps() > 0 &&
          step % spec.checkpoint_every_steps() == 0 && full &&
          b + 1 < num_batches) {
        const int64_t offset = std::min<int64_t>(
            shard->start_offset() + (b + 1) * spec.batch_size() * world,
            train_size);
        if (absl::Status s = checkpoint(epoch, step, offset); !s.ok()) {
          return s;
        }
      }
    }
    last_epoch_loss = epoch_batches > 0 ? epoch_loss / epoch_batches : 0;
    if (rank == 0 && !spec.checkpoint_dir().empty()) {
      if (absl::Status s = checkpoint(epoch + 1, step, 0); !s.ok()) return s;
    }
    if (spec.evaluate_every_epoch() && epoch + 1 < spec.epochs()) {
      absl::StatusOr<EvalResult> r = evaluate();
      if (!r.ok()) return r.status();
      last_eval = *r;
      eval_epoch = epoch + 1;
      v1::ReportProgressRequest p;
      p.set_job_id(job_id_);
      p.set_generation(generation);
      p.set_rank(rank);
      p.set_epoch(epoch + 1);
      p.set_step(step);
      p.set_total_steps(total_steps);
      p.set_loss(last_epoch_loss);
      p.set_eval_epoch(eval_epoch);
      p.set_eval_correct(last_eval.correct);
      p.set_eval_samples(last_eval.samples);
      reporter.Submit(std::move(p));
    }
  }
  reporter.Flush().IgnoreError();  // Progress is advisory.

  absl::StatusOr<EvalResult> result = evaluate();
  if (!result.ok()) return result.status();
  const int64_t correct = result->correct, seen = result->samples;
  v1::ReportProgressRequest final;
  final.set_job_id(job_id_);
  final.set_generation(generation);
  final.set_rank(rank);
  final.set_epoch(spec.epochs() - 1);
  final.set_step(step);
  final.set_total_steps(total_steps);
  final.set_loss(last_epoch_loss);
  final.set_finished(true);
  final.set_final_train_loss(last_epoch_loss);
  final.set_test_correct(correct);
  final.set_test_samples(seen);
  LOG(INFO) << "rank " << rank << " done: train loss " << last_epoch_loss
            << ", test " << correct << "/" << seen;
  // Written before the final report, so the file is there once the job is.
  flush_timeline.Now();
  return env_.client->ReportProgress(final);
}

}  // namespace ringleader
