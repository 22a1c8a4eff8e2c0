#ifndef RINGLEADER_BENCH_SIM_WORKER_H_
#define RINGLEADER_BENCH_SIM_WORKER_H_

#include <atomic>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "ringleader/v1/worker_service.grpc.pb.h"

namespace ringleader {

// A simulated worker: a real client of the whole worker protocol (register,
// heartbeat, join, barrier, shard plans, progress, checkpoint commit) that
// does no training. Each step only waits `step_time`. It exercises and
// measures the control plane; the real worker daemon is worker/.
// Not thread-safe: one thread runs Run(); Heartbeats run on a second.
class SimWorker {
 public:
  struct Options {
    std::string hostname = "sim";
    int pid = 0;  // Distinct per simulated worker.
    absl::Duration step_time = absl::Milliseconds(20);
    absl::Duration assignment_timeout = absl::Seconds(60);
    // What a real worker adds for observability (issue 36), each off here
    // unless asked, so that a benchmark can weigh it: heartbeats that say
    // the phase (forward, step time...); reports that make points of the
    // job's history (rank 0's step time), with the learning rate, gradient
    // norm and data-wait share it keeps; and with
    // each report this many log lines of `log_line_bytes` for the job log,
    // sent about once a second (AppendLogs) as a worker's shipper sends.
    bool report_phases = false;
    bool history_fields = false;
    int log_lines_per_report = 0;
    int log_line_bytes = 120;
  };
  struct Result {
    std::string job_id;
    int64_t generation = 0;
    int32_t rank = -1;
    int64_t steps = 0;
    absl::Duration rendezvous_time;  // From join to generation formed.
  };

  SimWorker(std::shared_ptr<grpc::Channel> channel, Options options);
  // Registers, waits for an assignment, runs that job to the end, leaves.
  absl::StatusOr<Result> Run();

 private:
  absl::Status Register();
  absl::StatusOr<v1::JobAssignment> WaitForAssignment();
  absl::Status Train(const v1::JoinRendezvousResponse& gen, Result& out);
  std::unique_ptr<grpc::ClientContext> Ctx(absl::Duration timeout) const;
  void Heartbeat();
  absl::Status Report(const v1::JoinRendezvousResponse& gen, int64_t epoch,
                      int64_t step, int64_t total, int64_t train_size,
                      double samples_per_sec, bool last);
  absl::Status AppendLogs(const v1::JoinRendezvousResponse& gen, int64_t step);

  std::unique_ptr<v1::WorkerService::Stub> stub_;
  Options options_;
  std::string worker_id_;
  std::string worker_token_;  // Carried by every call after Register.
  absl::Duration heartbeat_interval_ = absl::Seconds(1);
  std::atomic<int64_t> generation_{0};
  std::atomic<int64_t> step_{0};  // For the heartbeats' phase.
  int pending_log_lines_ = 0;     // Not sent yet.
  absl::Time last_log_send_ = absl::InfinitePast();
  std::string job_id_;
};

}  // namespace ringleader

#endif  // RINGLEADER_BENCH_SIM_WORKER_H_
