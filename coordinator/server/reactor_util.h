#ifndef RINGLEADER_COORDINATOR_SERVER_REACTOR_UTIL_H_
#define RINGLEADER_COORDINATOR_SERVER_REACTOR_UTIL_H_

#include <functional>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/grpc_status.h"
#include "grpcpp/grpcpp.h"

namespace ringleader {

// Finishes a unary call with a result computed now.
template <typename T>
grpc::ServerUnaryReactor* FinishNow(grpc::CallbackServerContext* ctx,
                                    absl::StatusOr<T> result, T* response) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  if (result.ok()) *response = *std::move(result);
  reactor->Finish(ToGrpcStatus(result.status()));
  return reactor;
}

inline grpc::ServerUnaryReactor* FinishNow(grpc::CallbackServerContext* ctx,
                                           const absl::Status& status) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

// The reactor of a unary call that waits (a KV wait, a barrier, a join):
// gRPC tells it when its client cancels, disconnects or passes its deadline,
// and it then runs the canceller the handler gave it, which answers the call
// CANCELLED and frees what the wait held. Without it such a wait lived on
// until its own deadline: a rank whose call was cancelled still "waited" at
// its barrier, and abandoned KV waits piled up in the coordinator's memory.
// Deletes itself when gRPC is done with it.
class CancellableReactor final : public grpc::ServerUnaryReactor {
 public:
  CancellableReactor() { Live(+1); }
  // Runs `cancel` at once if the call was already cancelled, else when it
  // is. Null: nothing waits (the call was answered).
  void SetCanceller(std::function<void()> cancel) {
    {
      absl::MutexLock lock(&mu_);
      if (!cancelled_) {
        cancel_ = std::move(cancel);
        return;
      }
    }
    if (cancel) cancel();
  }

  void OnCancel() override {
    std::function<void()> cancel;
    {
      absl::MutexLock lock(&mu_);
      cancelled_ = true;
      cancel.swap(cancel_);
    }
    if (cancel) cancel();
  }

  void OnDone() override {
    Live(-1);
    delete this;
  }

  // Waits until between `lo` and `hi` reactors are alive (or `timeout`;
  // false then): a test sees every abandoned call's reactor deleted.
  static bool AwaitLiveBetween(int64_t lo, int64_t hi, absl::Duration timeout) {
    absl::MutexLock lock(&live_mu_);
    auto within = [lo, hi]() ABSL_SHARED_LOCKS_REQUIRED(live_mu_) {
      return lo <= live_ && live_ <= hi;
    };
    return live_mu_.AwaitWithTimeout(absl::Condition(&within), timeout);
  }

 private:
  static void Live(int64_t delta) {
    absl::MutexLock lock(&live_mu_);
    live_ += delta;
  }

  absl::Mutex mu_;
  std::function<void()> cancel_ ABSL_GUARDED_BY(mu_);
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  static inline absl::Mutex live_mu_;
  static inline int64_t live_ ABSL_GUARDED_BY(live_mu_) = 0;
};

// A callback that finishes the call later (possibly inline); gRPC keeps
// `response` alive until Finish.
template <typename T>
std::function<void(absl::StatusOr<T>)> FinishLater(
    grpc::ServerUnaryReactor* reactor, T* response) {
  return [reactor, response](absl::StatusOr<T> result) {
    if (result.ok()) *response = *std::move(result);
    reactor->Finish(ToGrpcStatus(result.status()));
  };
}

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_SERVER_REACTOR_UTIL_H_
