#ifndef RINGLEADER_WORKER_COMM_SHM_COMMUNICATOR_H_
#define RINGLEADER_WORKER_COMM_SHM_COMMUNICATOR_H_

#include <atomic>
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

namespace ringleader {

// What decides whether ranks can share memory: the same kernel boot, the
// same /dev/shm, the same IPC namespace and the same user. Ranks with equal
// keys are on one host (and in containers that share /dev/shm).
std::string SharedMemoryHostKey();

// Whether every rank of the generation has this rank's SharedMemoryHostKey:
// each publishes its key through the KV store and reads all the others', so
// every rank reaches the same answer.
absl::StatusOr<bool> AllRanksShareMemory(KvClient* kv, int rank, int world_size,
                                         absl::Duration timeout,
                                         int comm_index = 0);

// The communicator for ranks that share one host's memory, what NCCL's SHM
// transport is to GPUs: instead of a ring of TCP loopback sends (every byte
// copied through the kernel twice per hop), every rank copies its chunk into
// a shared segment, reduces its 1/n slice of all ranks' chunks in place, and
// copies the n reduced slices out. Per chunk that is 3 memory passes and two
// synchronizations on shared counters; no system call unless a rank waits.
//
// Segment: a header, one counter per rank, and two sets of per-rank slots
// (chunk g uses set g % 2, so a chunk can be written while slower ranks still
// copy the previous one out). Rank 0 creates it (POSIX shm, reserved up
// front so a full /dev/shm is an error here, not a SIGBUS later), publishes
// its name through the KV store, and unlinks it once every rank mapped it:
// nothing is left behind in /dev/shm however the processes end.
//
// Waiting spins briefly, then sleeps on a futex. Faults are seen in
// milliseconds, not at the timeout: each rank holds an open-file-description
// lock on its byte of the segment, which the kernel drops when the process
// dies, and waiters check their peers' locks while they wait. A rank that
// fails or aborts raises a flag in the segment that fails every peer's
// collective at once.
//
// Same contract as GlooCommunicator: collectives run in issue order on one
// background thread (OpQueue), Abort() may come from any thread.
class ShmCommunicator final : public Communicator {
 public:
  struct Options {
    // Bounds the bootstrap and each wait inside a collective.
    absl::Duration timeout = absl::Seconds(60);
    // Per-rank slot: larger collectives run in chunks of this many bytes.
    // The segment holds 2 * world_size slots.
    size_t slot_bytes = 1 << 20;
    // Communicators of one generation are numbered so their keys differ.
    int comm_index = 0;
  };

  // Blocks until all `world_size` ranks mapped the segment (or `timeout`).
  // The ranks must share memory (AllRanksShareMemory). `kv` is used only
  // during Create.
  static absl::StatusOr<std::unique_ptr<ShmCommunicator>> Create(
      KvClient* kv, int rank, int world_size, Options options);
  ~ShmCommunicator() override;

  int rank() const override { return rank_; }
  int world_size() const override { return world_size_; }
  std::unique_ptr<Work> AllReduceSumAsync(void* data, size_t count,
                                          DataType type) override;
  std::unique_ptr<Work> AllReduceSumAsyncThen(
      void* data, size_t count, DataType type,
      std::function<void()> on_done) override;
  absl::Status Broadcast(void* data, size_t bytes, int root) override;
  std::unique_ptr<Work> BroadcastAsync(void* data, size_t bytes,
                                       int root) override;
  void Abort() override;

  struct Segment;  // The shared layout (shm_communicator.cc).

 private:
  // The mapped segment and its descriptor (which holds this rank's lock),
  // released after the queue's thread stopped.
  struct Mapping {
    int fd = -1;
    void* base = nullptr;
    size_t bytes = 0;
    ~Mapping();
  };
  ShmCommunicator(std::unique_ptr<Mapping> mapping, int rank, int world_size,
                  Options options);
  // Waits for every rank's attach (no liveness check: a rank that has not
  // attached yet holds no lock).
  absl::Status WaitAttached();
  // Publishes this rank's next phase and waits until every rank reached it.
  absl::Status Step();
  absl::Status WaitAll(uint32_t phase, bool check_peers = true);
  // Raises the segment's failure flag and wakes every waiter.
  void FailPeers() noexcept;
  absl::Status AllReduceOnQueue(void* data, size_t count, DataType type);
  absl::Status BroadcastOnQueue(void* data, size_t bytes, int root);
  // Sums elements [lo, hi) of every rank's slot of the current chunk into
  // this rank's slot.
  // Sums slice [lo, hi) of the current chunk over the ranks (this rank's
  // from `own`, its data; the others' from their slots) into this rank's
  // slot, for the others to copy, and into `own`.
  void ReduceSlice(size_t lo, size_t hi, DataType type, char* own);
  // The first dead peer's rank, or -1.
  int DeadPeer() const;
  char* Slot(uint64_t chunk, int rank) const;

  const std::unique_ptr<Mapping> mapping_;
  Segment* const seg_;
  const int rank_;
  const int world_size_;
  const Options options_;
  std::atomic<bool> aborted_{false};
  // Used on the queue's thread only.
  uint32_t phase_ = 1;  // Every rank is at phase 1 once attached.
  uint64_t chunk_ = 0;
  // One per rank, ReduceSlice's inputs (as 16-bit values for those sums).
  std::vector<const char*> slice_inputs_;
  std::vector<const uint16_t*> slice_halves_;
  // Last member: destroyed (aborted and joined) first.
  OpQueue queue_;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_COMM_SHM_COMMUNICATOR_H_
