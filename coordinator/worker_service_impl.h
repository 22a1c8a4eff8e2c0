#ifndef RINGLEADER_COORDINATOR_WORKER_SERVICE_IMPL_H_
#define RINGLEADER_COORDINATOR_WORKER_SERVICE_IMPL_H_

#include "coordinator/coordinator.h"
#include "ringleader/v1/worker_service.grpc.pb.h"

namespace ringleader {

// gRPC adapter of WorkerService (callback API): translates and delegates to
// Coordinator, nothing else. Blocking calls finish from the coordinator's
// callbacks, so a waiting call holds no thread. Thread-safe.
class WorkerServiceImpl final : public v1::WorkerService::CallbackService {
 public:
  explicit WorkerServiceImpl(Coordinator* coordinator)
      : coordinator_(coordinator) {}

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

 private:
  Coordinator* const coordinator_;
};

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_WORKER_SERVICE_IMPL_H_
