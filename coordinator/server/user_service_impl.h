#ifndef RINGLEADER_COORDINATOR_SERVER_USER_SERVICE_IMPL_H_
#define RINGLEADER_COORDINATOR_SERVER_USER_SERVICE_IMPL_H_

#include "coordinator/coordinator.h"
#include "coordinator/server/call_auth.h"
#include "ringleader/v1/user_service.grpc.pb.h"

namespace ringleader {

// gRPC adapter of UserService (callback API): translates and delegates to
// the coordinator's UserCalls. WatchJob is a write reactor fed by the job
// manager's watcher (coordinator/server/job_watch_reactor.h). Thread-safe.
class UserServiceImpl final : public v1::UserService::CallbackService {
 public:
  // `auth` (may be null: no token needed) must outlive the service; it
  // checks the calls that change state (coordinator/server/call_auth.h).
  explicit UserServiceImpl(Coordinator* coordinator,
                           const BearerTokenCheck* auth = nullptr)
      : coordinator_(coordinator), auth_(auth) {}

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
  grpc::ServerUnaryReactor* DeleteJob(grpc::CallbackServerContext* ctx,
                                      const v1::DeleteJobRequest* req,
                                      v1::DeleteJobResponse* resp) override;
  grpc::ServerWriteReactor<v1::Job>* WatchJob(
      grpc::CallbackServerContext* ctx,
      const v1::WatchJobRequest* req) override;
  grpc::ServerUnaryReactor* ListWorkers(grpc::CallbackServerContext* ctx,
                                        const v1::ListWorkersRequest* req,
                                        v1::ListWorkersResponse* resp) override;
  // Read-only, like GetJob: no token needed.
  grpc::ServerUnaryReactor* GetJobLogs(grpc::CallbackServerContext* ctx,
                                       const v1::GetJobLogsRequest* req,
                                       v1::GetJobLogsResponse* resp) override;
  grpc::ServerUnaryReactor* GetJobHistory(
      grpc::CallbackServerContext* ctx, const v1::GetJobHistoryRequest* req,
      v1::JobHistoryResponse* resp) override;

 private:
  absl::Status CheckToken(const grpc::CallbackServerContext& ctx,
                          absl::string_view method) const;
  // Answers a call that changes state with `call()`, once its bearer token
  // is checked.
  template <typename Call, typename Response>
  grpc::ServerUnaryReactor* Authorized(grpc::CallbackServerContext* ctx,
                                       absl::string_view method, Call&& call,
                                       Response* response);
  UserCalls& calls() { return coordinator_->user_calls(); }

  Coordinator* const coordinator_;
  const BearerTokenCheck* const auth_;
};

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_SERVER_USER_SERVICE_IMPL_H_
