#ifndef RINGLEADER_COORDINATOR_WORKER_REGISTRY_H_
#define RINGLEADER_COORDINATOR_WORKER_REGISTRY_H_

#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "ringleader/v1/state.pb.h"
#include "ringleader/v1/user_service.pb.h"
#include "ringleader/v1/worker_service.pb.h"

namespace ringleader {

// Registered workers and their leases. A heartbeat renews the lease; a worker
// whose lease has run out is dead unless the caller's evidence says
// otherwise (ExpireLeases returns it, and the
// coordinator tells the rendezvous). The registry only keeps the books: it
// never calls other managers. Thread-safe.
class WorkerRegistry {
 public:
  struct Options {
    absl::Duration lease = absl::Seconds(3);
    absl::Duration heartbeat_interval = absl::Seconds(1);
    size_t max_workers = 100'000;
    // How long a removed worker's credential still lets its process
    // register again under the same id (longer than a worker keeps trying
    // to reach the coordinator, 5 min by default).
    absl::Duration keep_removed = absl::Minutes(10);
  };
  // A worker replaced by a newer registration of the same process.
  struct Registration {
    v1::RegisterResponse response;
    std::vector<v1::WorkerInfo> replaced;
    // The id is the one the process had before (Register's `previous`).
    bool kept_id = false;
  };
  // A process's previous credential: its worker id and token.
  using Credential = std::pair<std::string, std::string>;

  WorkerRegistry(Clock* clock, Options options);

  // Gives the worker a new id and token (response.worker_token); its calls
  // must come from `peer_identity` (its client certificate's, "" without).
  // A process that registers again with its previous credential keeps its
  // id (with a new token) when the registry can still verify that
  // credential, for the same hostname, pid, device and identity: the worker
  // is registered (its lease is renewed and its job kept), or was removed
  // within keep_removed (it comes back idle). One process is one worker, so
  // what is said of it before and after is said of the same worker.
  absl::StatusOr<Registration> Register(const v1::RegisterRequest& request,
                                        const std::string& peer_identity = "",
                                        const Credential* previous = nullptr);
  // Takes back a worker known before a coordinator restart (a member of an
  // adopted generation) under its old id and token (`secret`), with a lease
  // of `first_lease` from now: if it does not heartbeat by then it expires
  // like any other.
  absl::Status Restore(const v1::WorkerInfo& info, absl::Duration first_lease,
                       const v1::MemberSecret& secret = {});
  // OK when `worker_id` is registered, `token` is its token (compared in
  // constant time) and the call comes from the identity it registered
  // with; NOT_FOUND for an unknown (or expired) worker, UNAUTHENTICATED
  // otherwise.
  absl::Status Authenticate(const std::string& worker_id,
                            const std::string& token,
                            const std::string& peer_identity) const;
  // Authenticate, but also OK for a worker removed within keep_removed
  // whose credential it was: for answering a call about what the worker
  // did before it was removed.
  absl::Status AuthenticateRecent(const std::string& worker_id,
                                  const std::string& token,
                                  const std::string& peer_identity) const;
  // What Restore takes back: the token's hash and the identity.
  absl::StatusOr<v1::MemberSecret> Secret(const std::string& worker_id) const;
  // Renews the lease; NOT_FOUND for an unknown (or expired) worker.
  absl::StatusOr<v1::WorkerInfo> Heartbeat(const std::string& worker_id);
  // Removes workers whose lease ran out and returns them, except those
  // `keep` holds on to: they stay registered as SILENT (their calls still
  // authenticate) and are asked again at the next sweep. `keep` also learns
  // whether the worker was replaced on its host: another process with the
  // same hostname and device registered after the worker was last heard
  // and holds a lease (so the host reaches the coordinator, and a new
  // daemon took the device). `keep` runs under the registry's lock and must
  // not call back into it.
  using KeepSilent =
      absl::FunctionRef<bool(const v1::WorkerInfo&, bool replaced)>;
  std::vector<v1::WorkerInfo> ExpireLeases(KeepSilent keep);
  std::vector<v1::WorkerInfo> ExpireLeases() {
    return ExpireLeases([](const v1::WorkerInfo&, bool) { return false; });
  }
  absl::StatusOr<v1::WorkerInfo> Remove(const std::string& worker_id);
  absl::StatusOr<v1::WorkerInfo> Get(const std::string& worker_id) const;
  // Marks the worker busy with `job_id`, or idle when it is empty.
  absl::Status SetJob(const std::string& worker_id, const std::string& job_id);
  std::vector<v1::WorkerInfo> List() const;
  const Options& options() const { return options_; }

 private:
  struct Entry {
    v1::WorkerInfo info;
    absl::Time lease_expiry;
    v1::MemberSecret secret;
  };
  // What is kept of a removed worker, so that its process can register
  // again under its id.
  struct Removed {
    std::string process_key;
    v1::MemberSecret secret;
    absl::Time at;
  };
  // Keeps `info` (just removed) in removed_, and forgets the entries past
  // keep_removed or beyond max_workers.
  void RememberRemovedLocked(const v1::WorkerInfo& info,
                             const v1::MemberSecret& secret, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The id `previous` names when it verifies for `request` (see Register),
  // else "".
  std::string VerifiedPreviousLocked(const v1::RegisterRequest& request,
                                     const std::string& peer_identity,
                                     const Credential* previous) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A new entry for `request` under `id`, with a new token in `out`.
  Entry& AddLocked(const std::string& id, const v1::RegisterRequest& request,
                   const std::string& peer_identity, absl::Time now,
                   Registration& out) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // (hostname, pid, device): the process a worker record belongs to.
  static std::string ProcessKey(const v1::WorkerInfo& info);
  static std::string ProcessKey(const v1::RegisterRequest& request);
  // (hostname, device): what a new daemon on the host would take over.
  static std::string DeviceKey(const v1::WorkerInfo& info);
  // See KeepSilent: looks only at the workers of the same host and device.
  bool ReplacedOnHost(const v1::WorkerInfo& info, absl::Time now) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Index(const v1::WorkerInfo& info) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Unindex(const v1::WorkerInfo& info) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Clock* const clock_;
  const Options options_;
  const std::string instance_;  // Keeps ids unique across coordinator restarts.
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Entry> workers_ ABSL_GUARDED_BY(mu_);
  // Worker ids by process key, so a registration finds the records it
  // replaces without scanning every worker (that was O(n^2) for n workers
  // registering).
  absl::flat_hash_map<std::string, absl::flat_hash_set<std::string>> by_process_
      ABSL_GUARDED_BY(mu_);
  // Worker ids by (hostname, device), so that the lease sweep asks whether a
  // silent worker was replaced without scanning every worker for each one.
  absl::flat_hash_map<std::string, absl::flat_hash_set<std::string>> by_device_
      ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, Removed> removed_ ABSL_GUARDED_BY(mu_);
  std::deque<std::pair<absl::Time, std::string>> removed_order_
      ABSL_GUARDED_BY(mu_);
  uint64_t next_seq_ ABSL_GUARDED_BY(mu_) = 1;
};

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_WORKER_REGISTRY_H_
