#ifndef RINGLEADER_COORDINATOR_SERVER_CALLER_OF_H_
#define RINGLEADER_COORDINATOR_SERVER_CALLER_OF_H_

#include "absl/status/statusor.h"
#include "coordinator/caller.h"
#include "grpcpp/server_context.h"

namespace ringleader {

// The caller of a server call: its x-ringleader-worker metadata (a value
// that does not parse fails the call INVALID_ARGUMENT), its peer identity
// and the connection it came over.
absl::StatusOr<Caller> CallerOf(const grpc::ServerContextBase& ctx);

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_SERVER_CALLER_OF_H_
