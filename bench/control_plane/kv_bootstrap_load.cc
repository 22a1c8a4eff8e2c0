#include "bench/control_plane/kv_bootstrap_load.h"

#include <memory>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "grpcpp/grpcpp.h"

namespace ringleader::bench {
namespace {

constexpr absl::Duration kCallDeadline = absl::Minutes(5);
// After the waits are sent, before the writes: time for the coordinator to
// take them all in, so the writes meet them pending (a benchmark may sleep;
// the issuing burst is measured on its own).
constexpr absl::Duration kSettle = absl::Milliseconds(500);

std::unique_ptr<grpc::ClientContext> Context(const KvSpace& space) {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(absl::ToChronoTime(absl::Now() + kCallDeadline));
  AttachWorkerCredential(ctx.get(), space.credential);
  return ctx;
}

// Pending KvWait calls on gRPC's callback API: no thread per wait.
class Waits {
 public:
  Waits(v1::WorkerService::Stub& stub, const KvSpace& space)
      : stub_(stub), space_(space) {}

  void Start(std::vector<std::string> keys) {
    auto call = std::make_unique<Call>();
    call->ctx = Context(space_);
    call->req.set_job_id(space_.job_id);
    call->req.set_generation(space_.generation);
    for (std::string& k : keys) call->req.add_keys(std::move(k));
    call->req.set_timeout_ms(absl::ToInt64Milliseconds(kCallDeadline));
    Call* c = call.get();
    {
      absl::MutexLock lock(&mu_);
      calls_.push_back(std::move(call));
    }
    stub_.async()->KvWait(c->ctx.get(), &c->req, &c->resp,
                          [this](grpc::Status s) { Done(std::move(s)); });
  }
  void CancelAll() {
    absl::MutexLock lock(&mu_);
    for (auto& c : calls_) c->ctx->TryCancel();
  }
  // Waits until `n` calls ended (bounded); returns how many ended OK.
  int AwaitEnded(size_t n, absl::Duration timeout, std::string* error) {
    absl::MutexLock lock(&mu_);
    auto ended = [this, n]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
      return ok_ + failed_ >= n;
    };
    if (!mu_.AwaitWithTimeout(absl::Condition(&ended), timeout) &&
        error->empty()) {
      *error = absl::StrCat("only ", ok_ + failed_, " of ", n,
                            " waits ended in time");
    }
    if (error->empty() && !first_error_.empty()) *error = first_error_;
    return static_cast<int>(ok_);
  }
  absl::Time last_ok() {
    absl::MutexLock lock(&mu_);
    return last_ok_;
  }

 private:
  struct Call {
    std::unique_ptr<grpc::ClientContext> ctx;
    v1::KvWaitRequest req;
    v1::KvWaitResponse resp;
  };
  void Done(grpc::Status s) {
    absl::MutexLock lock(&mu_);
    if (s.ok()) {
      ++ok_;
      last_ok_ = absl::Now();
    } else {
      ++failed_;
      if (first_error_.empty()) first_error_ = s.error_message();
    }
  }

  v1::WorkerService::Stub& stub_;
  const KvSpace space_;
  absl::Mutex mu_;
  std::vector<std::unique_ptr<Call>> calls_ ABSL_GUARDED_BY(mu_);
  size_t ok_ ABSL_GUARDED_BY(mu_) = 0;
  size_t failed_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Time last_ok_ ABSL_GUARDED_BY(mu_);
  std::string first_error_ ABSL_GUARDED_BY(mu_);
};

// Writes `keys` from `writers` threads at once (ranks write concurrently:
// a store that serializes writes behind one lock holds every gRPC thread),
// the i-th key not before start + i * step.
absl::Status WriteKeys(v1::WorkerService::Stub& stub, const KvSpace& space,
                       const std::vector<std::string>& keys, size_t value_bytes,
                       absl::Duration step, int writers) {
  const absl::Time start = absl::Now();
  absl::Mutex mu;
  absl::Status first;
  std::vector<std::thread> threads;
  for (int t = 0; t < writers; ++t) {
    threads.emplace_back([&, t] {
      v1::KvSetRequest req;
      req.set_job_id(space.job_id);
      req.set_generation(space.generation);
      req.set_value(std::string(value_bytes, 'a'));
      for (size_t i = t; i < keys.size(); i += writers) {
        absl::SleepFor(start + step * static_cast<int64_t>(i) - absl::Now());
        req.set_key(keys[i]);
        v1::KvSetResponse resp;
        grpc::Status s = stub.KvSet(Context(space).get(), req, &resp);
        if (s.ok()) continue;
        absl::MutexLock lock(&mu);
        if (first.ok()) {
          first = absl::InternalError(
              absl::StrCat("KvSet ", keys[i], ": ", s.error_message()));
        }
        return;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  return first;
}

}  // namespace

LoadResult RunBootstrap(v1::WorkerService::Stub& stub, const KvSpace& space,
                        const BootstrapOptions& o) {
  auto key = [&](int rank) { return absl::StrCat(o.prefix, "rank_", rank); };
  Waits waits(stub, space);
  LoadResult r;
  for (int rank = 0; rank < o.ranks; ++rank) {
    std::vector<std::string> keys;
    for (int p = 1; p <= std::min(o.peers, o.ranks - 1); ++p) {
      keys.push_back(key((rank + p) % o.ranks));
    }
    waits.Start(std::move(keys));
  }
  r.waits = o.ranks;
  r.issued = absl::Now();
  absl::SleepFor(kSettle);
  std::vector<std::string> own;
  for (int rank = 0; rank < o.ranks; ++rank) own.push_back(key(rank));
  const absl::Time start = r.writes_started = absl::Now();
  if (absl::Status s = WriteKeys(stub, space, own, o.value_bytes,
                                 o.spread / std::max(1, o.ranks), o.writers);
      !s.ok()) {
    r.first_error = s.ToString();
    waits.CancelAll();
  }
  r.writes = o.ranks;
  r.writes_ended = absl::Now();
  r.waits_ok = waits.AwaitEnded(o.ranks, kCallDeadline, &r.first_error);
  r.completion = waits.last_ok() - start;
  return r;
}

LoadResult RunFlood(v1::WorkerService::Stub& stub, const KvSpace& space,
                    const FloodOptions& o) {
  std::vector<std::string> keys;
  for (int k = 0; k < o.keys_per_wait; ++k) {
    keys.push_back(absl::StrFormat("flood/%05d", k));
  }
  Waits waits(stub, space);
  for (int w = 0; w < o.waits; ++w) waits.Start(keys);
  LoadResult r;
  r.waits = o.waits;
  r.issued = absl::Now();
  absl::SleepFor(kSettle);
  keys.pop_back();  // The last key never comes: every wait stays pending.
  const absl::Time start = r.writes_started = absl::Now();
  if (absl::Status s =
          WriteKeys(stub, space, keys, 8, absl::ZeroDuration(), o.writers);
      !s.ok()) {
    r.first_error = s.ToString();
  }
  r.writes = static_cast<int>(keys.size());
  r.writes_ended = absl::Now();
  waits.CancelAll();
  std::string ignored;  // Cancelled by design.
  waits.AwaitEnded(o.waits, kCallDeadline, &ignored);
  r.completion = absl::Now() - start;
  return r;
}

}  // namespace ringleader::bench
