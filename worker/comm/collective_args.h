#ifndef RINGLEADER_WORKER_COMM_COLLECTIVE_ARGS_H_
#define RINGLEADER_WORKER_COMM_COLLECTIVE_ARGS_H_

#include <cstddef>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "worker/comm/kv_client.h"

namespace ringleader {

// The checks every communicator backend makes the same way, so their
// callers get the same codes and messages whichever backend runs.

// Create's arguments: a KV client and a rank inside the world.
inline absl::Status CheckMembership(const KvClient* kv, int rank,
                                    int world_size) {
  if (kv == nullptr) return absl::InvalidArgumentError("no kv client");
  if (world_size < 1 || rank < 0 || rank >= world_size) {
    return absl::InvalidArgumentError(
        absl::StrCat("rank ", rank, " of world size ", world_size));
  }
  return absl::OkStatus();
}

// An all-reduce decided without communicating (empty: OK; a null buffer:
// INVALID_ARGUMENT), or nullopt when it has to run.
inline std::optional<absl::Status> AllReduceDecidedLocally(const void* data,
                                                           size_t count) {
  if (count == 0) return absl::OkStatus();
  if (data == nullptr) {
    return absl::InvalidArgumentError("all-reduce of a null buffer");
  }
  return std::nullopt;
}

// The same for a broadcast (a root outside the world is INVALID_ARGUMENT).
inline std::optional<absl::Status> BroadcastDecidedLocally(const void* data,
                                                           size_t bytes,
                                                           int root,
                                                           int world_size) {
  if (root < 0 || root >= world_size) {
    return absl::InvalidArgumentError(
        absl::StrCat("broadcast root ", root, " of world size ", world_size));
  }
  if (bytes == 0) return absl::OkStatus();
  if (data == nullptr) {
    return absl::InvalidArgumentError("broadcast of a null buffer");
  }
  return std::nullopt;
}

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_COMM_COLLECTIVE_ARGS_H_
