#ifndef RINGLEADER_WORKER_COMM_GLOO_COMMUNICATOR_H_
#define RINGLEADER_WORKER_COMM_GLOO_COMMUNICATOR_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "worker/comm/communicator.h"
#include "worker/comm/kv_client.h"
#include "worker/comm/op_queue.h"

namespace gloo {
class Context;
}  // namespace gloo

namespace ringleader {

// The CPU communicator: libgloo's TCP transport, its full mesh bootstrapped
// through the coordinator's KV store (keys under "gloo/<comm_index>/").
//
// Collectives run on background threads (OpQueue), so the issuing thread goes
// on while they run. With one lane (the default) they run in issue order on
// one thread. With `lanes` = K > 1 (DdpSpec.buckets_in_flight) there are K
// independent full meshes (gloo contexts: each its own TCP connections to
// every peer; lane k > 0 under "gloo/<comm_index>/lane<k>/"), each with its
// own thread, and collective number `seq` of this communicator runs on lane
// seq % K. Every rank issues the same collectives in the same order, so
// matching collectives meet on the same lane; up to K run at once, which is
// what a latency-bound ring (2(N-1) hops per all-reduce) needs to keep
// several buckets moving. Each collective's result does not depend on the
// others in flight: it is bit-identical to the one-lane result. Collectives
// may complete out of issue order across lanes; a caller that needs one done
// waits for it (Broadcast waits itself).
//
// Gloo has no abort, so Abort() fails every queued operation at once and
// makes those in flight fail by having gloo signal an error on each TCP pair
// of every lane (what gloo itself does when a wait times out): blocked sends
// and receives throw, and the peers see their connections close. Wait() still
// returns only once gloo let go of the buffer, so a receive gloo does not wake
// (one whose bytes are already streaming in) ends at the collective's timeout
// at worst. Gloo exceptions never leave the worker threads; each becomes the
// operation's absl::Status (ABORTED after Abort(), DEADLINE_EXCEEDED for gloo
// timeouts, UNAVAILABLE for other I/O errors, INTERNAL for gloo assertions).
// After a failed collective (on any lane) the meshes are in an unknown state:
// every lane's pairs are failed the same way, so peers learn at once on every
// lane, and later operations fail fast with that first error.
//
// Thread-safe: collectives may be issued from any thread (issue order is the
// order of the calls), and Abort() may be called concurrently with anything
// but destruction. The destructor aborts and joins every lane's thread.
class GlooCommunicator final : public Communicator {
 public:
  struct Options {
    // Local interface name (e.g. "eth0") or an address/hostname to bind;
    // peers connect to what the transport publishes through the KV store.
    std::string interface_or_host = "127.0.0.1";
    // Bounds the bootstrap and every collective.
    absl::Duration timeout = absl::Seconds(60);
    // Communicators of one generation are numbered so their keys differ.
    int comm_index = 0;
    // Collectives in flight at once (DdpSpec.buckets_in_flight): one full
    // mesh and one thread each. At least 1; every rank must use the same.
    int lanes = 1;
  };

  // Blocks until all `world_size` ranks connected (or `timeout`). `kv` is
  // used only during Create. ABORTED when the generation ended meanwhile.
  static absl::StatusOr<std::unique_ptr<GlooCommunicator>> Create(
      KvClient* kv, int rank, int world_size, Options options);
  ~GlooCommunicator() override;

  int rank() const override { return rank_; }
  int world_size() const override { return world_size_; }
  std::unique_ptr<Work> AllReduceSumAsync(void* data, size_t count,
                                          DataType type) override;
  // `on_done` runs on the lane's thread as the collective finishes (or on
  // the caller's / Abort()'s thread when it never ran).
  std::unique_ptr<Work> AllReduceSumAsyncThen(
      void* data, size_t count, DataType type,
      std::function<void()> on_done) override;
  // Numbered with the all-reduces (same order on every rank) and waited.
  absl::Status Broadcast(void* data, size_t bytes, int root) override;
  std::unique_ptr<Work> BroadcastAsync(void* data, size_t bytes,
                                       int root) override;
  void Abort() override;

 private:
  GlooCommunicator(std::vector<std::shared_ptr<::gloo::Context>> contexts,
                   int rank, int world_size, Options options);
  // Makes every blocked send/recv on this rank's pairs, on every lane,
  // throw, and closes the connections. Safe from any thread.
  void FailPairs() noexcept;
  // The same for one lane's mesh.
  void FailPairs(::gloo::Context& context) noexcept;

  // One full mesh per lane, indexed by lane.
  const std::vector<std::shared_ptr<::gloo::Context>> contexts_;
  const int rank_;
  const int world_size_;
  const Options options_;
  // Last member: destroyed (aborted and joined) first.
  OpQueue queue_;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_COMM_GLOO_COMMUNICATOR_H_
