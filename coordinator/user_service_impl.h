#ifndef RINGLEADER_COORDINATOR_USER_SERVICE_IMPL_H_
#define RINGLEADER_COORDINATOR_USER_SERVICE_IMPL_H_

#include "coordinator/coordinator.h"
#include "ringleader/v1/user_service.grpc.pb.h"

namespace ringleader {

// gRPC adapter of UserService (callback API). WatchJob is a write reactor fed
// by the job manager's watcher: it always sends the newest snapshot and never
// queues more than one. Thread-safe.
class UserServiceImpl final : public v1::UserService::CallbackService {
 public:
  explicit UserServiceImpl(Coordinator* coordinator)
      : coordinator_(coordinator) {}

  grpc::ServerUnaryReactor* SubmitJob(grpc::CallbackServerContext* ctx,
                                      const v1::SubmitJobRequest* req,
                                      v1::SubmitJobResponse* resp) override;
  grpc::ServerUnaryReactor* GetJob(grpc::CallbackServerContext* ctx,
                                   const v1::GetJobRequest* req,
                                   v1::Job* resp) override;
  grpc::ServerUnaryReactor* ListJobs(grpc::CallbackServerContext* ctx,
                                     const v1::ListJobsRequest* req,
                                     v1::ListJobsResponse* resp) override;
  grpc::ServerUnaryReactor* CancelJob(grpc::CallbackServerContext* ctx,
                                      const v1::CancelJobRequest* req,
                                      v1::Job* resp) override;
  grpc::ServerWriteReactor<v1::Job>* WatchJob(
      grpc::CallbackServerContext* ctx,
      const v1::WatchJobRequest* req) override;
  grpc::ServerUnaryReactor* ListWorkers(grpc::CallbackServerContext* ctx,
                                        const v1::ListWorkersRequest* req,
                                        v1::ListWorkersResponse* resp) override;

 private:
  Coordinator* const coordinator_;
};

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_USER_SERVICE_IMPL_H_
