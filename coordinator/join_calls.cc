#include "coordinator/join_calls.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/job_over.h"
#include "common/quote_for_error.h"

namespace ringleader {

absl::StatusOr<v1::WorkerInfo> JoinCalls::CheckJoin(
    const Caller& caller, const v1::JoinRendezvousRequest& r) {
  if (absl::Status s = RequireJobId(r.job_id()); !s.ok()) return s;
  if (absl::Status s = RequireWorkerId(r.worker_id()); !s.ok()) return s;
  if (absl::Status s = checks_.CheckWorker(caller, r.worker_id()); !s.ok()) {
    return s;
  }
  absl::StatusOr<v1::WorkerInfo> worker = workers_.Get(r.worker_id());
  if (!worker.ok()) return worker.status();
  absl::StatusOr<v1::Job> job = jobs_.Get(r.job_id());
  if (!job.ok()) return job.status();
  // First: a worker counted out of a job that ended meanwhile was let go of
  // it too, and what it needs to hear is how the job ended.
  if (IsJobOver(job->state())) {
    return JobOverError(QuoteForError(r.job_id()), job->state());
  }
  if (worker->job_id() != r.job_id()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "worker ", QuoteForError(r.worker_id()), " is not assigned to job ",
        QuoteForError(r.job_id()), "; wait for an assignment in a heartbeat"));
  }
  if (absl::Status s = jobs_.OnJoin(r.job_id()); !s.ok()) return s;
  return worker;
}

Canceller JoinCalls::JoinRendezvous(const Caller& caller,
                                    const v1::JoinRendezvousRequest& r,
                                    Reply<v1::JoinRendezvousResponse> done) {
  absl::StatusOr<v1::WorkerInfo> worker = CheckJoin(caller, r);
  if (!worker.ok()) return Refuse(done, worker.status());
  Rendezvous::Member member;
  member.worker_id = worker->worker_id();
  member.hostname = worker->hostname();
  member.address = worker->address();
  member.keeps_state = r.keeps_state();
  const std::string worker_id = worker->worker_id();
  const uint64_t waiter = rendezvous_.Join(
      r.job_id(), member, limits_.Deadline(clock_->Now(), r.timeout_ms()),
      [this, job_id = r.job_id(), worker_id,
       include_members = r.include_members(), done = std::move(done)](
          const absl::StatusOr<Rendezvous::Generation>& gen) {
        if (!gen.ok()) return done(gen.status());
        done(Answer(job_id, worker_id, include_members, *gen));
      });
  if (waiter == 0) return nullptr;
  GrowForNewcomer(r.job_id());
  return [this, job_id = r.job_id(), worker_id, waiter] {
    rendezvous_.CancelJoin(job_id, worker_id, waiter);
  };
}

absl::StatusOr<v1::JoinRendezvousResponse> JoinCalls::Answer(
    const std::string& job_id, const std::string& worker_id,
    bool include_members, const Rendezvous::Generation& gen) const {
  v1::JoinRendezvousResponse out;
  out.set_generation(gen.number);
  out.set_world_size(static_cast<int32_t>(gen.members.size()));
  std::string host;
  for (const Rendezvous::Member& m : gen.members) {
    if (m.worker_id == worker_id) host = m.hostname;
  }
  for (const Rendezvous::Member& m : gen.members) {
    // The ranks sharing the worker's CPUs (its loader threads' share).
    if (m.hostname == host) out.set_host_ranks(out.host_ranks() + 1);
    if (m.worker_id == worker_id) out.set_rank(m.rank);
    // Every member list in every response is O(n^2) bytes for the
    // rendezvous: only for callers that ask.
    if (!include_members) continue;
    v1::RendezvousMember* pm = out.add_members();
    pm->set_rank(m.rank);
    pm->set_worker_id(m.worker_id);
    pm->set_hostname(m.hostname);
    pm->set_address(m.address);
  }
  absl::StatusOr<v1::Job> job = jobs_.Get(job_id);
  if (!job.ok()) return job.status();
  *out.mutable_spec() = job->spec();
  out.set_job_restarts(job->restarts());
  std::vector<v1::CheckpointRecord> offer = facts_.Offer(job_id, gen.number);
  if (!offer.empty()) *out.mutable_resume_from() = offer[0];
  for (v1::CheckpointRecord& c : offer) {
    *out.add_resume_candidates() = std::move(c);
  }
  return out;
}

void JoinCalls::GrowForNewcomer(const std::string& job_id) {
  const int64_t live = rendezvous_.GrowableKeepingState(job_id);
  if (live == 0) return;  // Its next checkpoint commit takes the newcomer.
  absl::StatusOr<v1::Job> job = jobs_.Get(job_id);
  // Once training is over only the final evaluation is left.
  if (!job.ok() || (job->progress().total_steps() > 0 &&
                    job->progress().step() >= job->progress().total_steps())) {
    return;
  }
  rendezvous_.Grow(job_id, live);
}

}  // namespace ringleader
