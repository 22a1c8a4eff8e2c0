#ifndef RINGLEADER_COORDINATOR_BOOTSTRAP_CALLS_H_
#define RINGLEADER_COORDINATOR_BOOTSTRAP_CALLS_H_

// The calls a generation's ranks make to set up their communicators: the
// generation's key-value store (Gloo's rendezvous), the NCCL unique id that
// rank 0 publishes and the others fetch (through the same store, keyed by a
// communicator index so that two communicators never collide, as c10d does),
// and named barriers. Each is checked against its caller first (KV: a member
// of the generation; NCCL id and barriers: the worker holding the rank), so
// a generation that ended answers ABORTED whoever asks.

#include <functional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/clock.h"
#include "coordinator/barrier_manager.h"
#include "coordinator/caller.h"
#include "coordinator/caller_checks.h"
#include "coordinator/generation_key.h"
#include "coordinator/kv_store.h"
#include "coordinator/rendezvous.h"
#include "coordinator/waits.h"
#include "ringleader/v1/worker_service.pb.h"

namespace ringleader {

// Holds no state of its own (the KV store and the barriers do). The waits
// take a callback and return their Canceller. Thread-safe.
class BootstrapCalls {
 public:
  BootstrapCalls(const CallerChecks& checks, const Rendezvous& rendezvous,
                 KvStore& kv, BarrierManager& barriers, const Clock* clock,
                 WaitLimits limits)
      : checks_(checks),
        rendezvous_(rendezvous),
        kv_(kv),
        barriers_(barriers),
        clock_(clock),
        limits_(limits) {}

  // Keys under "__ringleader/" are the coordinator's (PERMISSION_DENIED): a
  // client that wrote one could hand the job's ranks an NCCL id of its
  // choosing.
  absl::Status KvSet(const Caller& caller, const v1::KvSetRequest& r);
  absl::StatusOr<v1::KvGetResponse> KvGet(const Caller& caller,
                                          const v1::KvGetRequest& r);
  // At most 4096 keys.
  Canceller KvWait(const Caller& caller, const v1::KvWaitRequest& r,
                   Reply<v1::KvWaitResponse> done);
  absl::StatusOr<v1::KvAddResponse> KvAdd(const Caller& caller,
                                          const v1::KvAddRequest& r);
  // Rank 0 only, 128 bytes, once per communicator (ALREADY_EXISTS after).
  absl::Status PublishNcclId(const Caller& caller,
                             const v1::PublishNcclIdRequest& r);
  Canceller FetchNcclId(const Caller& caller, const v1::FetchNcclIdRequest& r,
                        Reply<v1::FetchNcclIdResponse> done);
  Canceller Barrier(const Caller& caller, const v1::BarrierRequest& r,
                    std::function<void(absl::Status)> done);

 private:
  Canceller CancelKvWait(const GenerationKey& gen, KvStore::WaitId id);

  const CallerChecks& checks_;
  const Rendezvous& rendezvous_;
  KvStore& kv_;
  BarrierManager& barriers_;
  const Clock* const clock_;
  const WaitLimits limits_;
};

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_BOOTSTRAP_CALLS_H_
