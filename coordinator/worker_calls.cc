#include "coordinator/worker_calls.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "common/quote_for_error.h"
#include "glog/logging.h"

namespace ringleader {

absl::StatusOr<v1::RegisterResponse> WorkerCalls::Register(
    const Caller& caller, const v1::RegisterRequest& r) {
  // A process registering again carries its previous credential: the same
  // process keeps its worker id (WorkerRegistry::Register).
  std::optional<WorkerRegistry::Credential> previous;
  if (caller.tokens.size() == 1) previous.emplace(*caller.tokens.begin());
  absl::StatusOr<WorkerRegistry::Registration> reg = workers_.Register(
      r, caller.peer_identity, previous ? &*previous : nullptr);
  if (!reg.ok()) return reg.status();
  if (reg->kept_id) {
    LOG(INFO) << "worker " << reg->response.worker_id() << " on "
              << r.hostname() << " registered again (same process)";
  }
  for (const v1::WorkerInfo& old : reg->replaced) {
    hooks_.gone(
        old, absl::StrCat("worker ", old.worker_id(), " registered again as ",
                          reg->response.worker_id()));
  }
  if (!r.resume_job_id().empty()) {
    assigner_.AssignAgain(reg->response.worker_id(), r.resume_job_id());
  }
  return reg->response;
}

absl::StatusOr<v1::HeartbeatResponse> WorkerCalls::Heartbeat(
    const Caller& caller, const v1::HeartbeatRequest& r) {
  if (absl::Status s = RequireWorkerId(r.worker_id()); !s.ok()) return s;
  if (absl::Status s = checks_.CheckWorker(caller, r.worker_id()); !s.ok()) {
    return s;
  }
  if (r.generation() < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("heartbeat: generation must be >= 0 (0: not joined), got ",
                     r.generation()));
  }
  absl::StatusOr<v1::WorkerInfo> worker = workers_.Heartbeat(r.worker_id());
  if (!worker.ok()) return worker.status();
  connections_.Heard(r.worker_id(), caller.peer_address, clock_->Now());
  NoteHeard(*worker, r);
  v1::HeartbeatResponse out = assigner_.Directive(*worker, r);
  out.set_lease_ms(absl::ToInt64Milliseconds(lease_));
  return out;
}

void WorkerCalls::NoteHeard(const v1::WorkerInfo& worker,
                            const v1::HeartbeatRequest& r) {
  if (r.job_id() == worker.job_id() && r.generation() > 0) {
    liveness_.Heard(
        r.worker_id(), r.generation(), r.step(), clock_->Now(),
        absl::Milliseconds(std::max<int64_t>(r.collective_wait_ms(), 0)));
    stalls_.Heard(r, clock_->Now());
    hooks_.step_heard(r.job_id(), r.generation(), r.worker_id(), r.step(),
                      /*total_steps=*/0);
  } else if (!worker.job_id().empty() &&
             rendezvous_.IsLiveMember(worker.job_id(), r.worker_id())) {
    // A member done with its part (it sent its final report and went
    // idle) still shows that our link to the generation's hosts works: a
    // peer silent meanwhile is judged as one silent among heard ones.
    liveness_.Heard(r.worker_id(), rendezvous_.LastGeneration(worker.job_id()),
                    /*step=*/0, clock_->Now());
  }
}

absl::Status WorkerCalls::Leave(const Caller& caller,
                                const v1::LeaveRequest& r) {
  if (absl::Status s = RequireWorkerId(r.worker_id()); !s.ok()) return s;
  if (absl::Status s = checks_.CheckWorker(caller, r.worker_id()); !s.ok()) {
    return s;
  }
  absl::StatusOr<v1::WorkerInfo> gone = workers_.Remove(r.worker_id());
  if (!gone.ok()) return gone.status();
  hooks_.gone(*gone,
              absl::StrCat("worker ", QuoteForError(r.worker_id()), " left",
                           r.reason().empty() ? "" : ": ", r.reason()));
  return absl::OkStatus();
}

}  // namespace ringleader
