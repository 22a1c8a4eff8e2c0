#ifndef RINGLEADER_COORDINATOR_SERVER_WORKER_SERVICE_IMPL_H_
#define RINGLEADER_COORDINATOR_SERVER_WORKER_SERVICE_IMPL_H_

#include "coordinator/coordinator.h"
#include "coordinator/server/barrier_outbox.h"
#include "ringleader/v1/worker_service.grpc.pb.h"

namespace ringleader {

// Every method on the callback API, BarrierStream as raw bytes: the stream's
// reactor parses each arrival itself, so bytes that are no BarrierArrivals get
// INVALID_ARGUMENT instead of looking like the client's half-close. (A method
// missing here would fall back to the generated UNIMPLEMENTED.)
namespace worker_service_internal {
using WS = v1::WorkerService;
using Base = WS::WithCallbackMethod_Register<WS::WithCallbackMethod_Heartbeat<
    WS::WithCallbackMethod_JoinRendezvous<WS::WithCallbackMethod_KvSet<
        WS::WithCallbackMethod_KvGet<WS::WithCallbackMethod_KvWait<
            WS::WithCallbackMethod_KvAdd<WS::WithCallbackMethod_PublishNcclId<
                WS::WithCallbackMethod_FetchNcclId<WS::WithCallbackMethod_Barrier<
                    WS::WithRawCallbackMethod_BarrierStream<
                        WS::WithCallbackMethod_GetShard<
                            WS::WithCallbackMethod_ReportProgress<
                                WS::WithCallbackMethod_CommitCheckpoint<
                                    WS::WithCallbackMethod_Leave<
                                        WS::WithCallbackMethod_Preempt<
                                            WS::WithCallbackMethod_WatchGeneration<
                                                WS::WithCallbackMethod_AppendLogs<
                                                    WS::Service>>>>>>>>>>>>>>>>>>;
}  // namespace worker_service_internal

// gRPC adapter of WorkerService (callback API): translates and delegates to
// Coordinator, nothing else. Blocking calls finish from the coordinator's
// callbacks, so a waiting call holds no thread. Thread-safe.
class WorkerServiceImpl final : public worker_service_internal::Base {
 public:
  // `barrier_stream` bounds each BarrierStream call (its messages must fit
  // the server's send limit).
  explicit WorkerServiceImpl(Coordinator* coordinator,
                             BarrierOutbox::Limits barrier_stream = {})
      : coordinator_(coordinator), barrier_stream_(barrier_stream) {}

  grpc::ServerUnaryReactor* Register(grpc::CallbackServerContext* ctx,
                                     const v1::RegisterRequest* req,
                                     v1::RegisterResponse* resp) override;
  grpc::ServerUnaryReactor* Heartbeat(grpc::CallbackServerContext* ctx,
                                      const v1::HeartbeatRequest* req,
                                      v1::HeartbeatResponse* resp) override;
  grpc::ServerUnaryReactor* JoinRendezvous(
      grpc::CallbackServerContext* ctx, const v1::JoinRendezvousRequest* req,
      v1::JoinRendezvousResponse* resp) override;
  grpc::ServerUnaryReactor* KvSet(grpc::CallbackServerContext* ctx,
                                  const v1::KvSetRequest* req,
                                  v1::KvSetResponse* resp) override;
  grpc::ServerUnaryReactor* KvGet(grpc::CallbackServerContext* ctx,
                                  const v1::KvGetRequest* req,
                                  v1::KvGetResponse* resp) override;
  grpc::ServerUnaryReactor* KvWait(grpc::CallbackServerContext* ctx,
                                   const v1::KvWaitRequest* req,
                                   v1::KvWaitResponse* resp) override;
  grpc::ServerUnaryReactor* KvAdd(grpc::CallbackServerContext* ctx,
                                  const v1::KvAddRequest* req,
                                  v1::KvAddResponse* resp) override;
  grpc::ServerUnaryReactor* PublishNcclId(
      grpc::CallbackServerContext* ctx, const v1::PublishNcclIdRequest* req,
      v1::PublishNcclIdResponse* resp) override;
  grpc::ServerUnaryReactor* FetchNcclId(grpc::CallbackServerContext* ctx,
                                        const v1::FetchNcclIdRequest* req,
                                        v1::FetchNcclIdResponse* resp) override;
  grpc::ServerUnaryReactor* Barrier(grpc::CallbackServerContext* ctx,
                                    const v1::BarrierRequest* req,
                                    v1::BarrierResponse* resp) override;
  grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* BarrierStream(
      grpc::CallbackServerContext* ctx) override;
  grpc::ServerUnaryReactor* GetShard(grpc::CallbackServerContext* ctx,
                                     const v1::GetShardRequest* req,
                                     v1::ShardAssignment* resp) override;
  grpc::ServerUnaryReactor* ReportProgress(
      grpc::CallbackServerContext* ctx, const v1::ReportProgressRequest* req,
      v1::ReportProgressResponse* resp) override;
  grpc::ServerUnaryReactor* CommitCheckpoint(
      grpc::CallbackServerContext* ctx, const v1::CommitCheckpointRequest* req,
      v1::CommitCheckpointResponse* resp) override;
  grpc::ServerUnaryReactor* Leave(grpc::CallbackServerContext* ctx,
                                  const v1::LeaveRequest* req,
                                  v1::LeaveResponse* resp) override;
  grpc::ServerUnaryReactor* Preempt(grpc::CallbackServerContext* ctx,
                                    const v1::PreemptRequest* req,
                                    v1::PreemptResponse* resp) override;
  grpc::ServerUnaryReactor* AppendLogs(grpc::CallbackServerContext* ctx,
                                       const v1::AppendLogsRequest* req,
                                       v1::AppendLogsResponse* resp) override;
  grpc::ServerWriteReactor<v1::GenerationEvent>* WatchGeneration(
      grpc::CallbackServerContext* ctx,
      const v1::WatchGenerationRequest* req) override;

 private:
  Coordinator* const coordinator_;
  const BarrierOutbox::Limits barrier_stream_;
};

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_SERVER_WORKER_SERVICE_IMPL_H_
