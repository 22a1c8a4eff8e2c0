#ifndef RINGLEADER_CLI_COORDINATOR_CLIENT_H_
#define RINGLEADER_CLI_COORDINATOR_CLIENT_H_

// ringctl's side of UserService: a synchronous stub that puts the --timeout
// deadline on every unary call and turns failures into one-line statuses
// (cli/rpc_error.h). Thread-compatible: one command uses it at a time.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "grpcpp/channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/status.h"
#include "ringleader/v1/user_service.grpc.pb.h"

namespace ringleader::cli {

class CoordinatorClient {
 public:
  struct Security {
    // Of the channel; null: insecure.
    std::shared_ptr<grpc::ChannelCredentials> credentials;
    // Sent as "authorization: Bearer <token>" on every call; empty: none.
    std::string token;
  };

  // Connects lazily, on the first call.
  CoordinatorClient(std::string address, absl::Duration timeout,
                    Security security = {});

  absl::StatusOr<std::string> SubmitJob(const v1::JobSpec& spec);
  absl::StatusOr<v1::Job> GetJob(const std::string& job_id);
  // One page of job summaries. Empty `states`: every job; `page_size` 0:
  // the coordinator's default; empty `page_token`: the first page.
  absl::StatusOr<v1::ListJobsResponse> ListJobs(
      const std::vector<v1::JobState>& states, int32_t page_size = 0,
      const std::string& page_token = "");
  absl::StatusOr<v1::Job> CancelJob(const std::string& job_id);
  absl::Status DeleteJob(const std::string& job_id);
  absl::StatusOr<v1::ListWorkersResponse> ListWorkers();
  absl::StatusOr<v1::GetJobLogsResponse> GetJobLogs(
      const v1::GetJobLogsRequest& request);
  absl::StatusOr<v1::JobHistoryResponse> GetJobHistory(
      const std::string& job_id);

  // Calls `on_job` with each snapshot of the job until the coordinator ends
  // the stream (it does when the job is final). A GetJob under the deadline
  // goes first, so an unreachable coordinator or an unknown job fails within
  // the timeout; the stream itself has no deadline, a job may run for days.
  // OK when the stream ended normally.
  absl::Status WatchJob(const std::string& job_id,
                        const std::function<void(const v1::Job&)>& on_job);

  const std::string& address() const { return address_; }

 private:
  // A context whose deadline is now + timeout_.
  std::unique_ptr<grpc::ClientContext> NewContext() const;
  absl::Status Convert(const grpc::Status& status) const;
  // One unary call of the stub's `method` under the deadline: its response,
  // or the failure in words.
  template <typename Request, typename Response>
  absl::StatusOr<Response> Call(
      grpc::Status (v1::UserService::Stub::*method)(grpc::ClientContext*,
                                                    const Request&, Response*),
      const Request& request);

  void AddToken(grpc::ClientContext& ctx) const;

  const std::string address_;
  const absl::Duration timeout_;
  const std::string token_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::UserService::Stub> stub_;
};

}  // namespace ringleader::cli

#endif  // RINGLEADER_CLI_COORDINATOR_CLIENT_H_
