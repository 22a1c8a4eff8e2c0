#include "coordinator/user_service_impl.h"

#include <memory>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "coordinator/reactor_util.h"

namespace ringleader {
namespace {

using grpc::CallbackServerContext;
using grpc::ServerUnaryReactor;

// Streams a job's snapshots. The watcher may run on any thread and may outlive
// the reactor (the job manager calls copies of it outside its lock), so it
// reaches the reactor through a shared cell that OnDone empties.
class WatchReactor final : public grpc::ServerWriteReactor<v1::Job> {
 public:
  WatchReactor(Coordinator* coordinator, std::string job_id)
      : coordinator_(coordinator),
        job_id_(std::move(job_id)),
        cell_(std::make_shared<Cell>()) {
    cell_->reactor = this;
    std::shared_ptr<Cell> cell = cell_;
    absl::StatusOr<uint64_t> token = coordinator_->user_calls().WatchJob(
        job_id_, [cell](const v1::Job& job, uint64_t version) {
          absl::MutexLock lock(&cell->mu);
          if (cell->reactor == nullptr) return;
          // The reactor's cell is this one: tells the lock analysis so.
          cell->reactor->cell_->mu.AssertHeld();
          cell->reactor->Offer(job, version);
        });
    absl::MutexLock lock(&cell_->mu);
    if (!token.ok()) {
      FinishLocked(ToGrpcStatus(token.status()));
      return;
    }
    token_ = *token;
  }

  void OnWriteDone(bool ok) override {
    absl::MutexLock lock(&cell_->mu);
    writing_ = false;
    if (!ok) {  // The client went away.
      FinishLocked(grpc::Status(grpc::StatusCode::CANCELLED, "write failed"));
      return;
    }
    PumpLocked();
  }

  void OnCancel() override {
    absl::MutexLock lock(&cell_->mu);
    FinishLocked(grpc::Status(grpc::StatusCode::CANCELLED, "watch cancelled"));
  }

  void OnDone() override {
    coordinator_->user_calls().UnwatchJob(job_id_, token_);
    {
      absl::MutexLock lock(&cell_->mu);
      cell_->reactor = nullptr;
    }
    delete this;
  }

 private:
  struct Cell {
    absl::Mutex mu;
    WatchReactor* reactor ABSL_GUARDED_BY(mu) = nullptr;
  };

  void Offer(const v1::Job& job, uint64_t version)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(cell_->mu) {
    if (finished_ || (have_version_ && version <= latest_version_)) return;
    have_version_ = true;
    latest_version_ = version;
    pending_ = job;
    PumpLocked();
  }

  void PumpLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(cell_->mu) {
    if (writing_ || finished_) return;
    if (pending_.has_value()) {
      out_ = *std::move(pending_);
      pending_.reset();
      writing_ = true;
      StartWrite(&out_);
      return;
    }
    if (have_version_ && IsTerminal(out_.state())) {
      FinishLocked(grpc::Status::OK);
    }
  }

  void FinishLocked(const grpc::Status& status)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(cell_->mu) {
    if (finished_) return;
    finished_ = true;
    Finish(status);
  }

  Coordinator* const coordinator_;
  const std::string job_id_;
  std::shared_ptr<Cell> cell_;
  uint64_t token_ = 0;
  // All below guarded by cell_->mu.
  bool writing_ = false;
  bool finished_ = false;
  bool have_version_ = false;
  uint64_t latest_version_ = 0;
  std::optional<v1::Job> pending_;
  v1::Job out_;
};

}  // namespace

absl::Status UserServiceImpl::CheckToken(const CallbackServerContext& ctx,
                                         absl::string_view method) const {
  return auth_ == nullptr ? absl::OkStatus() : auth_->Check(ctx, method);
}

ServerUnaryReactor* UserServiceImpl::SubmitJob(CallbackServerContext* ctx,
                                               const v1::SubmitJobRequest* req,
                                               v1::SubmitJobResponse* resp) {
  if (absl::Status s = CheckToken(*ctx, "SubmitJob"); !s.ok()) {
    return FinishNow(ctx, s);
  }
  return FinishNow(ctx, coordinator_->user_calls().SubmitJob(*req), resp);
}

ServerUnaryReactor* UserServiceImpl::GetJob(CallbackServerContext* ctx,
                                            const v1::GetJobRequest* req,
                                            v1::Job* resp) {
  return FinishNow(ctx, coordinator_->user_calls().GetJob(*req), resp);
}

ServerUnaryReactor* UserServiceImpl::ListJobs(CallbackServerContext* ctx,
                                              const v1::ListJobsRequest* req,
                                              v1::ListJobsResponse* resp) {
  return FinishNow(ctx, coordinator_->user_calls().ListJobs(*req), resp);
}

ServerUnaryReactor* UserServiceImpl::CancelJob(CallbackServerContext* ctx,
                                               const v1::CancelJobRequest* req,
                                               v1::Job* resp) {
  if (absl::Status s = CheckToken(*ctx, "CancelJob"); !s.ok()) {
    return FinishNow(ctx, s);
  }
  return FinishNow(ctx, coordinator_->user_calls().CancelJob(*req), resp);
}

ServerUnaryReactor* UserServiceImpl::DeleteJob(CallbackServerContext* ctx,
                                               const v1::DeleteJobRequest* req,
                                               v1::DeleteJobResponse* resp) {
  if (absl::Status s = CheckToken(*ctx, "DeleteJob"); !s.ok()) {
    return FinishNow(ctx, s);
  }
  return FinishNow(ctx, coordinator_->user_calls().DeleteJob(*req), resp);
}

grpc::ServerWriteReactor<v1::Job>* UserServiceImpl::WatchJob(
    CallbackServerContext*, const v1::WatchJobRequest* req) {
  return new WatchReactor(coordinator_, req->job_id());
}

ServerUnaryReactor* UserServiceImpl::ListWorkers(
    CallbackServerContext* ctx, const v1::ListWorkersRequest*,
    v1::ListWorkersResponse* resp) {
  return FinishNow(ctx,
                   absl::StatusOr<v1::ListWorkersResponse>(
                       coordinator_->user_calls().ListWorkers()),
                   resp);
}

}  // namespace ringleader
