#include "coordinator/job_assigner.h"

#include "absl/strings/str_cat.h"
#include "common/job_over.h"
#include "common/quote_for_error.h"
#include "glog/logging.h"

namespace ringleader {
namespace {

void SetAssignment(const v1::Job& job, v1::HeartbeatResponse& out) {
  v1::JobAssignment* a = out.mutable_assignment();
  a->set_job_id(job.job_id());
  *a->mutable_spec() = job.spec();
}

void SetAbort(const std::string& job_id, int64_t generation, bool rejoin,
              std::string reason, v1::HeartbeatResponse& out) {
  v1::GenerationAbort* abort = out.mutable_abort();
  abort->set_job_id(job_id);
  abort->set_generation(generation);
  abort->set_rejoin(rejoin);
  abort->set_reason(std::move(reason));
}

}  // namespace

v1::HeartbeatResponse JobAssigner::Directive(const v1::WorkerInfo& worker,
                                             const v1::HeartbeatRequest& r) {
  if (!worker.job_id().empty()) return AssignedDirective(worker, r);
  if (r.generation() > 0 &&
      !rendezvous_.IsLiveMember(r.job_id(), worker.worker_id())) {
    // It still trains in a generation that goes on without it (it was
    // counted out, registered again, and its job took it no more): it
    // stops, and hears of work at its next heartbeat.
    v1::HeartbeatResponse out;
    SetAbort(
        r.job_id(), r.generation(), /*rejoin=*/false,
        absl::StrCat("worker ", worker.worker_id(), " is not in generation ",
                     r.generation(), " of job ", QuoteForError(r.job_id())),
        out);
    return out;
  }
  return Offer(worker.worker_id());
}

v1::HeartbeatResponse JobAssigner::AssignedDirective(
    const v1::WorkerInfo& worker, const v1::HeartbeatRequest& r) {
  const std::string& job_id = worker.job_id();
  const std::string& worker_id = worker.worker_id();
  absl::StatusOr<JobManager::Outline> job = jobs_.OutlineOf(job_id);
  if (!job.ok() || IsJobOver(job->state)) return Release(worker, r, job);
  v1::HeartbeatResponse out;
  if (r.job_id() != job_id || r.generation() == 0) {
    // Not joined yet (or the first answer was lost): say it again. Not to
    // a member of the live generation (one that sent its final report is
    // done, and the job releases it when it ends; one whose report is
    // still on its way would end its own generation by joining again),
    // nor to one that is waiting already.
    if (!rendezvous_.IsWaiting(job_id, worker_id) &&
        !rendezvous_.IsLiveMember(job_id, worker_id) &&
        !jobs_.WorkerFinished(job_id, worker_id)) {
      // The assignment carries the spec: only here is the record copied.
      if (absl::StatusOr<v1::Job> full = jobs_.Get(job_id); full.ok()) {
        SetAssignment(*full, out);
      }
    }
    return out;
  }
  const absl::Status member =
      rendezvous_.CheckMember(job_id, r.generation(), /*rank=*/0);
  if (absl::IsAborted(member) && !rendezvous_.IsWaiting(job_id, worker_id)) {
    SetAbort(job_id, r.generation(), /*rejoin=*/true,
             std::string(member.message()), out);
  } else if (member.ok() && rendezvous_.IsHeld(job_id) &&
             !rendezvous_.IsWaiting(job_id, worker_id)) {
    // Its generation is being preempted: the stream's notice again, for a
    // member whose watch missed it.
    SetAbort(job_id, r.generation(), /*rejoin=*/true,
             absl::StrCat("generation ", r.generation(), " is being preempted"),
             out);
    out.mutable_abort()->set_preempt_window_ms(
        absl::ToInt64Milliseconds(preempt_window_));
  }
  return out;
}

v1::HeartbeatResponse JobAssigner::Release(
    const v1::WorkerInfo& worker, const v1::HeartbeatRequest& r,
    const absl::StatusOr<JobManager::Outline>& job) {
  // NOT_FOUND only: the worker was removed since its heartbeat found it,
  // and a removed worker serves no job anyway.
  workers_.SetJob(worker.worker_id(), "").IgnoreError();
  Forget(worker.worker_id(), worker.job_id());
  v1::HeartbeatResponse out;
  SetAbort(worker.job_id(), r.generation(), /*rejoin=*/false,
           job.ok() ? absl::StrCat("job is ", v1::JobState_Name(job->state))
                    : "job no longer exists",
           out);
  return out;
}

v1::HeartbeatResponse JobAssigner::Offer(const std::string& worker_id) {
  v1::HeartbeatResponse out;
  for (const v1::Job& job : jobs_.Active()) {
    const Take took = TakeWorker(worker_id, job);
    if (took == Take::kNoRoom) continue;
    if (took == Take::kTaken) SetAssignment(job, out);
    break;
  }
  return out;
}

bool JobAssigner::Finishing(const v1::Job& job) {
  for (const v1::RankProgress& r : job.progress().ranks()) {
    if (r.finished()) return true;
  }
  return false;
}

void JobAssigner::AssignAgain(const std::string& worker_id,
                              const std::string& job_id) {
  absl::StatusOr<v1::Job> job = jobs_.Get(job_id);
  // A job that is over or gone: the worker finds out when it joins.
  if (!job.ok() || IsJobOver(job->state())) return;
  if (!rendezvous_.IsLiveMember(job_id, worker_id)) {
    TakeWorker(worker_id, *job);
    return;
  }
  // Still a member: it is back in its place, whatever the room for
  // newcomers, and the job waits for its final report again.
  if (!workers_.SetJob(worker_id, job_id).ok()) return;
  {
    absl::MutexLock lock(&mu_);
    assigned_[job_id].insert(worker_id);
  }
  if (on_assigned_) on_assigned_(job_id, worker_id);
  if (const int32_t rank = rendezvous_.Returned(job_id, worker_id); rank >= 0) {
    LOG(INFO) << "worker " << worker_id << " (rank " << rank << " of job "
              << job_id << ") is back; its final report counts again";
    // A job that moved on changes nothing and says OK; an error is the
    // job gone meanwhile or its store failing.
    if (absl::Status s = jobs_.RankBack(job_id, job->generation(), rank);
        !s.ok()) {
      LOG(WARNING) << "rank " << rank << " of job " << job_id
                   << " came back, but the job did not record it: " << s;
    }
  }
}

JobAssigner::Take JobAssigner::TakeWorker(const std::string& worker_id,
                                          const v1::Job& job) {
  // A generation that trained to its last step (or some rank of which
  // finished) is ending: a worker it took now would only find the job over
  // when it joins.
  if (Finishing(job) ||
      rendezvous_.StageOf(job.job_id()) != Rendezvous::Stage::kTraining) {
    return Take::kNoRoom;
  }
  {
    absl::MutexLock lock(&mu_);
    auto& set = assigned_[job.job_id()];
    if (static_cast<int32_t>(set.size()) >= job.spec().max_workers()) {
      return Take::kNoRoom;
    }
    if (!workers_.SetJob(worker_id, job.job_id()).ok())
      return Take::kWorkerGone;
    set.insert(worker_id);
  }
  if (on_assigned_) on_assigned_(job.job_id(), worker_id);
  return Take::kTaken;
}

void JobAssigner::Adopt(const std::string& job_id,
                        const std::vector<std::string>& worker_ids) {
  {
    absl::MutexLock lock(&mu_);
    assigned_[job_id].insert(worker_ids.begin(), worker_ids.end());
  }
  if (!on_assigned_) return;
  for (const std::string& worker_id : worker_ids)
    on_assigned_(job_id, worker_id);
}

void JobAssigner::Forget(const std::string& worker_id,
                         const std::string& job_id) {
  absl::MutexLock lock(&mu_);
  auto it = assigned_.find(job_id);
  if (it == assigned_.end()) return;
  it->second.erase(worker_id);
  if (it->second.empty()) assigned_.erase(it);
}

}  // namespace ringleader
