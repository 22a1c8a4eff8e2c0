#ifndef RINGLEADER_COORDINATOR_SERVER_BARRIER_STREAM_REACTOR_H_
#define RINGLEADER_COORDINATOR_SERVER_BARRIER_STREAM_REACTOR_H_

#include <memory>

#include "coordinator/bootstrap_calls.h"
#include "coordinator/server/barrier_outbox.h"
#include "grpcpp/grpcpp.h"
#include "ringleader/v1/worker_service.grpc.pb.h"

namespace ringleader {

// Serves one WorkerService.BarrierStream call (raw bytes: it parses each
// BarrierArrivals itself): every arrival read is handed to
// BootstrapCalls::Barrier, and its outcome is written back in a BarrierReleases
// when the coordinator calls back (from any thread, possibly long after,
// possibly after the stream is gone: the outcome is then dropped). Outcomes
// that come while a write is in flight are coalesced into the next message,
// so the ranks of one round that share a stream cost about one write, not one
// each. Reading goes on while arrivals wait, so one stream can hold arrivals
// of several ranks at several barriers.
//
// The call ends OK once the client has half-closed and every arrival it made
// has been answered; INVALID_ARGUMENT at the first message that is no
// BarrierArrivals or carries more than 4096 arrivals (one arrival with a
// string that is not UTF-8 thus ends the stream for every rank on it);
// RESOURCE_EXHAUSTED when more than limits.max_outstanding of its arrivals
// would wait at once; CANCELLED if the client goes away. Pending arrivals of a
// stream that ended stay at their barriers until released or timed out, as a
// cancelled Barrier call's do.
//
// Creates itself for the call and deletes itself in OnDone.
grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>*
NewBarrierStreamReactor(grpc::CallbackServerContext* ctx, BootstrapCalls* calls,
                        BarrierOutbox::Limits limits);

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_SERVER_BARRIER_STREAM_REACTOR_H_
