// The compute limit of the training benchmark, and the cost of progress
// reporting: one rank's LibTorch step loop (the worker's own model,
// optimizer and batch loader: forward, loss, backward, optimizer step) with
// no communication at all, at a given per-rank batch.
//
// It takes a 1-rank job from a real coordinator (bench/train_bench.sh
// submits it) for the job's spec and so that progress reports are real
// ReportProgress calls the coordinator accepts. Rounds alternate two loops
// of --steps steps each: "quiet" reports nothing; "report" submits a progress
// report on every step through the worker's ProgressReporter (10 times the
// default rate). CPU time is the process's (every thread: the loader's, the
// reporter's, gRPC's, the heartbeats'). Prints one JSON line.
#include <sys/resource.h>
#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <numeric>
#include <random>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/time/clock.h"
#include "bench/bench_client.h"
#include "grpcpp/grpcpp.h"
#include "worker/coordinator_client.h"
#include "worker/data/batch_loader.h"
#include "worker/job_data.h"
#include "worker/malloc_tuning.h"
#include "worker/model/models.h"
#include "worker/model/optimizer.h"
#include "worker/torch_threads.h"
#include "worker/train/progress_reporter.h"

ABSL_FLAG(std::string, coordinator, "127.0.0.1:50051", "host:port");
ABSL_FLAG(int, batch, 64, "Per-rank batch size");
ABSL_FLAG(int, steps, 60, "Optimizer steps per measured loop");
ABSL_FLAG(int, rounds, 3, "Rounds of (quiet, report) loops");
ABSL_FLAG(int, warmup, 20, "Steps before measuring");
ABSL_FLAG(int, threads, 1, "LibTorch intra-op threads");
ABSL_FLAG(bool, keep_freed_memory, true,
          "As ringleader-worker's flag of the same name");

namespace ringleader {
namespace {

double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec +
         1e-6 * (u.ru_utime.tv_usec + u.ru_stime.tv_usec);
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

  absl::StatusOr<JobData> data = LoadJobData(spec.dataset(), spec.seed());
  if (!data.ok()) return Fail(data.status());
  torch::manual_seed(spec.seed());
  absl::StatusOr<std::shared_ptr<Model>> model =
      BuildModel(spec.model(), spec.seed());
  if (!model.ok()) return Fail(model.status());
  absl::StatusOr<std::unique_ptr<torch::optim::Optimizer>> optimizer =
      BuildOptimizer(spec.optimizer(), (*model)->Parameters());
  if (!optimizer.ok()) return Fail(optimizer.status());
  (*model)->Train(true);

  const int batch = absl::GetFlag(FLAGS_batch);
  const int steps = absl::GetFlag(FLAGS_steps);
  const int rounds = absl::GetFlag(FLAGS_rounds);
  const int warmup = absl::GetFlag(FLAGS_warmup);
  const int64_t total = warmup + 2LL * rounds * steps;
  // A shuffled epoch (or several), as the sampler gives a rank.
  std::vector<int64_t> order;
  std::mt19937_64 rng(spec.seed());
  while (static_cast<int64_t>(order.size()) < total * batch) {
    std::vector<int64_t> epoch((*data).train->size());
    std::iota(epoch.begin(), epoch.end(), 0);
    std::shuffle(epoch.begin(), epoch.end(), rng);
    order.insert(order.end(), epoch.begin(), epoch.end());
  }
  order.resize(total * batch);
  auto loader = BatchLoader::Create(*data->train, order, batch);
  if (!loader.ok()) return Fail(loader.status());

  ProgressReporter reporter([&client](const v1::ReportProgressRequest& r) {
    return client.ReportProgress(r);
  });
  int64_t step = 0;
  auto one_step = [&](bool report) -> absl::Status {
    std::optional<Batch> b = (*loader)->Next();
    if (!b.has_value()) return (*loader)->status();
    absl::StatusOr<at::Tensor> out = (*model)->Forward(b->inputs[0]);
    if (!out.ok()) return out.status();
    torch::Tensor loss = torch::nn::functional::cross_entropy(*out, b->targets);
    (*optimizer)->zero_grad();
    loss.backward();
    (*optimizer)->step();
    ++step;
    if (report) {
      // What the trainer sends (it also reads the loss every step).
      v1::ReportProgressRequest p;
      p.set_job_id(job->job_id());
      p.set_generation(gen->generation());
      p.set_rank(0);
      p.set_step(step);
      p.set_total_steps(total);
      p.set_loss(loss.item<double>());
      p.set_samples_per_sec(1);
      p.set_step_time_ms(1);
      reporter.Submit(std::move(p));
    } else {
      loss.item<double>();
    }
    return absl::OkStatus();
  };
  for (int i = 0; i < warmup; ++i) {
    if (absl::Status s = one_step(false); !s.ok()) return Fail(s);
  }
  std::vector<double> quiet_rate, report_rate, quiet_cpu, report_cpu;
  for (int r = 0; r < rounds; ++r) {
    for (bool report : {false, true}) {
      const double cpu0 = CpuSeconds();
      const absl::Time t0 = absl::Now();
      for (int i = 0; i < steps; ++i) {
        if (absl::Status s = one_step(report); !s.ok()) return Fail(s);
      }
      if (report) reporter.Flush().IgnoreError();
      const double secs = absl::ToDoubleSeconds(absl::Now() - t0);
      const double cpu = (CpuSeconds() - cpu0) / steps;
      (report ? report_rate : quiet_rate).push_back(steps * batch / secs);
      (report ? report_cpu : quiet_cpu).push_back(cpu);
    }
  }
  const double qc = Median(quiet_cpu), rc = Median(report_cpu);
  std::printf(
      "{\"model\": \"%s\", \"batch\": %d, \"samples_per_s\": %.1f, "
      "\"reporting_samples_per_s\": %.1f, \"cpu_ms_per_step\": %.4f, "
      "\"reporting_cpu_ms_per_step\": %.4f, \"report_cpu_us\": %.1f, "
      "\"reports_sent\": %lld}\n",
      v1::ModelArch_Name(spec.model().arch()).c_str(), batch,
      Median(quiet_rate), Median(report_rate), 1e3 * qc, 1e3 * rc,
      1e6 * (rc - qc), static_cast<long long>(reporter.sent()));
  client.Leave("compute limit measured").IgnoreError();
  return 0;
}

}  // namespace
}  // namespace ringleader

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return ringleader::Run();
}
