#include "coordinator/server/generation_watch_reactor.h"

#include <memory>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/grpc_status.h"
#include "coordinator/server/caller_of.h"

namespace ringleader {
namespace {

using Reactor = grpc::ServerWriteReactor<v1::GenerationEvent>;

class GenerationWatchReactor final : public Reactor {
 public:
  GenerationWatchReactor(grpc::CallbackServerContext* ctx, WatchCalls* calls,
                         const v1::WatchGenerationRequest& request)
      : calls_(calls), request_(request), turn_(std::make_shared<Turn>(this)) {
    absl::StatusOr<Caller> caller = CallerOf(*ctx);
    if (!caller.ok()) {
      turn_->Answer(caller.status());
      return;
    }
    caller_ = *caller;
    // The answer may come inline, or on another thread before this
    // returns: gRPC holds operations started before the call is bound.
    cancel_ = calls->WatchGeneration(
        *caller, request,
        [turn = turn_](absl::StatusOr<v1::GenerationEvent> event) {
          turn->Answer(std::move(event));
        });
  }

  void OnCancel() override {
    if (cancel_) {
      // An accepted watch is only cancelled by its worker once its
      // generation ended (the coordinator answered it first) or the worker
      // finished: otherwise the process went away. Judged before the watch
      // is withdrawn, so a watch gone means its verdict is in.
      calls_->WatchBroken(caller_, request_);
      cancel_();
    }
    turn_->Answer(absl::CancelledError("the client went away"));
  }

  void OnDone() override {
    if (cancel_) cancel_();  // Frees the watch if nothing answered it.
    turn_->Close();
    delete this;
  }

 private:
  // Who writes the call's one answer: the first Answer takes the turn and
  // starts the write (or the finish) off the lock. The reactor lives until
  // OnDone, which can only follow that Finish; answers that come later
  // (the watch ended as the call was cancelled) are dropped.
  class Turn {
   public:
    explicit Turn(GenerationWatchReactor* reactor) : reactor_(reactor) {}

    void Answer(absl::StatusOr<v1::GenerationEvent> answer) {
      {
        absl::MutexLock lock(&mu_);
        if (taken_) return;
        taken_ = true;
      }
      if (answer.ok()) {
        reactor_->event_ = *std::move(answer);
        reactor_->StartWriteAndFinish(&reactor_->event_, grpc::WriteOptions(),
                                      grpc::Status::OK);
      } else {
        reactor_->Finish(ToGrpcStatus(answer.status()));
      }
    }

    void Close() {
      absl::MutexLock lock(&mu_);
      taken_ = true;
    }

   private:
    GenerationWatchReactor* const reactor_;
    absl::Mutex mu_;
    bool taken_ ABSL_GUARDED_BY(mu_) = false;
  };

  WatchCalls* const calls_;
  const v1::WatchGenerationRequest request_;
  Caller caller_;  // Set in the constructor, before any reaction.
  const std::shared_ptr<Turn> turn_;
  // Set in the constructor, before any reaction.
  Canceller cancel_;
  v1::GenerationEvent event_;  // Written by the turn's holder only.
};

}  // namespace

Reactor* NewGenerationWatchReactor(grpc::CallbackServerContext* ctx,
                                   WatchCalls* calls,
                                   const v1::WatchGenerationRequest& request) {
  return new GenerationWatchReactor(ctx, calls, request);
}

}  // namespace ringleader
