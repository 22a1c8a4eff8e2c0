#ifndef RINGLEADER_BENCH_HEARTBEAT_PROBE_H_
#define RINGLEADER_BENCH_HEARTBEAT_PROBE_H_

#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "common/worker_credential.h"
#include "ringleader/v1/worker_service.grpc.pb.h"

namespace ringleader::bench {

// What a worker's lease depends on, measured while something else loads the
// coordinator: a thread sends `request` as a Heartbeat every `interval` and
// records how long each answer took. A heartbeat slower than the lease is a
// dead worker to the coordinator.
class HeartbeatProbe {
 public:
  // `worker`: the credential of request's worker, carried by each beat.
  HeartbeatProbe(v1::WorkerService::Stub& stub, v1::HeartbeatRequest request,
                 WorkerCredential worker, absl::Duration interval);
  ~HeartbeatProbe();  // Stops it.

  struct Sample {
    absl::Time sent;
    double ms = 0;  // Until the answer; -1 if it was not OK.
  };
  // Stops the thread; every heartbeat it sent.
  std::vector<Sample> Stop();

 private:
  void Run();

  v1::WorkerService::Stub& stub_;
  const v1::HeartbeatRequest request_;
  const WorkerCredential worker_;
  const absl::Duration interval_;
  absl::Notification stop_;
  absl::Mutex mu_;
  std::vector<Sample> samples_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace ringleader::bench

#endif  // RINGLEADER_BENCH_HEARTBEAT_PROBE_H_
