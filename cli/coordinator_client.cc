#include "cli/coordinator_client.h"

#include <chrono>
#include <utility>

#include "cli/rpc_error.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"

namespace ringleader::cli {

CoordinatorClient::CoordinatorClient(std::string address,
                                     absl::Duration timeout, Security security)
    : address_(std::move(address)),
      timeout_(timeout),
      token_(std::move(security.token)),
      channel_(grpc::CreateChannel(address_,
                                   security.credentials != nullptr
                                       ? security.credentials
                                       : grpc::InsecureChannelCredentials())),
      stub_(v1::UserService::NewStub(channel_)) {}

void CoordinatorClient::AddToken(grpc::ClientContext& ctx) const {
  // As metadata rather than call credentials, which gRPC sends only over
  // TLS: a token-protected coordinator on loopback without TLS works too.
  if (!token_.empty()) ctx.AddMetadata("authorization", "Bearer " + token_);
}

std::unique_ptr<grpc::ClientContext> CoordinatorClient::NewContext() const {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(absl::ToChronoTime(absl::Now() + timeout_));
  AddToken(*ctx);
  return ctx;
}

absl::Status CoordinatorClient::Convert(const grpc::Status& status) const {
  RpcCallInfo call;
  call.address = address_;
  call.timeout = timeout_;
  call.connected =
      channel_->GetState(/*try_to_connect=*/false) == GRPC_CHANNEL_READY;
  return RpcErrorToStatus(status, call);
}

template <typename Request, typename Response>
absl::StatusOr<Response> CoordinatorClient::Call(
    grpc::Status (v1::UserService::Stub::*method)(grpc::ClientContext*,
                                                  const Request&, Response*),
    const Request& request) {
  Response response;
  auto ctx = NewContext();
  if (absl::Status s =
          Convert((stub_.get()->*method)(ctx.get(), request, &response));
      !s.ok()) {
    return s;
  }
  return response;
}

absl::StatusOr<std::string> CoordinatorClient::SubmitJob(
    const v1::JobSpec& spec) {
  v1::SubmitJobRequest req;
  *req.mutable_spec() = spec;
  absl::StatusOr<v1::SubmitJobResponse> resp =
      Call(&v1::UserService::Stub::SubmitJob, req);
  if (!resp.ok()) return resp.status();
  return resp->job_id();
}

absl::StatusOr<v1::Job> CoordinatorClient::GetJob(const std::string& job_id) {
  v1::GetJobRequest req;
  req.set_job_id(job_id);
  return Call(&v1::UserService::Stub::GetJob, req);
}

absl::StatusOr<v1::ListJobsResponse> CoordinatorClient::ListJobs(
    const std::vector<v1::JobState>& states, int32_t page_size,
    const std::string& page_token) {
  v1::ListJobsRequest req;
  for (v1::JobState s : states) req.add_states(s);
  req.set_page_size(page_size);
  req.set_page_token(page_token);
  return Call(&v1::UserService::Stub::ListJobs, req);
}

absl::StatusOr<v1::Job> CoordinatorClient::CancelJob(
    const std::string& job_id) {
  v1::CancelJobRequest req;
  req.set_job_id(job_id);
  return Call(&v1::UserService::Stub::CancelJob, req);
}

absl::StatusOr<v1::GetJobLogsResponse> CoordinatorClient::GetJobLogs(
    const v1::GetJobLogsRequest& request) {
  return Call(&v1::UserService::Stub::GetJobLogs, request);
}

absl::Status CoordinatorClient::DeleteJob(const std::string& job_id) {
  v1::DeleteJobRequest req;
  req.set_job_id(job_id);
  return Call(&v1::UserService::Stub::DeleteJob, req).status();
}

absl::StatusOr<v1::ListWorkersResponse> CoordinatorClient::ListWorkers() {
  return Call(&v1::UserService::Stub::ListWorkers, v1::ListWorkersRequest());
}

absl::StatusOr<v1::JobHistoryResponse> CoordinatorClient::GetJobHistory(
    const std::string& job_id) {
  v1::GetJobHistoryRequest req;
  req.set_job_id(job_id);
  return Call(&v1::UserService::Stub::GetJobHistory, req);
}

absl::Status CoordinatorClient::WatchJob(
    const std::string& job_id,
    const std::function<void(const v1::Job&)>& on_job) {
  if (absl::StatusOr<v1::Job> probe = GetJob(job_id); !probe.ok()) {
    return probe.status();
  }
  grpc::ClientContext ctx;  // No deadline: the job decides how long.
  AddToken(ctx);
  v1::WatchJobRequest req;
  req.set_job_id(job_id);
  std::unique_ptr<grpc::ClientReader<v1::Job>> reader =
      stub_->WatchJob(&ctx, req);
  v1::Job job;
  // Bounded by the stream: the coordinator ends it when the job is final.
  while (reader->Read(&job)) on_job(job);
  return Convert(reader->Finish());
}

}  // namespace ringleader::cli
