#ifndef RINGLEADER_COMMON_GRPC_STATUS_H_
#define RINGLEADER_COMMON_GRPC_STATUS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "grpcpp/support/status.h"

namespace ringleader {

// absl::Status and grpc::Status share their code numbering. Servers convert
// in their service adapters only; clients convert each RPC's outcome at the
// stub, prefixing what was called so the message says where it failed.

inline grpc::Status ToGrpcStatus(const absl::Status& s) {
  if (s.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()),
                      std::string(s.message()));
}

inline absl::Status FromGrpcStatus(const grpc::Status& s,
                                   absl::string_view what) {
  if (s.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()),
                      absl::StrCat(what, ": ", s.error_message()));
}

}  // namespace ringleader

#endif  // RINGLEADER_COMMON_GRPC_STATUS_H_
