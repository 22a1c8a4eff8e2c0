#include "coordinator/server/worker_service_impl.h"

#include <utility>

#include "coordinator/server/barrier_stream_reactor.h"
#include "coordinator/server/caller_of.h"
#include "coordinator/server/generation_watch_reactor.h"
#include "coordinator/server/reactor_util.h"

namespace ringleader {
namespace {

using grpc::CallbackServerContext;
using grpc::ServerUnaryReactor;

// Answers a unary call now with what `call` returns for the call's caller:
// an absl::Status, or an absl::StatusOr of the response.
template <typename Call, typename... Response>
ServerUnaryReactor* Answer(CallbackServerContext* ctx, Call&& call,
                           Response*... response) {
  absl::StatusOr<Caller> caller = CallerOf(*ctx);
  if (!caller.ok()) return FinishNow(ctx, caller.status());
  return FinishNow(ctx, call(*caller), response...);
}

// Starts a call that waits: `start` gets the caller and the call's reactor
// and returns what withdraws the wait, which runs if the client goes away.
template <typename Start>
ServerUnaryReactor* Wait(CallbackServerContext* ctx, Start&& start) {
  absl::StatusOr<Caller> caller = CallerOf(*ctx);
  if (!caller.ok()) return FinishNow(ctx, caller.status());
  auto* reactor = new CancellableReactor;
  reactor->SetCanceller(start(*caller, reactor));
  return reactor;
}

}  // namespace

ServerUnaryReactor* WorkerServiceImpl::Register(CallbackServerContext* ctx,
                                                const v1::RegisterRequest* req,
                                                v1::RegisterResponse* resp) {
  return Answer(
      ctx,
      [&](const Caller& c) {
        return coordinator_->worker_calls().Register(c, *req);
      },
      resp);
}

ServerUnaryReactor* WorkerServiceImpl::Heartbeat(
    CallbackServerContext* ctx, const v1::HeartbeatRequest* req,
    v1::HeartbeatResponse* resp) {
  return Answer(
      ctx,
      [&](const Caller& c) {
        return coordinator_->worker_calls().Heartbeat(c, *req);
      },
      resp);
}

ServerUnaryReactor* WorkerServiceImpl::JoinRendezvous(
    CallbackServerContext* ctx, const v1::JoinRendezvousRequest* req,
    v1::JoinRendezvousResponse* resp) {
  return Wait(ctx, [&](const Caller& c, ServerUnaryReactor* reactor) {
    return coordinator_->join_calls().JoinRendezvous(
        c, *req, FinishLater(reactor, resp));
  });
}

ServerUnaryReactor* WorkerServiceImpl::KvSet(CallbackServerContext* ctx,
                                             const v1::KvSetRequest* req,
                                             v1::KvSetResponse*) {
  return Answer(ctx, [&](const Caller& c) {
    return coordinator_->bootstrap_calls().KvSet(c, *req);
  });
}

ServerUnaryReactor* WorkerServiceImpl::KvGet(CallbackServerContext* ctx,
                                             const v1::KvGetRequest* req,
                                             v1::KvGetResponse* resp) {
  return Answer(
      ctx,
      [&](const Caller& c) {
        return coordinator_->bootstrap_calls().KvGet(c, *req);
      },
      resp);
}

ServerUnaryReactor* WorkerServiceImpl::KvWait(CallbackServerContext* ctx,
                                              const v1::KvWaitRequest* req,
                                              v1::KvWaitResponse* resp) {
  return Wait(ctx, [&](const Caller& c, ServerUnaryReactor* reactor) {
    return coordinator_->bootstrap_calls().KvWait(c, *req,
                                                  FinishLater(reactor, resp));
  });
}

ServerUnaryReactor* WorkerServiceImpl::KvAdd(CallbackServerContext* ctx,
                                             const v1::KvAddRequest* req,
                                             v1::KvAddResponse* resp) {
  return Answer(
      ctx,
      [&](const Caller& c) {
        return coordinator_->bootstrap_calls().KvAdd(c, *req);
      },
      resp);
}

ServerUnaryReactor* WorkerServiceImpl::PublishNcclId(
    CallbackServerContext* ctx, const v1::PublishNcclIdRequest* req,
    v1::PublishNcclIdResponse*) {
  return Answer(ctx, [&](const Caller& c) {
    return coordinator_->bootstrap_calls().PublishNcclId(c, *req);
  });
}

ServerUnaryReactor* WorkerServiceImpl::FetchNcclId(
    CallbackServerContext* ctx, const v1::FetchNcclIdRequest* req,
    v1::FetchNcclIdResponse* resp) {
  return Wait(ctx, [&](const Caller& c, ServerUnaryReactor* reactor) {
    return coordinator_->bootstrap_calls().FetchNcclId(
        c, *req, FinishLater(reactor, resp));
  });
}

ServerUnaryReactor* WorkerServiceImpl::Barrier(CallbackServerContext* ctx,
                                               const v1::BarrierRequest* req,
                                               v1::BarrierResponse*) {
  return Wait(ctx, [&](const Caller& c, ServerUnaryReactor* reactor) {
    return coordinator_->bootstrap_calls().Barrier(
        c, *req,
        [reactor](absl::Status s) { reactor->Finish(ToGrpcStatus(s)); });
  });
}

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>*
WorkerServiceImpl::BarrierStream(CallbackServerContext* ctx) {
  return NewBarrierStreamReactor(ctx, &coordinator_->bootstrap_calls(),
                                 barrier_stream_);
}

ServerUnaryReactor* WorkerServiceImpl::GetShard(CallbackServerContext* ctx,
                                                const v1::GetShardRequest* req,
                                                v1::ShardAssignment* resp) {
  return Answer(
      ctx,
      [&](const Caller& c) {
        return coordinator_->training_calls().GetShard(c, *req);
      },
      resp);
}

ServerUnaryReactor* WorkerServiceImpl::ReportProgress(
    CallbackServerContext* ctx, const v1::ReportProgressRequest* req,
    v1::ReportProgressResponse*) {
  return Answer(ctx, [&](const Caller& c) {
    return coordinator_->training_calls().ReportProgress(c, *req);
  });
}

ServerUnaryReactor* WorkerServiceImpl::CommitCheckpoint(
    CallbackServerContext* ctx, const v1::CommitCheckpointRequest* req,
    v1::CommitCheckpointResponse* resp) {
  return Answer(
      ctx,
      [&](const Caller& c) {
        return coordinator_->training_calls().CommitCheckpoint(c, *req);
      },
      resp);
}

ServerUnaryReactor* WorkerServiceImpl::Preempt(CallbackServerContext* ctx,
                                               const v1::PreemptRequest* req,
                                               v1::PreemptResponse* resp) {
  return Wait(ctx, [&](const Caller& c, ServerUnaryReactor* reactor) {
    return coordinator_->preempt_calls().Preempt(c, *req,
                                                 FinishLater(reactor, resp));
  });
}

ServerUnaryReactor* WorkerServiceImpl::Leave(CallbackServerContext* ctx,
                                             const v1::LeaveRequest* req,
                                             v1::LeaveResponse*) {
  return Answer(ctx, [&](const Caller& c) {
    return coordinator_->worker_calls().Leave(c, *req);
  });
}

ServerUnaryReactor* WorkerServiceImpl::AppendLogs(
    CallbackServerContext* ctx, const v1::AppendLogsRequest* req,
    v1::AppendLogsResponse* resp) {
  return Answer(
      ctx,
      [&](const Caller& c) {
        return coordinator_->log_calls().AppendLogs(c, *req);
      },
      resp);
}

grpc::ServerWriteReactor<v1::GenerationEvent>*
WorkerServiceImpl::WatchGeneration(CallbackServerContext* ctx,
                                   const v1::WatchGenerationRequest* req) {
  return NewGenerationWatchReactor(ctx, &coordinator_->watch_calls(), *req);
}

}  // namespace ringleader
