#include "coordinator/worker_service_impl.h"

#include "coordinator/barrier_stream_reactor.h"
#include "coordinator/generation_watch_reactor.h"
#include "coordinator/reactor_util.h"

namespace ringleader {

using grpc::CallbackServerContext;
using grpc::ServerUnaryReactor;

ServerUnaryReactor* WorkerServiceImpl::Register(CallbackServerContext* ctx,
                                                const v1::RegisterRequest* req,
                                                v1::RegisterResponse* resp) {
  absl::StatusOr<Caller> caller = CallerOf(*ctx);
  if (!caller.ok()) return FinishNow(ctx, caller.status());
  return FinishNow(ctx, coordinator_->worker_calls().Register(*caller, *req),
                   resp);
}

ServerUnaryReactor* WorkerServiceImpl::Heartbeat(
    CallbackServerContext* ctx, const v1::HeartbeatRequest* req,
    v1::HeartbeatResponse* resp) {
  absl::StatusOr<Caller> caller = CallerOf(*ctx);
  if (!caller.ok()) return FinishNow(ctx, caller.status());
  return FinishNow(ctx, coordinator_->worker_calls().Heartbeat(*caller, *req),
                   resp);
}

ServerUnaryReactor* WorkerServiceImpl::JoinRendezvous(
    CallbackServerContext* ctx, const v1::JoinRendezvousRequest* req,
    v1::JoinRendezvousResponse* resp) {
  absl::StatusOr<Caller> caller = CallerOf(*ctx);
  if (!caller.ok()) return FinishNow(ctx, caller.status());
  auto* reactor = new CancellableReactor;
  reactor->SetCanceller(coordinator_->join_calls().JoinRendezvous(
      *caller, *req, FinishLater(reactor, resp)));
  return reactor;
}

ServerUnaryReactor* WorkerServiceImpl::KvSet(CallbackServerContext* ctx,
                                             const v1::KvSetRequest* req,
                                             v1::KvSetResponse*) {
  absl::StatusOr<Caller> caller = CallerOf(*ctx);
  if (!caller.ok()) return FinishNow(ctx, caller.status());
  return FinishNow(ctx, coordinator_->bootstrap_calls().KvSet(*caller, *req));
}

ServerUnaryReactor* WorkerServiceImpl::KvGet(CallbackServerContext* ctx,
                                             const v1::KvGetRequest* req,
                                             v1::KvGetResponse* resp) {
  absl::StatusOr<Caller> caller = CallerOf(*ctx);
  if (!caller.ok()) return FinishNow(ctx, caller.status());
  return FinishNow(ctx, coordinator_->bootstrap_calls().KvGet(*caller, *req),
                   resp);
}

ServerUnaryReactor* WorkerServiceImpl::KvWait(CallbackServerContext* ctx,
                                              const v1::KvWaitRequest* req,
                                              v1::KvWaitResponse* resp) {
  absl::StatusOr<Caller> caller = CallerOf(*ctx);
  if (!caller.ok()) return FinishNow(ctx, caller.status());
  auto* reactor = new CancellableReactor;
  reactor->SetCanceller(coordinator_->bootstrap_calls().KvWait(
      *caller, *req, FinishLater(reactor, resp)));
  return reactor;
}

ServerUnaryReactor* WorkerServiceImpl::KvAdd(CallbackServerContext* ctx,
                                             const v1::KvAddRequest* req,
                                             v1::KvAddResponse* resp) {
  absl::StatusOr<Caller> caller = CallerOf(*ctx);
  if (!caller.ok()) return FinishNow(ctx, caller.status());
  return FinishNow(ctx, coordinator_->bootstrap_calls().KvAdd(*caller, *req),
                   resp);
}

ServerUnaryReactor* WorkerServiceImpl::PublishNcclId(
    CallbackServerContext* ctx, const v1::PublishNcclIdRequest* req,
    v1::PublishNcclIdResponse*) {
  absl::StatusOr<Caller> caller = CallerOf(*ctx);
  if (!caller.ok()) return FinishNow(ctx, caller.status());
  return FinishNow(
      ctx, coordinator_->bootstrap_calls().PublishNcclId(*caller, *req));
}

ServerUnaryReactor* WorkerServiceImpl::FetchNcclId(
    CallbackServerContext* ctx, const v1::FetchNcclIdRequest* req,
    v1::FetchNcclIdResponse* resp) {
  absl::StatusOr<Caller> caller = CallerOf(*ctx);
  if (!caller.ok()) return FinishNow(ctx, caller.status());
  auto* reactor = new CancellableReactor;
  reactor->SetCanceller(coordinator_->bootstrap_calls().FetchNcclId(
      *caller, *req, FinishLater(reactor, resp)));
  return reactor;
}

ServerUnaryReactor* WorkerServiceImpl::Barrier(CallbackServerContext* ctx,
                                               const v1::BarrierRequest* req,
                                               v1::BarrierResponse*) {
  absl::StatusOr<Caller> caller = CallerOf(*ctx);
  if (!caller.ok()) return FinishNow(ctx, caller.status());
  auto* reactor = new CancellableReactor;
  reactor->SetCanceller(coordinator_->bootstrap_calls().Barrier(
      *caller, *req,
      [reactor](absl::Status s) { reactor->Finish(ToGrpcStatus(s)); }));
  return reactor;
}

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>*
WorkerServiceImpl::BarrierStream(CallbackServerContext* ctx) {
  return NewBarrierStreamReactor(ctx, &coordinator_->bootstrap_calls(),
                                 barrier_stream_);
}

ServerUnaryReactor* WorkerServiceImpl::GetShard(CallbackServerContext* ctx,
                                                const v1::GetShardRequest* req,
                                                v1::ShardAssignment* resp) {
  absl::StatusOr<Caller> caller = CallerOf(*ctx);
  if (!caller.ok()) return FinishNow(ctx, caller.status());
  return FinishNow(ctx, coordinator_->training_calls().GetShard(*caller, *req),
                   resp);
}

ServerUnaryReactor* WorkerServiceImpl::ReportProgress(
    CallbackServerContext* ctx, const v1::ReportProgressRequest* req,
    v1::ReportProgressResponse*) {
  absl::StatusOr<Caller> caller = CallerOf(*ctx);
  if (!caller.ok()) return FinishNow(ctx, caller.status());
  return FinishNow(
      ctx, coordinator_->training_calls().ReportProgress(*caller, *req));
}

ServerUnaryReactor* WorkerServiceImpl::CommitCheckpoint(
    CallbackServerContext* ctx, const v1::CommitCheckpointRequest* req,
    v1::CommitCheckpointResponse* resp) {
  absl::StatusOr<Caller> caller = CallerOf(*ctx);
  if (!caller.ok()) return FinishNow(ctx, caller.status());
  return FinishNow(
      ctx, coordinator_->training_calls().CommitCheckpoint(*caller, *req),
      resp);
}

ServerUnaryReactor* WorkerServiceImpl::Leave(CallbackServerContext* ctx,
                                             const v1::LeaveRequest* req,
                                             v1::LeaveResponse*) {
  absl::StatusOr<Caller> caller = CallerOf(*ctx);
  if (!caller.ok()) return FinishNow(ctx, caller.status());
  return FinishNow(ctx, coordinator_->worker_calls().Leave(*caller, *req));
}

grpc::ServerWriteReactor<v1::GenerationEvent>*
WorkerServiceImpl::WatchGeneration(CallbackServerContext* ctx,
                                   const v1::WatchGenerationRequest* req) {
  return NewGenerationWatchReactor(ctx, &coordinator_->watch_calls(), *req);
}

}  // namespace ringleader
