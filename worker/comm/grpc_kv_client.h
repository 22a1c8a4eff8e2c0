#ifndef RINGLEADER_WORKER_COMM_GRPC_KV_CLIENT_H_
#define RINGLEADER_WORKER_COMM_GRPC_KV_CLIENT_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/worker_credential.h"
#include "grpcpp/grpcpp.h"
#include "ringleader/v1/worker_service.grpc.pb.h"
#include "worker/comm/kv_client.h"

namespace ringleader {

// KvClient over the coordinator's Kv* RPCs for one (job, generation). Every
// RPC carries a deadline; a failed RPC becomes an absl::Status with the gRPC
// code unchanged (the codes share their numbering), so ABORTED still means
// "the generation ended" and DEADLINE_EXCEEDED "the keys did not appear".
// Thread-safe (gRPC stubs are).
class GrpcKvClient : public KvClient {
 public:
  struct Options {
    // Deadline of the calls that do not block on the server (Set, Get, Add).
    absl::Duration rpc_timeout = absl::Seconds(10);
    // KvWait's deadline is its timeout plus this, so that the coordinator's
    // own DEADLINE_EXCEEDED (with its message) normally arrives first.
    absl::Duration wait_slack = absl::Seconds(5);
    // The worker's credential, carried by every call: the coordinator
    // answers only a member of the generation.
    WorkerCredential credential;
  };

  GrpcKvClient(std::shared_ptr<grpc::Channel> channel, std::string job_id,
               int64_t generation, Options options);
  GrpcKvClient(std::shared_ptr<grpc::Channel> channel, std::string job_id,
               int64_t generation, WorkerCredential credential)
      : GrpcKvClient(std::move(channel), std::move(job_id), generation,
                     WithCredential(std::move(credential))) {}

  absl::Status Set(const std::string& key, const std::string& value) override;
  // Maps to KvWait with timeout_ms; a timeout under 1 ms is sent as 1 ms
  // (the coordinator reads 0 as "its default wait", which is not meant).
  absl::StatusOr<std::vector<std::string>> Wait(
      const std::vector<std::string>& keys, absl::Duration timeout) override;

  // The other two Kv RPCs, for callers holding the concrete client.
  // Get: std::nullopt when the key is absent (never blocks).
  absl::StatusOr<std::optional<std::string>> Get(const std::string& key);
  absl::StatusOr<int64_t> Add(const std::string& key, int64_t delta);

  const std::string& job_id() const { return job_id_; }
  int64_t generation() const { return generation_; }

 private:
  std::unique_ptr<v1::WorkerService::Stub> stub_;
  const std::string job_id_;
  const int64_t generation_;
  static Options WithCredential(WorkerCredential credential) {
    Options o;
    o.credential = std::move(credential);
    return o;
  }
  // A context with `timeout` and the credential.
  std::unique_ptr<grpc::ClientContext> Ctx(absl::Duration timeout) const;

  const Options options_;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_COMM_GRPC_KV_CLIENT_H_
