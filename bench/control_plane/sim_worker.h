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

  std::unique_ptr<v1::WorkerService::Stub> stub_;
  Options options_;
  std::string worker_id_;
  std::string worker_token_;  // Carried by every call after Register.
  absl::Duration heartbeat_interval_ = absl::Seconds(1);
  std::atomic<int64_t> generation_{0};
  std::string job_id_;
};

}  // namespace ringleader

#endif  // RINGLEADER_BENCH_SIM_WORKER_H_
