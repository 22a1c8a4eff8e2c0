#include "coordinator/server/barrier_stream_reactor.h"

#include <memory>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/grpc_status.h"
#include "coordinator/server/barrier_outbox.h"
#include "coordinator/server/caller_of.h"
#include "grpcpp/support/proto_buffer_reader.h"

namespace ringleader {
namespace {

using Reactor = grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>;

// More arrivals than this in one message end the call: a host's ranks fit
// many times over, and one message must not make the coordinator hold a
// thread for millions of arrivals.
constexpr int kMaxArrivalsPerMessage = 4096;

// What a release echoes of its arrival's strings, at most: a valid name is
// at most 256 bytes and a job id shorter; a longer one fails anyway, and its
// release must still fit in any message the call may send.
constexpr size_t kMaxEchoBytes = 256;

std::string Echo(const std::string& s) {
  return s.size() <= kMaxEchoBytes ? s : s.substr(0, kMaxEchoBytes);
}

// The stream's arrivals still waiting, with what withdraws each: when the
// stream ends they are withdrawn, so the worker's next stream (or a unary
// Barrier) may arrive again instead of finding its rank "already waiting".
class PendingArrivals {
 public:
  // Before the arrival: its answer may come inline.
  uint64_t Add() {
    absl::MutexLock lock(&mu_);
    pending_.emplace(next_, nullptr);
    return next_++;
  }
  // After it: kept only while the arrival still waits.
  void SetCanceller(uint64_t id, Canceller cancel) {
    absl::MutexLock lock(&mu_);
    if (auto it = pending_.find(id); it != pending_.end()) {
      it->second = std::move(cancel);
    }
  }
  void Answered(uint64_t id) {
    absl::MutexLock lock(&mu_);
    pending_.erase(id);
  }
  void CancelAll() {
    absl::flat_hash_map<uint64_t, Canceller> pending;
    {
      absl::MutexLock lock(&mu_);
      pending.swap(pending_);
    }
    for (auto& [id, cancel] : pending) {
      if (cancel) cancel();
    }
  }

 private:
  absl::Mutex mu_;
  absl::flat_hash_map<uint64_t, Canceller> pending_ ABSL_GUARDED_BY(mu_);
  uint64_t next_ ABSL_GUARDED_BY(mu_) = 1;
};

class BarrierStreamReactor final : public Reactor {
 public:
  BarrierStreamReactor(grpc::CallbackServerContext* ctx, BootstrapCalls* calls,
                       BarrierOutbox::Limits limits)
      : ctx_(ctx),
        calls_(calls),
        sink_(this),
        outbox_(std::make_shared<BarrierOutbox>(&sink_, limits)) {
    absl::StatusOr<Caller> caller = CallerOf(*ctx);
    if (!caller.ok()) {
      outbox_->ReadsDone(ToGrpcStatus(caller.status()));
      return;
    }
    caller_ = *std::move(caller);
    StartRead(&bytes_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {
      outbox_->ReadsDone(ctx_->IsCancelled() ? grpc::Status::CANCELLED
                                             : grpc::Status::OK);
      return;
    }
    v1::BarrierArrivals arrivals;
    if (!grpc::SerializationTraits<v1::BarrierArrivals>::Deserialize(&bytes_,
                                                                     &arrivals)
             .ok()) {
      // Nothing more is read from a stream that went wrong; what its good
      // arrivals are owed is dropped with it.
      outbox_->ReadsDone(grpc::Status(
          grpc::StatusCode::INVALID_ARGUMENT,
          "/ringleader.v1.WorkerService/BarrierStream: a message does not "
          "parse as BarrierArrivals (corrupt bytes, or a string field that "
          "is not UTF-8)"));
      return;
    }
    if (arrivals.arrivals_size() > kMaxArrivalsPerMessage) {
      outbox_->ReadsDone(grpc::Status(
          grpc::StatusCode::INVALID_ARGUMENT,
          absl::StrCat("/ringleader.v1.WorkerService/BarrierStream: ",
                       arrivals.arrivals_size(),
                       " arrivals in one message; "
                       "at most ",
                       kMaxArrivalsPerMessage)));
      return;
    }
    // The workers this stream speaks for from now on.
    for (const v1::WorkerCredential& c : arrivals.credentials()) {
      if (absl::Status s = caller_.Add(c.worker_id(), c.worker_token());
          !s.ok()) {
        outbox_->ReadsDone(ToGrpcStatus(s));
        return;
      }
    }
    for (const v1::BarrierRequest& request : arrivals.arrivals()) {
      // False once the call is ending: nothing more is read.
      if (!outbox_->ArrivalStarted()) return;
      // The callback may run inline (a bad arrival, or the arrival that
      // completes a round) or on the thread of another stream's arrival that
      // completes the round, or a timer's.
      const uint64_t id = pending_->Add();
      Canceller cancel = calls_->Barrier(
          caller_, request,
          [outbox = outbox_, pending = pending_, id,
           job_id = Echo(request.job_id()), generation = request.generation(),
           rank = request.rank(), name = Echo(request.name())](absl::Status s) {
            pending->Answered(id);
            v1::BarrierRelease release;
            release.set_job_id(job_id);
            release.set_generation(generation);
            release.set_rank(rank);
            release.set_name(name);
            release.set_code(static_cast<int32_t>(s.code()));
            release.set_message(Echo(std::string(s.message())));
            outbox->Post(std::move(release));
          });
      pending_->SetCanceller(id, std::move(cancel));
    }
    StartRead(&bytes_);
  }

  void OnWriteDone(bool ok) override { outbox_->WriteDone(ok); }

  void OnDone() override {
    outbox_->Close();
    pending_->CancelAll();  // Their answers go to the closed outbox.
    delete this;
  }

 private:
  // The outbox's view of this reactor.
  class Sink final : public BarrierOutbox::Stream {
   public:
    explicit Sink(Reactor* reactor) : reactor_(reactor) {}
    void StartWrite(const grpc::ByteBuffer* bytes) override {
      reactor_->StartWrite(bytes);
    }
    void Finish(grpc::Status status) override {
      reactor_->Finish(std::move(status));
    }

   private:
    Reactor* const reactor_;
  };

  grpc::CallbackServerContext* const ctx_;
  BootstrapCalls* const calls_;
  Sink sink_;
  const std::shared_ptr<BarrierOutbox> outbox_;
  const std::shared_ptr<PendingArrivals> pending_ =
      std::make_shared<PendingArrivals>();
  grpc::ByteBuffer bytes_;  // The message being read.
  // Read and grown by OnReadDone only (one read at a time).
  Caller caller_;
};

}  // namespace

Reactor* NewBarrierStreamReactor(grpc::CallbackServerContext* ctx,
                                 BootstrapCalls* calls,
                                 BarrierOutbox::Limits limits) {
  return new BarrierStreamReactor(ctx, calls, limits);
}

}  // namespace ringleader
