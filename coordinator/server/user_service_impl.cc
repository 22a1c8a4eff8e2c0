#include "coordinator/server/user_service_impl.h"

#include "coordinator/server/job_watch_reactor.h"
#include "coordinator/server/reactor_util.h"

namespace ringleader {

using grpc::CallbackServerContext;
using grpc::ServerUnaryReactor;

absl::Status UserServiceImpl::CheckToken(const CallbackServerContext& ctx,
                                         absl::string_view method) const {
  return auth_ == nullptr ? absl::OkStatus() : auth_->Check(ctx, method);
}

template <typename Call, typename Response>
ServerUnaryReactor* UserServiceImpl::Authorized(CallbackServerContext* ctx,
                                                absl::string_view method,
                                                Call&& call,
                                                Response* response) {
  if (absl::Status s = CheckToken(*ctx, method); !s.ok()) {
    return FinishNow(ctx, s);
  }
  return FinishNow(ctx, call(), response);
}

ServerUnaryReactor* UserServiceImpl::SubmitJob(CallbackServerContext* ctx,
                                               const v1::SubmitJobRequest* req,
                                               v1::SubmitJobResponse* resp) {
  return Authorized(
      ctx, "SubmitJob", [&] { return calls().SubmitJob(*req); }, resp);
}

ServerUnaryReactor* UserServiceImpl::GetJob(CallbackServerContext* ctx,
                                            const v1::GetJobRequest* req,
                                            v1::Job* resp) {
  return FinishNow(ctx, calls().GetJob(*req), resp);
}

ServerUnaryReactor* UserServiceImpl::GetJobLogs(
    CallbackServerContext* ctx, const v1::GetJobLogsRequest* req,
    v1::GetJobLogsResponse* resp) {
  return FinishNow(ctx, coordinator_->log_calls().GetJobLogs(*req), resp);
}

ServerUnaryReactor* UserServiceImpl::ListJobs(CallbackServerContext* ctx,
                                              const v1::ListJobsRequest* req,
                                              v1::ListJobsResponse* resp) {
  return FinishNow(ctx, calls().ListJobs(*req), resp);
}

ServerUnaryReactor* UserServiceImpl::CancelJob(CallbackServerContext* ctx,
                                               const v1::CancelJobRequest* req,
                                               v1::Job* resp) {
  return Authorized(
      ctx, "CancelJob", [&] { return calls().CancelJob(*req); }, resp);
}

ServerUnaryReactor* UserServiceImpl::DeleteJob(CallbackServerContext* ctx,
                                               const v1::DeleteJobRequest* req,
                                               v1::DeleteJobResponse* resp) {
  return Authorized(
      ctx, "DeleteJob", [&] { return calls().DeleteJob(*req); }, resp);
}

grpc::ServerWriteReactor<v1::Job>* UserServiceImpl::WatchJob(
    CallbackServerContext*, const v1::WatchJobRequest* req) {
  return NewJobWatchReactor(&calls(), req->job_id());
}

ServerUnaryReactor* UserServiceImpl::ListWorkers(
    CallbackServerContext* ctx, const v1::ListWorkersRequest*,
    v1::ListWorkersResponse* resp) {
  return FinishNow(
      ctx, absl::StatusOr<v1::ListWorkersResponse>(calls().ListWorkers()),
      resp);
}

ServerUnaryReactor* UserServiceImpl::GetJobHistory(
    CallbackServerContext* ctx, const v1::GetJobHistoryRequest* req,
    v1::JobHistoryResponse* resp) {
  return FinishNow(ctx, coordinator_->history_calls().GetJobHistory(*req),
                   resp);
}

}  // namespace ringleader
