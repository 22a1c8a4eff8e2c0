#ifndef RINGLEADER_COORDINATOR_SERVER_JOB_WATCH_REACTOR_H_
#define RINGLEADER_COORDINATOR_SERVER_JOB_WATCH_REACTOR_H_

#include <string>

#include "coordinator/user_calls.h"
#include "grpcpp/grpcpp.h"
#include "ringleader/v1/job.pb.h"

namespace ringleader {

// Serves one UserService.WatchJob call: streams the job's snapshots as the
// job manager's watcher hands them over (from any thread), always the
// newest and never more than one queued, and finishes OK after a terminal
// state; NOT_FOUND for an unknown job, CANCELLED when the client goes away.
// Creates itself for the call and deletes itself in OnDone.
grpc::ServerWriteReactor<v1::Job>* NewJobWatchReactor(UserCalls* calls,
                                                      std::string job_id);

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_SERVER_JOB_WATCH_REACTOR_H_
