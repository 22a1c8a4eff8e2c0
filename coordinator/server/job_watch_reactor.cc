#include "coordinator/server/job_watch_reactor.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/grpc_status.h"
#include "common/job_over.h"

namespace ringleader {
namespace {

// Streams a job's snapshots. The watcher may run on any thread and may outlive
// the reactor (the job manager calls copies of it outside its lock), so it
// reaches the reactor through a shared cell that OnDone empties.
class JobWatchReactor final : public grpc::ServerWriteReactor<v1::Job> {
 public:
  JobWatchReactor(UserCalls* calls, std::string job_id)
      : calls_(calls),
        job_id_(std::move(job_id)),
        cell_(std::make_shared<Cell>()) {
    cell_->reactor = this;
    std::shared_ptr<Cell> cell = cell_;
    absl::StatusOr<uint64_t> token =
        calls_->WatchJob(job_id_, [cell](const v1::Job& job, uint64_t version) {
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
    calls_->UnwatchJob(job_id_, token_);
    {
      absl::MutexLock lock(&cell_->mu);
      cell_->reactor = nullptr;
    }
    delete this;
  }

 private:
  struct Cell {
    absl::Mutex mu;
    JobWatchReactor* reactor ABSL_GUARDED_BY(mu) = nullptr;
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
    if (have_version_ && IsJobOver(out_.state())) {
      FinishLocked(grpc::Status::OK);
    }
  }

  void FinishLocked(const grpc::Status& status)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(cell_->mu) {
    if (finished_) return;
    finished_ = true;
    Finish(status);
  }

  UserCalls* const calls_;
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

grpc::ServerWriteReactor<v1::Job>* NewJobWatchReactor(UserCalls* calls,
                                                      std::string job_id) {
  return new JobWatchReactor(calls, std::move(job_id));
}

}  // namespace ringleader
