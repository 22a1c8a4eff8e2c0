#ifndef RINGLEADER_COORDINATOR_SERVER_CALL_AUTH_H_
#define RINGLEADER_COORDINATOR_SERVER_CALL_AUTH_H_

// Who may make which coordinator call.
//
// - Users (ringctl) authenticate with a bearer token, "authorization: Bearer
//   <token>" metadata, checked by UserServiceImpl for the calls that change
//   state (SubmitJob, CancelJob, DeleteJob). Read-only calls (GetJob, ListJobs,
//   WatchJob, ListWorkers, GetJobHistory) stay open, as do health and
//   reflection. The check
//   works with and without TLS (without it the token crosses in clear:
//   loopback only).
// - Workers authenticate with a client certificate when the coordinator has
//   --tls_client_ca: the TLS handshake verifies any certificate presented
//   against that CA (a certificate from another CA fails the handshake),
//   and WorkerCertProcessor refuses every WorkerService call on a connection
//   that presented none. ringctl therefore needs no certificate of its own.
// - Each worker then proves which worker it is, call by call: Register gives
//   it a secret worker_token (kept by the coordinator only as a SHA-256
//   hash), and every later WorkerService call carries "x-ringleader-worker:
//   <worker_id>:<worker_token>" metadata (common/worker_credential.h; read
//   by CallerOf, coordinator/caller.h). The Coordinator checks it per call
//   (coordinator_callers.cc): calls about a worker come from that worker,
//   rank calls from the rank's holder, KV calls from a generation member.
//   With client certificates the token is also bound to the certificate
//   identity the worker registered with, so a worker holding another
//   certificate cannot use a stolen token; without TLS the token crosses in
//   clear like the bearer token (loopback or a trusted network only).
//   This check is separate from the certificate check above: a certificate
//   says "one of our workers", the token says "this worker".

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "grpcpp/security/auth_metadata_processor.h"
#include "grpcpp/server_context.h"

namespace ringleader {

class BearerTokenCheck {
 public:
  // An empty token: every call passes (no --auth_token_file).
  explicit BearerTokenCheck(std::string token) : token_(std::move(token)) {}

  // OK when the call carries the token; UNAUTHENTICATED naming `method`
  // otherwise. Compares in constant time.
  absl::Status Check(const grpc::ServerContextBase& ctx,
                     absl::string_view method) const;

  bool enabled() const { return !token_.empty(); }

 private:
  const std::string token_;
};

// For a TLS server with a client CA: UNAUTHENTICATED for a WorkerService call
// whose connection presented no (verified) client certificate; other services
// pass. Thread-safe and non-blocking.
std::shared_ptr<grpc::AuthMetadataProcessor> NewWorkerCertProcessor();

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_SERVER_CALL_AUTH_H_
