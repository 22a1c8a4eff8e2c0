#ifndef RINGLEADER_COORDINATOR_WATCH_CALLS_H_
#define RINGLEADER_COORDINATOR_WATCH_CALLS_H_

// WatchGeneration: a member hears the moment its generation ends
// (GenerationWatchers), instead of at its next heartbeat. And the close of
// such a stream before the coordinator ended it, which is evidence that the
// worker's process exited (docs/design-notes.md, "A closed connection is a
// death certificate"; judged as "Verdicts after a heal" says).

#include <atomic>
#include <utility>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "coordinator/caller.h"
#include "coordinator/caller_checks.h"
#include "coordinator/generation_watchers.h"
#include "coordinator/heartbeat_connections.h"
#include "coordinator/hooks.h"
#include "coordinator/job_manager.h"
#include "coordinator/rendezvous.h"
#include "coordinator/waits.h"
#include "coordinator/worker_registry.h"
#include "ringleader/v1/worker_service.pb.h"

namespace ringleader {

// Thread-safe. Judges broken streams only between Start and Stop.
class WatchCalls {
 public:
  struct Options {
    absl::Duration lease = absl::Seconds(3);
    // Off: WatchGeneration answers UNIMPLEMENTED, as an older
    // coordinator's does, and members learn at their next heartbeat.
    bool push_generation_end = true;
  };

  WatchCalls(const CallerChecks& checks, WorkerRegistry& workers,
             const Rendezvous& rendezvous, const JobManager& jobs,
             GenerationWatchers& watchers,
             const HeartbeatConnections& connections, const Clock* clock,
             Options options, WorkerGoneHook gone)
      : checks_(checks),
        workers_(workers),
        rendezvous_(rendezvous),
        jobs_(jobs),
        watchers_(watchers),
        connections_(connections),
        clock_(clock),
        options_(options),
        gone_(std::move(gone)) {}

  // Answers `answer` once, when the named generation ends (at once if it
  // has ended), or with the error that refuses the watch (the request is
  // checked as a heartbeat's: credential, lease, the worker's own job, a
  // formed generation); the Canceller withdraws it (its call went away).
  Canceller WatchGeneration(const Caller& caller,
                            const v1::WatchGenerationRequest& r,
                            GenerationWatchers::Answer answer);
  // The stream of a watch that WatchGeneration accepted went away before
  // the coordinator ended it: the worker's process exited (a kill -9 closes
  // its connections at once; a partition does not, and is left to the
  // lease). The worker is gone as if it had left: its generation ends now
  // (one that trained to its last step goes on without it), or, if it has
  // ended, the next one stops waiting for it, and its place in the job is
  // free for a replacement. A worker that finished its job, one whose
  // heartbeats within its lease did not all come over the stream's
  // connection (none did: a partition, a stopped process; another did: it
  // replaced its channel after a partition, and the old connection's reset
  // is no death), or a coordinator that is stopping, ends nothing.
  void WatchBroken(const Caller& caller, const v1::WatchGenerationRequest& r);

  void Start();
  // Ends every open watch with `status`, so that the server's shutdown does
  // not wait for them (their workers keep their heartbeats); the streams
  // the server then cancels say nothing of their workers.
  void Stop(const absl::Status& status);

 private:
  // OK for a watch of the caller's own worker, in its own job, of a
  // generation that formed.
  absl::Status CheckWatch(const Caller& caller,
                          const v1::WatchGenerationRequest& r) const;
  // Whether a broken stream of `r` over `caller`'s connection is the death
  // of the worker's process.
  bool ProcessExited(const Caller& caller,
                     const v1::WatchGenerationRequest& r) const;

  const CallerChecks& checks_;
  WorkerRegistry& workers_;
  const Rendezvous& rendezvous_;
  const JobManager& jobs_;
  GenerationWatchers& watchers_;
  const HeartbeatConnections& connections_;
  const Clock* const clock_;
  const Options options_;
  const WorkerGoneHook gone_;
  std::atomic<bool> serving_{false};
};

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_WATCH_CALLS_H_
