#ifndef RINGLEADER_COORDINATOR_REACTOR_UTIL_H_
#define RINGLEADER_COORDINATOR_REACTOR_UTIL_H_

#include <functional>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/grpc_status.h"
#include "grpcpp/grpcpp.h"

namespace ringleader {

// Finishes a unary call with a result computed now.
template <typename T>
grpc::ServerUnaryReactor* FinishNow(grpc::CallbackServerContext* ctx,
                                    absl::StatusOr<T> result, T* response) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  if (result.ok()) *response = *std::move(result);
  reactor->Finish(ToGrpcStatus(result.status()));
  return reactor;
}

inline grpc::ServerUnaryReactor* FinishNow(grpc::CallbackServerContext* ctx,
                                           const absl::Status& status) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

// A callback that finishes the call later (possibly inline); gRPC keeps
// `response` alive until Finish.
template <typename T>
std::function<void(absl::StatusOr<T>)> FinishLater(
    grpc::ServerUnaryReactor* reactor, T* response) {
  return [reactor, response](absl::StatusOr<T> result) {
    if (result.ok()) *response = *std::move(result);
    reactor->Finish(ToGrpcStatus(result.status()));
  };
}

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_REACTOR_UTIL_H_
