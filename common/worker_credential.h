#ifndef RINGLEADER_COMMON_WORKER_CREDENTIAL_H_
#define RINGLEADER_COMMON_WORKER_CREDENTIAL_H_

// How a worker proves, on each WorkerService call after Register, that it is
// the worker it names: its id and the secret token Register gave it, in one
// metadata entry "x-ringleader-worker: <worker_id>:<token>". One entry, not
// an id and a token in two, so that a call speaking for several workers
// (a host agent's BarrierStream) cannot pair an id with the wrong token.

#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "grpcpp/client_context.h"

namespace ringleader {

inline constexpr char kWorkerCredentialMetadata[] = "x-ringleader-worker";

struct WorkerCredential {
  std::string worker_id;
  std::string token;

  bool empty() const { return worker_id.empty(); }
};

// "<worker_id>:<token>".
std::string FormatWorkerCredential(const WorkerCredential& c);
// The inverse; nullopt unless the value has a non-empty id and token.
std::optional<WorkerCredential> ParseWorkerCredential(absl::string_view value);

// Adds `c` to the call's metadata (nothing when it is empty: not registered
// yet). Before the call starts.
void AttachWorkerCredential(grpc::ClientContext* ctx,
                            const WorkerCredential& c);

}  // namespace ringleader

#endif  // RINGLEADER_COMMON_WORKER_CREDENTIAL_H_
