// The compute limit of the training benchmark, and the cost of progress
// reporting: one rank's step loop for any job, built from the worker's own
// public parts exactly as its trainer builds them (worker/train/trainer.cc):
// the job's data (LoadJobData), the replica (step/replica.h: the model for
// the data's shape, probed, the task's loss, the optimizer), the batch
// loader, and the step (step/train_step.h: buffer sync, forward, loss,
// backward through the reducer, clipping, the scheduled learning rate, the
// optimizer) over the worker's communicator for a generation of one rank,
// where the reducer and the buffer sync communicate nothing. So the limit
// of a built-in CNN, a TorchScript ResNet or a GPT computing its own loss is
// the worker's step minus communication.
//
// It takes a 1-rank job from a real coordinator (bench/training/train_bench.sh
// submits it) for the job's spec and so that progress reports are real
// ReportProgress calls the coordinator accepts. Rounds alternate two loops
// of --steps optimizer steps each: "quiet" reports nothing; "report" submits
// a progress report on every step through the worker's ProgressReporter (10
// times the default rate). CPU time is the process's (every thread: the
// loader's, the reporter's, gRPC's, the heartbeats'). Prints one JSON line;
// samples are the dataset's (a window of block_size tokens for a token
// stream: tokens_per_sample says how many). With --ready_file and --go_file,
// several such processes (each in a 1-rank job of its own) measure side by
// side: the limit of W ranks sharing the host as it is at that moment, not
// W times one rank's rate.
#include <sys/resource.h>
#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <iostream>
#include <numeric>
#include <random>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/time/clock.h"
#include "bench/common/bench_client.h"
#include "grpcpp/grpcpp.h"
#include "nlohmann/json.hpp"
#include "worker/coordinator_client.h"
#include "worker/data/batch_loader.h"
#include "worker/data/job_data.h"
#include "worker/device/communicator_factory.h"
#include "worker/malloc_tuning.h"
#include "worker/timeline/timeline.h"
#include "worker/torch_threads.h"
#include "worker/train/progress/loss_tracker.h"
#include "worker/train/progress/progress_reporter.h"
#include "worker/train/step/replica.h"
#include "worker/train/step/train_step.h"

ABSL_FLAG(std::string, coordinator, "127.0.0.1:50051", "host:port");
ABSL_FLAG(int, batch, 64, "Per-rank batch size");
ABSL_FLAG(int, steps, 60, "Optimizer steps per measured loop");
ABSL_FLAG(int, rounds, 3, "Rounds of (quiet, report) loops");
ABSL_FLAG(int, warmup, 20, "Steps before measuring");
ABSL_FLAG(bool, report_loops, true,
          "Each round's second loop reports every step (the reporting cost); "
          "false: quiet loops only, so that a --timeline is all quiet steps");
ABSL_FLAG(int, threads, 1, "LibTorch intra-op threads");
ABSL_FLAG(bool, keep_freed_memory, true,
          "As ringleader-worker's flag of the same name");
ABSL_FLAG(std::string, ready_file, "",
          "Side by side with other step loops: created once warmed up; the "
          "measured loops start when --go_file exists");
ABSL_FLAG(std::string, go_file, "", "See --ready_file");
ABSL_FLAG(std::string, timeline, "",
          "Where to write the loop's timeline (every step: data wait, "
          "forward, backward, optimizer...), as a worker writes its own "
          "(JobSpec.timeline_dir), for ringleader.step_profile to split the "
          "limit's step into the same parts as a job's");

namespace ringleader {
namespace {

double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec +
         1e-6 * (u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// Creates `ready` (when set), then waits for `go` to exist.
absl::Status WaitToGo(const std::string& ready, const std::string& go) {
  if (ready.empty() && go.empty()) return absl::OkStatus();
  if (!ready.empty()) {
    std::ofstream(ready).flush();
  }
  const absl::Time deadline = absl::Now() + absl::Minutes(5);
  while (!go.empty() && ::access(go.c_str(), F_OK) != 0) {
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(go + " never appeared");
    }
    absl::SleepFor(absl::Milliseconds(1));
  }
  return absl::OkStatus();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int Fail(const absl::Status& s) {
  std::cerr << "compute_limit: " << s << "\n";
  return 1;
}

int Run() {
  SetTorchThreads(absl::GetFlag(FLAGS_threads));
  if (absl::GetFlag(FLAGS_keep_freed_memory)) {
    if (absl::Status s = KeepFreedMemoryForReuse(); !s.ok()) return Fail(s);
  }
  absl::StatusOr<bench::JoinedJob> joined = bench::JoinFirstJob(
      absl::GetFlag(FLAGS_coordinator), "compute-limit", absl::Seconds(60));
  if (!joined.ok()) return Fail(joined.status());
  CoordinatorClient& client = *joined->client;
  const v1::JobAssignment* job = &joined->job;
  const v1::JoinRendezvousResponse* gen = &joined->generation;
  const v1::JobSpec& spec = gen->spec();
  if (gen->world_size() != 1) {
    return Fail(absl::FailedPreconditionError("submit a job of one rank"));
  }

  // What Trainer::BuildReplica does, on the CPU.
  const c10::Device device(c10::kCPU);
  absl::StatusOr<JobData> data = LoadJobData(spec.dataset(), spec.seed());
  if (!data.ok()) return Fail(data.status());
  absl::StatusOr<Replica> replica = BuildReplica(spec, *data, device);
  if (!replica.ok()) return Fail(replica.status());

  // What Trainer::CreateStep does, in a world of one: the worker's
  // communicator for this generation and the step over it (gradients in
  // the reducer's bucket views, nothing launched; no buffer sent).
  CommunicatorRequest request;
  request.client = &client;
  request.job_id = job->job_id();
  request.generation = gen->generation();
  request.rank = gen->rank();
  request.world_size = gen->world_size();
  request.cpu_transport = spec.ddp().cpu_transport();
  absl::StatusOr<std::unique_ptr<Communicator>> comm =
      CreateCommunicator(request);
  if (!comm.ok()) return Fail(comm.status());
  const int batch = absl::GetFlag(FLAGS_batch);
  const int steps = absl::GetFlag(FLAGS_steps);
  const int rounds = absl::GetFlag(FLAGS_rounds);
  const int warmup = absl::GetFlag(FLAGS_warmup);
  const bool report_loops = absl::GetFlag(FLAGS_report_loops);
  const int64_t total = warmup + (report_loops ? 2LL : 1LL) * rounds * steps;
  // The schedule's horizon is the loops' steps.
  const StepRecipe recipe = StepRecipe::ForJob(spec, total);
  // Every step of the run, so that the profile can leave out the warm-up.
  Timeline timeline(absl::GetFlag(FLAGS_timeline), /*rank=*/0, total + 1);
  timeline.SetMetadata("job_id", job->job_id());
  StepParts parts;
  parts.timeline = &timeline;
  parts.model = replica->model.get();
  parts.task = replica->task.get();
  parts.optimizer = replica->optimizer.get();
  parts.comm = comm->get();
  parts.device = device;
  parts.data = data->train.get();
  absl::StatusOr<std::unique_ptr<TrainStep>> train_step =
      TrainStep::Create(parts, recipe);
  if (!train_step.ok()) return Fail(train_step.status());
  // A shuffled epoch (or several), as the sampler gives a rank.
  std::vector<int64_t> order;
  std::mt19937_64 rng(spec.seed());
  const int64_t wanted = total * recipe.accumulate * batch;
  while (static_cast<int64_t>(order.size()) < wanted) {
    std::vector<int64_t> epoch(data->train->size());
    std::iota(epoch.begin(), epoch.end(), 0);
    std::shuffle(epoch.begin(), epoch.end(), rng);
    order.insert(order.end(), epoch.begin(), epoch.end());
  }
  order.resize(wanted);
  auto loader = BatchLoader::Create(*data->train, order, batch);
  if (!loader.ok()) return Fail(loader.status());

  ProgressReporter reporter([&client](const v1::ReportProgressRequest& r,
                                      const std::atomic<bool>* cancel) {
    return client.ReportProgress(r, cancel);
  });
  // One optimizer step as Trainer::RunEpoch takes it (on the CPU the loss
  // is read on every micro-batch there too): micro-batches until one
  // completes the step, then the step applied, measuring the gradient norm
  // for a report.
  LossTracker losses(/*on_device=*/device.is_cuda());
  MicroBatchPlace place;
  auto one_step = [&](bool report) -> absl::Status {
    const int64_t step = (*train_step)->done() + 1;
    timeline.SetStep(step);
    while (true) {
      std::optional<Batch> b;
      {
        TimelineSpan span(&timeline, "data_wait");
        b = (*loader)->Next();
      }
      if (!b.has_value()) return (*loader)->status();
      absl::StatusOr<TrainStep::MicroResult> micro =
          (*train_step)->Micro(*b, place);
      if (!micro.ok()) return micro.status();
      place.position += batch;
      if (absl::Status s =
              losses.Add(micro->loss, step, 0, b->sample_ids.front());
          !s.ok()) {
        return s;
      }
      if (micro->completes_step) break;
    }
    if (absl::Status s = (*train_step)->Apply(report).status(); !s.ok()) {
      return s;
    }
    if (report) {
      // What the trainer sends.
      v1::ReportProgressRequest p;
      p.set_job_id(job->job_id());
      p.set_generation(gen->generation());
      p.set_rank(0);
      p.set_step(step);
      p.set_total_steps(total);
      absl::StatusOr<double> loss_sum = losses.TakeWindowSum();
      if (!loss_sum.ok()) return loss_sum.status();
      p.set_loss(*loss_sum);
      p.set_samples_per_sec(1);
      p.set_step_time_ms(1);
      reporter.Submit(std::move(p));
    }
    return absl::OkStatus();
  };
  for (int i = 0; i < warmup; ++i) {
    if (absl::Status s = one_step(false); !s.ok()) return Fail(s);
  }
  if (absl::Status s = WaitToGo(absl::GetFlag(FLAGS_ready_file),
                                absl::GetFlag(FLAGS_go_file));
      !s.ok()) {
    return Fail(s);
  }
  std::vector<double> quiet_rate, report_rate, quiet_cpu, report_cpu;
  const int64_t samples_per_step =
      static_cast<int64_t>(recipe.accumulate) * batch;
  for (int r = 0; r < rounds; ++r) {
    for (bool report : {false, true}) {
      if (report && !report_loops) continue;
      const double cpu0 = CpuSeconds();
      const absl::Time t0 = absl::Now();
      for (int i = 0; i < steps; ++i) {
        if (absl::Status s = one_step(report); !s.ok()) return Fail(s);
      }
      if (report) reporter.Flush(absl::Minutes(1)).IgnoreError();
      const double secs = absl::ToDoubleSeconds(absl::Now() - t0);
      const double cpu = (CpuSeconds() - cpu0) / steps;
      (report ? report_rate : quiet_rate)
          .push_back(steps * samples_per_step / secs);
      (report ? report_cpu : quiet_cpu).push_back(cpu);
    }
  }
  const double qc = Median(quiet_cpu);
  const int64_t tokens_per_sample =
      spec.dataset().format() == v1::DATASET_FORMAT_TOKENS
          ? spec.dataset().block_size()
          : 1;
  nlohmann::json out;
  out["model"] = v1::ModelArch_Name(spec.model().arch());
  out["describe"] = replica->model->Describe();
  out["batch"] = batch;
  out["samples_per_s"] = Median(quiet_rate);
  out["tokens_per_sample"] = tokens_per_sample;
  out["cpu_ms_per_step"] = 1e3 * qc;
  if (report_loops) {
    const double rc = Median(report_cpu);
    out["reporting_samples_per_s"] = Median(report_rate);
    out["reporting_cpu_ms_per_step"] = 1e3 * rc;
    out["report_cpu_us"] = 1e6 * (rc - qc);
    out["reports_sent"] = reporter.sent();
  }
  if (absl::Status s = timeline.Flush(); !s.ok()) return Fail(s);
  std::cout << out.dump() << std::endl;
  client.Leave("compute limit measured").IgnoreError();
  return 0;
}

}  // namespace
}  // namespace ringleader

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return ringleader::Run();
}
