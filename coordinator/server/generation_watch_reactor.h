#ifndef RINGLEADER_COORDINATOR_SERVER_GENERATION_WATCH_REACTOR_H_
#define RINGLEADER_COORDINATOR_SERVER_GENERATION_WATCH_REACTOR_H_

#include "coordinator/watch_calls.h"
#include "grpcpp/grpcpp.h"
#include "ringleader/v1/worker_service.grpc.pb.h"

namespace ringleader {

// Serves one WorkerService.WatchGeneration call: registers the watch with
// WatchCalls::WatchGeneration and, when the coordinator answers it (from
// any thread, possibly before this returns), writes the one event and
// finishes OK, or finishes with the refusal. An open watch holds no thread.
// A client that goes away withdraws the watch (CANCELLED). Creates itself
// for the call and deletes itself in OnDone.
grpc::ServerWriteReactor<v1::GenerationEvent>* NewGenerationWatchReactor(
    grpc::CallbackServerContext* ctx, WatchCalls* calls,
    const v1::WatchGenerationRequest& request);

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_SERVER_GENERATION_WATCH_REACTOR_H_
