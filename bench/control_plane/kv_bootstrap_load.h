#ifndef RINGLEADER_BENCH_KV_BOOTSTRAP_LOAD_H_
#define RINGLEADER_BENCH_KV_BOOTSTRAP_LOAD_H_

#include <cstdint>
#include <string>

#include "absl/time/time.h"
#include "common/worker_credential.h"
#include "ringleader/v1/worker_service.grpc.pb.h"

namespace ringleader::bench {

// Where the load goes: a live generation's KV space.
struct KvSpace {
  std::string job_id;
  int64_t generation = 0;
  // A member's: the coordinator answers KV calls of members only.
  WorkerCredential credential;
};

// `ranks` simulated ranks bootstrap a collective through the KV store the
// way Gloo's rendezvous does through ours (worker/comm/gloo_kv_store.h):
// every rank waits for the address keys of `peers` other ranks (its
// successors on the ring), all these waits pending at once, while the ranks
// write their own keys (`value_bytes` each), `writers` at a time, over
// `spread`. Gloo's full mesh would wait on all N-1 peers; at 4,096 ranks
// that is 16.7 M key reads and gigabytes of replies, more than this
// benchmark's 2-core machine can drive, and what it measures (pending waits
// while keys are written) is the same.
struct BootstrapOptions {
  int ranks = 256;
  int peers = 16;
  size_t value_bytes = 64;
  absl::Duration spread = absl::Seconds(1);
  std::string prefix = "gloo/0/";
  int writers = 16;  // Threads writing at once.
};

// The adversary's variant: `waits` waits that each name the same
// `keys_per_wait` keys, while all but the last of those keys are written
// (each wait then stays pending; they are cancelled at the end).
struct FloodOptions {
  int waits = 100;
  int keys_per_wait = 4096;
  int writers = 16;
};

struct LoadResult {
  int waits = 0;              // Issued.
  int waits_ok = 0;           // Answered with their values.
  int writes = 0;             // KvSet calls made.
  absl::Time issued;          // The waits were all sent (then a settle).
  absl::Time writes_started;  // First write sent.
  absl::Time writes_ended;    // Last write answered.
  absl::Duration completion;  // First write sent -> last wait answered.
  std::string first_error;    // Empty when every call went as expected.
};

LoadResult RunBootstrap(v1::WorkerService::Stub& stub, const KvSpace& space,
                        const BootstrapOptions& options);
LoadResult RunFlood(v1::WorkerService::Stub& stub, const KvSpace& space,
                    const FloodOptions& options);

}  // namespace ringleader::bench

#endif  // RINGLEADER_BENCH_KV_BOOTSTRAP_LOAD_H_
