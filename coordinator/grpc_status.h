#ifndef RINGLEADER_COORDINATOR_GRPC_STATUS_H_
#define RINGLEADER_COORDINATOR_GRPC_STATUS_H_

#include <string>

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace ringleader {

// The one place where an absl::Status becomes a gRPC status (the codes share
// their numbering).
inline grpc::Status ToGrpcStatus(const absl::Status& s) {
  if (s.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()),
                      std::string(s.message()));
}

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_GRPC_STATUS_H_
