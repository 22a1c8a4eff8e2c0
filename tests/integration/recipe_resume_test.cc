// Issue 16 (points 1-3, 6): a modern recipe, AdamW with its no-decay group,
// a cosine schedule with warmup and a floor, and gradient clipping, survives
// a worker's SIGKILL and a world-size change exactly, with real coordinator
// and worker processes: a job of 2..3 workers starts on three; one is killed
// after a committed checkpoint; the two survivors recover at world size 2
// from the newest step one of them completed, from their own memory, not
// from the checkpoint file (issue 19: AdamW's moments from the state a
// survivor kept, the schedule's position from its step, the decay horizon
// planned again for the rest of the job at 2) and finish. The final parameters
// equal those of one process that replays the same global batches with the same
// schedule: 3 ranks' batches up to the checkpoint, then 2 ranks'.
//
// Tolerance 1e-5, as the other exactness tests (ddp_parity_test,
// checkpoint_fallback_test): the DDP gradient is the mean of the ranks'
// means, all-reduced, and the reference's the mean over their union, so the
// sums differ in their last float32 bits every step; hundreds of steps
// compound that to about 1e-7..1e-6 (measured and printed below). What the
// test must catch is far larger: the same job replayed at 3 ranks
// throughout, or with the first generation's decay horizon kept, differs by
// 100x the tolerance or more (checked below too).
#include <signal.h>

#include <iostream>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/integration/cluster.h"
#include "tests/integration/reference_training.h"
#include "tests/integration/worker_logs.h"
#include "tests/testing/job_specs.h"

namespace ringleader::testing {
namespace {

constexpr int kTrain = 9600;  // 200 steps an epoch at 3 x 16, 300 at 2 x 16.
constexpr int kBatch = 16;
constexpr int kEvery = 20;
constexpr int kEpochs = 3;
// The replay adds the ranks' gradients in the order the shared-memory
// transport does, so the runs agree to the last bits, not to a tolerance
// for reordered float sums.
constexpr double kTolerance = 1e-7;

v1::JobSpec Spec(const std::string& dir) {
  v1::JobSpec s = CheckpointedMlpJobSpec("recipe", dir, kTrain, kBatch, kEvery);
  v1::OptimizerSpec* o = s.mutable_optimizer();
  o->set_kind(v1::OPTIMIZER_KIND_ADAMW);
  o->set_learning_rate(3e-3);
  o->set_beta1(0.9);
  o->set_beta2(0.95);
  o->set_eps(1e-8);
  o->set_weight_decay(0.1);
  o->set_no_decay_bias_and_norm(true);
  v1::LrSchedule* l = s.mutable_lr_schedule();
  l->set_kind(v1::LR_SCHEDULE_KIND_COSINE);
  l->set_warmup_steps(30);
  l->set_min_lr(1e-4);
  // Below the early steps' norms (about 1-3 here): clipping does act.
  s.set_clip_grad_norm(1.0);
  s.set_epochs(kEpochs);
  s.set_min_workers(2);
  s.set_max_workers(3);
  s.set_seed(2024);
  s.set_max_restarts(2);
  // The first generation waits for all three workers (it forms as soon as
  // the third joins): starting three processes on a loaded 2-core machine
  // can take over a second, and a first generation of two would make the
  // history other than the one the reference replays. The survivors' round
  // after the kill waits it out once.
  s.set_rendezvous_last_call_ms(4000);
  s.set_rendezvous_timeout_ms(60000);
  return s;
}

TEST(RecipeResumeTest, KilledWorkerResumesAtAnotherWorldSizeExactly) {
  auto cluster =
      Cluster::Start("recipe", {"--lease_ms=1000", "--heartbeat_ms=200"});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const v1::JobSpec spec = Spec(FreshDir("recipe-ckpt"));
  auto job = (*cluster)->Submit(spec);
  ASSERT_TRUE(job.ok()) << job.status();
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE((*cluster)->StartWorker({"--max_jobs=1"}).ok());
  }
  // A few commits into the first generation, at world size 3, then SIGKILL
  // one worker: mid-training, not while a generation sets up.
  auto running = (*cluster)->WaitUntil(
      *job,
      [](const v1::Job& j) {
        return j.state() == v1::JOB_STATE_RUNNING &&
               j.last_checkpoint().step() >= 2 * kEvery;
      },
      absl::Minutes(2));
  ASSERT_TRUE(running.ok()) << running.status();
  ASSERT_EQ(running->state(), v1::JOB_STATE_RUNNING) << running->message();
  ASSERT_EQ(running->generation(), 1);
  ASSERT_EQ(running->world_size(), 3) << "the third worker came too late";
  (*cluster)->workers()[1]->Kill(SIGKILL);
  auto done = (*cluster)->WaitForEnd(*job, absl::Minutes(3));
  ASSERT_TRUE(done.ok()) << done.status();
  const std::string log0 = ReadFileOrEmpty((*cluster)->dir() + "/worker0.log");
  ASSERT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED) << done->message() << "\n"
                                                    << log0.substr(0, 4000);
  EXPECT_GE(done->restarts(), 1);
  EXPECT_EQ(done->world_size(), 2);
  EXPECT_GT(done->progress().grad_norm(), 0);

  // Both survivors recovered from the same survivor's memory, once, at a
  // step past the last checkpoint (the kill lands between checkpoints).
  const std::string log2 = ReadFileOrEmpty((*cluster)->dir() + "/worker2.log");
  const std::vector<ResumeLine> r0 = ParseResumeLines(log0);
  const std::vector<ResumeLine> r2 = ParseResumeLines(log2);
  ASSERT_EQ(r0.size(), 1u) << log0.substr(0, 4000);
  ASSERT_EQ(r2.size(), 1u) << log2.substr(0, 4000);
  const ResumeLine at = r0[0];
  EXPECT_EQ(r2[0].step, at.step);
  EXPECT_EQ(r2[0].offset, at.offset);
  EXPECT_TRUE(at.from_memory);
  EXPECT_TRUE(r2[0].from_memory);
  EXPECT_GE(at.step, 2 * kEvery);

  // The plans: 3 epochs of 200 at world 3; then the steps made plus the
  // rest of the started epoch at 2 x 16 and the whole epochs left (300 each).
  const int64_t left_in_epoch =
      (kTrain - at.offset + 2 * kBatch - 1) / (2 * kBatch);
  const int64_t replanned =
      at.step + left_in_epoch + (kEpochs - at.epoch - 1) * 300;
  for (const std::string* log : {&log0, &log2}) {
    const std::vector<PlanLine> plans = ParsePlanLines(*log);
    ASSERT_EQ(plans.size(), 2u) << log->substr(0, 4000);
    EXPECT_EQ(plans[0].world_size, 3);
    EXPECT_EQ(plans[0].horizon, 600);
    EXPECT_EQ(plans[1].world_size, 2);
    EXPECT_EQ(plans[1].horizon, replanned);
  }
  EXPECT_EQ(done->progress().total_steps(), replanned);
  EXPECT_EQ(done->last_checkpoint().step(), replanned);
  std::cout << "killed a worker at world 3; recovered from memory at world "
               "2 at step "
            << at.step << " (epoch " << at.epoch << ", offset " << at.offset
            << "), decay horizon 600 -> " << replanned << "\n";

  // The final parameters against one process replaying both generations.
  const std::vector<torch::Tensor> trained =
      CheckpointParameters(spec, done->last_checkpoint().path());
  int64_t clipped = 0;
  const std::vector<ReferenceGeneration> plan = {
      {3, {}}, {2, {at.epoch, at.step, at.offset}}};
  const double diff =
      MaxAbsDiff(trained, TrainSingleProcess(spec, plan, &clipped));
  std::cout << "distributed vs single-process replay: max |param diff| = "
            << diff << " (" << clipped << " of " << replanned
            << " steps clipped)\n";
  EXPECT_LE(diff, kTolerance);
  EXPECT_GT(clipped, 0);

  // What the comparison would have caught: 3 ranks' batches throughout, or
  // the decay horizon of the first generation kept after the resize.
  const double unresized = MaxAbsDiff(trained, TrainSingleProcess(spec, 3));
  v1::JobSpec kept = spec;
  kept.mutable_lr_schedule()->set_decay_steps(600);
  const double old_horizon =
      MaxAbsDiff(trained, TrainSingleProcess(kept, plan));
  std::cout << "vs 3 ranks throughout: " << unresized
            << "; vs the old horizon kept: " << old_horizon << "\n";
  EXPECT_GT(unresized, 100 * kTolerance);
  EXPECT_GT(old_horizon, 100 * kTolerance);
}

}  // namespace
}  // namespace ringleader::testing
