#ifndef RINGLEADER_WORKER_COMM_GLOO_COMMUNICATOR_H_
#define RINGLEADER_WORKER_COMM_GLOO_COMMUNICATOR_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

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
// Collectives run in issue order on one background thread (OpQueue), so
// the issuing thread goes on while they run.
//
// Gloo has no abort, so Abort() fails every queued operation at once and
// makes the one in flight fail by having gloo signal an error on each TCP pair
// (what gloo itself does when a wait times out): blocked sends and receives
// throw, and the peers see their connections close. Wait() still returns only
// once gloo let go of the buffer, so a receive gloo does not wake (one whose
// bytes are already streaming in) ends at the collective's timeout at worst.
// Gloo exceptions never leave the worker thread; each becomes the operation's
// absl::Status (ABORTED after Abort(), DEADLINE_EXCEEDED for gloo timeouts,
// UNAVAILABLE for other I/O errors, INTERNAL for gloo assertions). After a
// failed collective the mesh is in an unknown state, so later operations fail
// fast with that first error.
//
// Thread-safe: collectives may be issued from any thread (issue order is the
// order of the calls), and Abort() may be called concurrently with anything
// but destruction. The destructor aborts and joins the worker thread.
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
  // `on_done` runs on the worker thread as the collective finishes (or on
  // the caller's / Abort()'s thread when it never ran).
  std::unique_ptr<Work> AllReduceSumAsyncThen(
      void* data, size_t count, DataType type,
      std::function<void()> on_done) override;
  // Queued behind pending all-reduces (same order on every rank) and waited.
  absl::Status Broadcast(void* data, size_t bytes, int root) override;
  void Abort() override;

 private:
  GlooCommunicator(std::shared_ptr<::gloo::Context> context, int rank,
                   int world_size, Options options);
  // Makes every blocked send/recv on this rank's pairs throw, and closes
  // the connections. Safe from any thread.
  void FailPairs() noexcept;

  const std::shared_ptr<::gloo::Context> context_;
  const int rank_;
  const int world_size_;
  const Options options_;
  // Last member: destroyed (aborted and joined) first.
  OpQueue queue_;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_COMM_GLOO_COMMUNICATOR_H_
