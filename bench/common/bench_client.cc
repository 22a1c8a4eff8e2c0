#include "bench/common/bench_client.h"

#include <unistd.h>

#include "grpcpp/grpcpp.h"

namespace ringleader::bench {

absl::StatusOr<JoinedJob> JoinFirstJob(const std::string& coordinator,
                                       const std::string& hostname,
                                       absl::Duration timeout,
                                       absl::Duration unreachable_timeout) {
  CoordinatorClient::Options o;
  o.hostname = hostname;
  o.pid = static_cast<int>(getpid());
  o.unreachable_timeout = unreachable_timeout;
  JoinedJob out;
  out.client = std::make_unique<CoordinatorClient>(
      grpc::CreateChannel(coordinator, grpc::InsecureChannelCredentials()), o);
  if (absl::Status s = out.client->Register(); !s.ok()) return s;
  out.client->StartHeartbeats([](const v1::GenerationAbort&) {});
  absl::StatusOr<v1::JobAssignment> job =
      out.client->WaitForAssignment(timeout);
  if (!job.ok()) return job.status();
  out.job = *std::move(job);
  absl::StatusOr<v1::JoinRendezvousResponse> gen =
      out.client->Join(out.job.job_id(), timeout);
  if (!gen.ok()) return gen.status();
  out.generation = *std::move(gen);
  out.client->SetCurrent(out.job.job_id(), out.generation.generation());
  return out;
}

}  // namespace ringleader::bench
