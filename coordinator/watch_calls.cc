#include "coordinator/watch_calls.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/quote_for_error.h"

namespace ringleader {
namespace {

// Checked as the heartbeat checks its request.
absl::Status CheckWatchRequest(const v1::WatchGenerationRequest& r) {
  if (absl::Status s = RequireWorkerId(r.worker_id()); !s.ok()) return s;
  if (absl::Status s = RequireJobId(r.job_id()); !s.ok()) return s;
  if (r.generation() < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("WatchGeneration: generation must be >= 1 (from "
                     "JoinRendezvous), got ",
                     r.generation()));
  }
  return absl::OkStatus();
}

}  // namespace

void WatchCalls::Start() { serving_ = true; }

void WatchCalls::Stop(const absl::Status& status) {
  serving_ = false;
  watchers_.CloseAll(status);
}

absl::Status WatchCalls::CheckWatch(const Caller& caller,
                                    const v1::WatchGenerationRequest& r) const {
  if (absl::Status s = CheckWatchRequest(r); !s.ok()) return s;
  if (absl::Status s = checks_.CheckWorker(caller, r.worker_id()); !s.ok()) {
    return s;
  }
  absl::StatusOr<v1::WorkerInfo> worker = workers_.Get(r.worker_id());
  if (!worker.ok()) return worker.status();
  if (worker->job_id() != r.job_id()) {
    return absl::FailedPreconditionError(
        absl::StrCat("worker ", QuoteForError(r.worker_id()),
                     " is not assigned to job ", QuoteForError(r.job_id())));
  }
  // A generation that has not formed is refused (one that ended is
  // answered by the watch).
  const absl::Status formed =
      rendezvous_.CheckMember(r.job_id(), r.generation(), /*rank=*/0);
  if (absl::IsFailedPrecondition(formed)) return formed;
  return absl::OkStatus();
}

Canceller WatchCalls::WatchGeneration(const Caller& caller,
                                      const v1::WatchGenerationRequest& r,
                                      GenerationWatchers::Answer answer) {
  if (!options_.push_generation_end) {
    return Refuse(
        answer,
        absl::UnimplementedError(
            "WatchGeneration is off on this coordinator (--push_generation_end"
            "=false): heartbeats carry the generation's end"));
  }
  if (absl::Status s = CheckWatch(caller, r); !s.ok()) {
    return Refuse(answer, s);
  }
  const uint64_t id = watchers_.Watch(r.worker_id(), r.job_id(), r.generation(),
                                      std::move(answer));
  // Registered first, checked second: an end after the check finds the
  // watch; one before it is seen here (the rendezvous changes its state
  // before it calls the hook that pushes, and closes a finished job before
  // JobFinished).
  const absl::Status live = rendezvous_.CheckMember(r.job_id(), r.generation(),
                                                    /*rank=*/0);
  if (absl::IsAborted(live)) {
    // Worded as the end hook words it (Coordinator::EndGeneration), which
    // this answer may have overtaken.
    const std::string why = rendezvous_.EndReason(r.job_id(), r.generation());
    watchers_.Ended(r.job_id(), r.generation(),
                    why.empty() ? std::string(live.message())
                                : absl::StrCat("generation ", r.generation(),
                                               " ended: ", why),
                    /*rejoin=*/true);
  } else if (absl::IsNotFound(live)) {
    absl::StatusOr<v1::Job> job = jobs_.Get(r.job_id());
    watchers_.JobFinished(
        r.job_id(),
        job.ok() ? absl::StrCat("job is ", v1::JobState_Name(job->state()))
                 : "job no longer exists");
  }
  return [this, worker_id = r.worker_id(), id] {
    watchers_.Unwatch(worker_id, id);
  };
}

bool WatchCalls::ProcessExited(const Caller& caller,
                               const v1::WatchGenerationRequest& r) const {
  // Evidence only while the worker is heard, and only over this
  // connection: a kill -9 closes the stream within a heartbeat of the last
  // one. A stream that breaks after the worker went silent is a partition
  // or a stopped process that the server's TCP timeout (20 s by default)
  // gave up on; one whose worker also heartbeats over another connection
  // lately went through a partition and replaced its channel. The lease
  // and the liveness verdict judge those.
  if (!connections_.OnlyOver(r.worker_id(), caller.peer_address, clock_->Now(),
                             options_.lease)) {
    return false;
  }
  // A stream that outlived its generation's end, or of a worker that has
  // joined again since, says nothing about the worker now.
  if (!rendezvous_.CountsOn(r.job_id(), r.generation(), r.worker_id())) {
    return false;
  }
  // Done with the job: its peers only finish their evaluation.
  return !jobs_.WorkerFinished(r.job_id(), r.worker_id());
}

void WatchCalls::WatchBroken(const Caller& caller,
                             const v1::WatchGenerationRequest& r) {
  if (!serving_) return;  // Stopping: the server cancels every call.
  if (!ProcessExited(caller, r)) return;
  // As if it had left: a worker that is alive after all finds its
  // registration gone at its next heartbeat and registers again.
  absl::StatusOr<v1::WorkerInfo> gone = workers_.Remove(r.worker_id());
  if (!gone.ok()) return;
  gone_(*gone,
        absl::StrCat("worker ", gone->worker_id(), " on ", gone->hostname(),
                     " closed its connection to the "
                     "coordinator (its process exited)"));
}

}  // namespace ringleader
