#include "coordinator/worker_service_impl.h"

#include "coordinator/barrier_stream_reactor.h"
#include "coordinator/reactor_util.h"

namespace ringleader {

using grpc::CallbackServerContext;
using grpc::ServerUnaryReactor;

ServerUnaryReactor* WorkerServiceImpl::Register(CallbackServerContext* ctx,
                                                const v1::RegisterRequest* req,
                                                v1::RegisterResponse* resp) {
  return FinishNow(ctx, coordinator_->Register(*req), resp);
}

ServerUnaryReactor* WorkerServiceImpl::Heartbeat(
    CallbackServerContext* ctx, const v1::HeartbeatRequest* req,
    v1::HeartbeatResponse* resp) {
  return FinishNow(ctx, coordinator_->Heartbeat(*req), resp);
}

ServerUnaryReactor* WorkerServiceImpl::JoinRendezvous(
    CallbackServerContext* ctx, const v1::JoinRendezvousRequest* req,
    v1::JoinRendezvousResponse* resp) {
  auto* reactor = new CancellableReactor;
  reactor->SetCanceller(
      coordinator_->JoinRendezvous(*req, FinishLater(reactor, resp)));
  return reactor;
}

ServerUnaryReactor* WorkerServiceImpl::KvSet(CallbackServerContext* ctx,
                                             const v1::KvSetRequest* req,
                                             v1::KvSetResponse*) {
  return FinishNow(ctx, coordinator_->KvSet(*req));
}

ServerUnaryReactor* WorkerServiceImpl::KvGet(CallbackServerContext* ctx,
                                             const v1::KvGetRequest* req,
                                             v1::KvGetResponse* resp) {
  return FinishNow(ctx, coordinator_->KvGet(*req), resp);
}

ServerUnaryReactor* WorkerServiceImpl::KvWait(CallbackServerContext* ctx,
                                              const v1::KvWaitRequest* req,
                                              v1::KvWaitResponse* resp) {
  auto* reactor = new CancellableReactor;
  reactor->SetCanceller(coordinator_->KvWait(*req, FinishLater(reactor, resp)));
  return reactor;
}

ServerUnaryReactor* WorkerServiceImpl::KvAdd(CallbackServerContext* ctx,
                                             const v1::KvAddRequest* req,
                                             v1::KvAddResponse* resp) {
  return FinishNow(ctx, coordinator_->KvAdd(*req), resp);
}

ServerUnaryReactor* WorkerServiceImpl::PublishNcclId(
    CallbackServerContext* ctx, const v1::PublishNcclIdRequest* req,
    v1::PublishNcclIdResponse*) {
  return FinishNow(ctx, coordinator_->PublishNcclId(*req));
}

ServerUnaryReactor* WorkerServiceImpl::FetchNcclId(
    CallbackServerContext* ctx, const v1::FetchNcclIdRequest* req,
    v1::FetchNcclIdResponse* resp) {
  auto* reactor = new CancellableReactor;
  reactor->SetCanceller(
      coordinator_->FetchNcclId(*req, FinishLater(reactor, resp)));
  return reactor;
}

ServerUnaryReactor* WorkerServiceImpl::Barrier(CallbackServerContext* ctx,
                                               const v1::BarrierRequest* req,
                                               v1::BarrierResponse*) {
  auto* reactor = new CancellableReactor;
  reactor->SetCanceller(coordinator_->Barrier(
      *req, [reactor](absl::Status s) { reactor->Finish(ToGrpcStatus(s)); }));
  return reactor;
}

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>*
WorkerServiceImpl::BarrierStream(CallbackServerContext* ctx) {
  return NewBarrierStreamReactor(ctx, coordinator_, barrier_stream_);
}

ServerUnaryReactor* WorkerServiceImpl::GetShard(CallbackServerContext* ctx,
                                                const v1::GetShardRequest* req,
                                                v1::ShardAssignment* resp) {
  return FinishNow(ctx, coordinator_->GetShard(*req), resp);
}

ServerUnaryReactor* WorkerServiceImpl::ReportProgress(
    CallbackServerContext* ctx, const v1::ReportProgressRequest* req,
    v1::ReportProgressResponse*) {
  return FinishNow(ctx, coordinator_->ReportProgress(*req));
}

ServerUnaryReactor* WorkerServiceImpl::CommitCheckpoint(
    CallbackServerContext* ctx, const v1::CommitCheckpointRequest* req,
    v1::CommitCheckpointResponse* resp) {
  return FinishNow(ctx, coordinator_->CommitCheckpoint(*req), resp);
}

ServerUnaryReactor* WorkerServiceImpl::Leave(CallbackServerContext* ctx,
                                             const v1::LeaveRequest* req,
                                             v1::LeaveResponse*) {
  return FinishNow(ctx, coordinator_->Leave(*req));
}

}  // namespace ringleader
