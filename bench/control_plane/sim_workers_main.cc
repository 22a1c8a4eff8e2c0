// ringleader-simworkers: N simulated workers (no training) in one process,
// for exercising and measuring the coordinator's control plane.
#include <iostream>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_format.h"
#include "bench/control_plane/sim_worker.h"
#include "unistd.h"

ABSL_FLAG(std::string, coordinator, "127.0.0.1:7070", "Coordinator HOST:PORT.");
ABSL_FLAG(int, workers, 2, "Simulated workers to run (1..256).");
ABSL_FLAG(int, step_ms, 20, "Simulated time per training step.");
ABSL_FLAG(int, assignment_timeout_s, 60, "Give up without a job after this.");
ABSL_FLAG(bool, report_phases, false,
          "Heartbeats say the phase and step time, as a real worker's do.");
ABSL_FLAG(bool, history_fields, false,
          "Reports carry the learning rate, gradient norm and data-wait "
          "share, as a real worker's do.");
ABSL_FLAG(int, log_lines_per_report, 0,
          "Job log lines sent (AppendLogs) with each progress report.");
ABSL_FLAG(int, log_line_bytes, 120, "Bytes per job log line.");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Runs simulated workers against a coordinator: they register, take a "
      "job, rendezvous and report progress, without training.");
  absl::ParseCommandLine(argc, argv);
  const int n = absl::GetFlag(FLAGS_workers);
  if (n < 1 || n > 256) {
    std::cerr << "ringleader-simworkers: --workers must be in 1..256\n";
    return 2;
  }
  auto channel = grpc::CreateChannel(absl::GetFlag(FLAGS_coordinator),
                                     grpc::InsecureChannelCredentials());
  std::vector<absl::StatusOr<ringleader::SimWorker::Result>> results(
      n, absl::UnknownError("not run"));
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      ringleader::SimWorker::Options o;
      o.pid = static_cast<int>(getpid()) * 1000 + i;
      o.step_time = absl::Milliseconds(absl::GetFlag(FLAGS_step_ms));
      o.assignment_timeout =
          absl::Seconds(absl::GetFlag(FLAGS_assignment_timeout_s));
      o.report_phases = absl::GetFlag(FLAGS_report_phases);
      o.history_fields = absl::GetFlag(FLAGS_history_fields);
      o.log_lines_per_report = absl::GetFlag(FLAGS_log_lines_per_report);
      o.log_line_bytes = absl::GetFlag(FLAGS_log_line_bytes);
      results[i] = ringleader::SimWorker(channel, o).Run();
    });
  }
  for (auto& t : threads) t.join();
  int failed = 0;
  for (int i = 0; i < n; ++i) {
    if (!results[i].ok()) {
      ++failed;
      std::cerr << "sim worker " << i << ": " << results[i].status().message()
                << "\n";
      continue;
    }
    std::cout << absl::StrFormat(
        "sim worker %d: job %s generation %d rank %d, %d steps, rendezvous "
        "%.1f ms\n",
        i, results[i]->job_id, results[i]->generation, results[i]->rank,
        results[i]->steps,
        absl::ToDoubleMilliseconds(results[i]->rendezvous_time));
  }
  return failed == 0 ? 0 : 1;
}
