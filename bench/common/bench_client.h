#ifndef RINGLEADER_BENCH_BENCH_CLIENT_H_
#define RINGLEADER_BENCH_BENCH_CLIENT_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "ringleader/v1/worker_service.pb.h"
#include "worker/coordinator_client.h"

namespace ringleader::bench {

// A benchmark process in a job, as a worker is: registered with the
// coordinator, heartbeating, in a generation of the first job assigned to
// it (which the benchmark script submitted).
struct JoinedJob {
  std::unique_ptr<CoordinatorClient> client;
  v1::JobAssignment job;
  v1::JoinRendezvousResponse generation;
};

// Registers as `hostname` with this process's pid, starts heartbeats, waits
// for an assignment and joins its rendezvous, each wait bounded by
// `timeout`.
absl::StatusOr<JoinedJob> JoinFirstJob(
    const std::string& coordinator, const std::string& hostname,
    absl::Duration timeout,
    absl::Duration unreachable_timeout = absl::Minutes(5));

}  // namespace ringleader::bench

#endif  // RINGLEADER_BENCH_BENCH_CLIENT_H_
